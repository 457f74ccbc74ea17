#include "isa/Assembler.h"

#include "isa/AsmSyntax.h"
#include "isa/Disassembler.h"
#include "isa/Opcodes.h"
#include "isa/ProgramOrder.h"
#include "support/ReadFile.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

namespace tpu::isa {

namespace {

using namespace asmsyntax;

// "%B12" / "%D7": engine letter and a 16-bit id.
MaybeError parseCmdName(const Token &t, char expect, uint16_t &id) {
  uint64_t v;
  if (auto e = asmsyntax::parseCmdName(t, expect, 16, v)) return e;
  id = uint16_t(v);
  return std::nullopt;
}

template <typename FieldT> struct EngineSyntax;
template <> struct EngineSyntax<TiuField> {
  static bool implicit(TiuField f) {
    return f == TiuField::tsk_typ || f == TiuField::tsk_eu_typ || f == TiuField::cmd_id_tpu ||
           f == TiuField::cmd_id_gdma;
  }
  static constexpr const char *kEngine = "TIU";
};
template <> struct EngineSyntax<GdmaField> {
  static bool implicit(GdmaField f) {
    return f == GdmaField::direction || f == GdmaField::special_func || f == GdmaField::cmd_id ||
           f == GdmaField::eng0_sync_id;
  }
  static constexpr const char *kEngine = "GDMA";
};

// Parses "field=value ... [deps %X<id>]" from tokens[first..] into raw.
template <typename FieldT>
MaybeError parseFields(const std::vector<Token> &toks, size_t first, char depLetter,
                       RawCommand<FieldT> &raw, uint16_t &waitId) {
  std::set<size_t> seen;
  waitId = 0;
  for (size_t i = first; i < toks.size(); ++i) {
    const Token &t = toks[i];
    if (t.text == "deps") {
      if (i + 2 != toks.size())
        return errAt(t.col, "'deps' takes exactly one command name and ends the line");
      return parseCmdName(toks[i + 1], depLetter, waitId);
    }
    KeyValue kv;
    if (auto e = splitKeyValue(t, kv)) return e;
    FieldT f;
    if (!RawCommand<FieldT>::lookup(kv.key, f))
      return errAt(kv.keyCol, "unknown ", EngineSyntax<FieldT>::kEngine, " field '", kv.key, "'");
    if (EngineSyntax<FieldT>::implicit(f))
      return errAt(kv.keyCol, "field ", kv.key, " is given by the mnemonic or the %-names");
    if (!seen.insert(size_t(f)).second) return errAt(kv.keyCol, "field ", kv.key, " given twice");
    uint64_t v;
    if (auto e = parseUint(kv.value, kv.valueCol, v)) return e;
    const FieldInfo &fi = fieldInfo(f);
    if (v > fi.maxValue())
      return errAt(kv.valueCol, "field ", kv.key, " = ", kv.value, " does not fit in ",
                   unsigned(fi.width), " bits");
    raw[f] = v;
  }
  return std::nullopt;
}

std::optional<std::pair<unsigned, unsigned>> parseGdmaMnemonic(std::string_view m) {
  // gdma.<direction>.<special function>
  if (m.substr(0, 5) != "gdma.") return std::nullopt;
  m.remove_prefix(5);
  size_t dot = m.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  std::string_view dir = m.substr(0, dot), fn = m.substr(dot + 1);
  for (unsigned d = 0; d < 4; ++d)
    for (unsigned f = 0; f < 8; ++f)
      if (gdmaDirectionName(GdmaDirection(d)) == dir && gdmaSpecialFuncName(GdmaSpecialFunc(f)) == fn)
        return std::make_pair(d, f);
  return std::nullopt;
}

MaybeError assembleTokens(const std::vector<Token> &toks, AssembledCommand &out) {
  if (toks.size() < 3 || toks[1].text != "=")
    return errAt(toks[0].col, "expected '%B<id> = <mnemonic> ...' or '%D<id> = gdma....'");
  const Token &name = toks[0], &mn = toks[2];
  out.isTiu = name.text.size() > 1 && name.text[1] == 'B';
  uint16_t id, wait;
  if (auto e = parseCmdName(name, out.isTiu ? 'B' : 'D', id)) return e;
  if (out.isTiu) {
    auto op = parseTiuMnemonic(mn.text);
    if (!op) {
      size_t dot = mn.text.find('.');
      bool knownTask = false, knownEu = false;
      if (dot != std::string::npos) {
        for (unsigned t = 0; t < kTiuTaskCount; ++t)
          knownTask |= tiuTaskName(TiuTask(t)) == mn.text.substr(0, dot);
        for (unsigned e = 0; e < kEuOpCount; ++e)
          knownEu |= euOpName(EuOp(e)) == mn.text.substr(dot + 1);
      }
      if (knownTask && knownEu)
        return errAt(mn.col, "'", mn.text.substr(dot + 1), "' is not a valid operation for ",
                     mn.text.substr(0, dot), " (invalid tsk/eu combination)");
      return errAt(mn.col, "unknown TIU mnemonic '", mn.text, "'");
    }
    TiuRaw raw;
    if (auto e = parseFields(toks, 3, 'D', raw, wait)) return e;
    raw[TiuField::tsk_typ] = unsigned(op->first);
    raw[TiuField::tsk_eu_typ] = unsigned(op->second);
    raw[TiuField::cmd_id_tpu] = id;
    raw[TiuField::cmd_id_gdma] = wait;
    auto bytes = raw.encode();
    if (!bytes) return errAt(mn.col, bytes.message());
    out.bytes = *bytes;
  } else {
    auto op = parseGdmaMnemonic(mn.text);
    if (!op) return errAt(mn.col, "unknown GDMA mnemonic '", mn.text, "' (gdma.<s2l|l2s|s2s|l2l>.<function>)");
    GdmaRaw raw;
    if (auto e = parseFields(toks, 3, 'B', raw, wait)) return e;
    raw[GdmaField::direction] = op->first;
    raw[GdmaField::special_func] = op->second;
    raw[GdmaField::cmd_id] = id;
    raw[GdmaField::eng0_sync_id] = wait;
    auto bytes = raw.encode();
    if (!bytes) return errAt(mn.col, bytes.message());
    out.bytes = *bytes;
    if (Status st = checkGdmaCommand(out.bytes); !st) return errAt(mn.col, st.message());
  }
  return std::nullopt;
}

// ------------------------------------------------------------ directives

std::optional<bmodel::DataType> parseDataType(std::string_view s) {
  for (unsigned t = 0; t < bmodel::kDataTypeCount; ++t)
    if (dataTypeName(bmodel::DataType(t)) == s) return bmodel::DataType(t);
  return std::nullopt;
}

std::optional<bmodel::StoreMode> parseStoreMode(std::string_view s) {
  for (auto m : {bmodel::StoreMode::N1, bmodel::StoreMode::N2, bmodel::StoreMode::N4})
    if (storeModeName(m) == s) return m;
  return std::nullopt;
}

class Assembler {
public:
  Assembler(std::string fileName, std::string baseDir, const AssembleOptions &options)
      : file_(std::move(fileName)), baseDir_(std::move(baseDir)), options_(options) {}

  Result<bmodel::Model> run(std::string_view text) {
    size_t lineNo = 0, pos = 0;
    while (pos <= text.size()) {
      size_t nl = text.find('\n', pos);
      std::string_view line = text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      ++lineNo;
      line_ = lineNo;
      std::vector<Token> toks;
      MaybeError e = tokenize(line, toks);
      // A new net ends the previous one, whose checks report their own location.
      if (!e && !toks.empty() && toks[0].text == ".net") TPU_RETURN_IF_ERROR(finishNet());
      if (!e && !toks.empty()) e = statement(toks);
      if (e) return makeError(file_, ":", lineNo, ":", e->col, ": ", e->msg);
      if (nl == std::string_view::npos) break;
      pos = nl + 1;
    }
    TPU_RETURN_IF_ERROR(finishNet());
    return std::move(model_);
  }

private:
  MaybeError statement(const std::vector<Token> &toks) {
    const std::string &head = toks[0].text;
    if (head[0] == '%') return command(toks);
    if (head == ".model") return modelDirective(toks);
    if (head == ".net") return netDirective(toks);
    if (!net_) return errAt(toks[0].col, "'", head, "' before any .net directive");
    if (head == ".ctx") return ctxDirective(toks);
    if (head == ".input" || head == ".output") return tensorDirective(toks);
    if (head == ".coeff") return coeffDirective(toks);
    if (head == ".coeff_data") return coeffData(toks);
    if (head == ".coeff_file") return coeffFile(toks);
    if (head == ".group") {
      if (toks.size() > 1) return errAt(toks[1].col, ".group takes no arguments");
      net_->groups.emplace_back();
      lines_.emplace_back();
      return std::nullopt;
    }
    if (head == ".layer") {
      if (toks.size() > 2) return errAt(toks[2].col, ".layer takes one name");
      layer_ = toks.size() == 2 ? toks[1].text : std::string();
      return std::nullopt;
    }
    return errAt(toks[0].col, "unknown directive '", head, "'");
  }

  MaybeError command(const std::vector<Token> &toks) {
    if (!net_) return errAt(toks[0].col, "command before any .net directive");
    if (net_->groups.empty()) return errAt(toks[0].col, "command before any .group directive");
    AssembledCommand cmd;
    if (auto e = assembleTokens(toks, cmd)) return e;
    bmodel::CmdGroup &g = net_->groups.back();
    auto &queue = cmd.isTiu ? g.tiu : g.gdma;
    if (queue.size() >= bmodel::kMaxCommandsPerQueue)
      return errAt(toks[0].col, "more than ", bmodel::kMaxCommandsPerQueue, " commands in one queue");
    queue.push_back(cmd.bytes);
    (cmd.isTiu ? g.tiuLayer : g.gdmaLayer).push_back(layer_);
    (cmd.isTiu ? lines_.back().tiu : lines_.back().gdma).push_back(line_);
    return std::nullopt;
  }

  // Applies key=value options through a handler returning an error or not.
  template <typename Fn>
  MaybeError options(const std::vector<Token> &toks, size_t first, Fn handle) {
    std::set<std::string> seen;
    for (size_t i = first; i < toks.size(); ++i) {
      KeyValue kv;
      if (auto e = splitKeyValue(toks[i], kv)) return e;
      if (!seen.insert(kv.key).second) return errAt(kv.keyCol, "option ", kv.key, " given twice");
      if (auto e = handle(kv)) return e;
    }
    return std::nullopt;
  }

  MaybeError modelDirective(const std::vector<Token> &toks) {
    return options(toks, 1, [&](const KeyValue &kv) -> MaybeError {
      if (kv.key == "type") model_.type = kv.value;
      else if (kv.key == "version") model_.version = kv.value;
      else if (kv.key == "time") model_.time = kv.value;
      else if (kv.key == "neuron_size") return parseUint(kv.value, kv.valueCol, model_.neuronSize);
      else if (kv.key == "device_num") {
        uint64_t v;
        if (auto e = parseUint(kv.value, kv.valueCol, v)) return e;
        if (v > UINT32_MAX) return errAt(kv.valueCol, "device_num too large");
        model_.deviceNum = uint32_t(v);
      } else
        return errAt(kv.keyCol, "unknown .model option '", kv.key, "'");
      return std::nullopt;
    });
  }

  MaybeError netDirective(const std::vector<Token> &toks) {
    if (toks.size() != 2) return errAt(toks[0].col, ".net takes one name");
    for (const auto &n : model_.nets)
      if (n.name == toks[1].text) return errAt(toks[1].col, "net '", toks[1].text, "' defined twice");
    if (model_.nets.size() >= bmodel::kMaxNets) return errAt(toks[0].col, "too many nets");
    model_.nets.emplace_back();
    net_ = &model_.nets.back();
    net_->name = toks[1].text;
    layer_.clear();
    lines_.clear();
    coeffSize_.reset();
    return std::nullopt;
  }

  MaybeError address(const KeyValue &kv, uint64_t &out) {
    if (auto e = parseUint(kv.value, kv.valueCol, out)) return e;
    if (out >= bmodel::kAddressLimit)
      return errAt(kv.valueCol, kv.key, " ", kv.value, " is beyond the 40-bit address space");
    return std::nullopt;
  }

  MaybeError ctxDirective(const std::vector<Token> &toks) {
    return options(toks, 1, [&](const KeyValue &kv) -> MaybeError {
      if (kv.key == "addr") return address(kv, net_->ctxAddr);
      if (kv.key == "size") return address(kv, net_->ctxSize);
      return errAt(kv.keyCol, "unknown .ctx option '", kv.key, "'");
    });
  }

  // .input NAME DTYPE [d0,d1,...] addr=A [mode=1N|2N|4N] [size=S] [scale=F] [zero_point=Z]
  MaybeError tensorDirective(const std::vector<Token> &toks) {
    if (toks.size() < 4) return errAt(toks[0].col, toks[0].text, " needs a name, a data type and a shape");
    bmodel::Tensor t;
    t.name = toks[1].text;
    auto dt = parseDataType(toks[2].text);
    if (!dt) return errAt(toks[2].col, "unknown data type '", toks[2].text, "'");
    t.dtype = *dt;
    const Token &sh = toks[3];
    if (sh.text.size() < 3 || sh.text.front() != '[' || sh.text.back() != ']')
      return errAt(sh.col, "expected a shape like [1,3,224,224], got '", sh.text, "'");
    size_t start = 1;
    while (start < sh.text.size()) {
      size_t comma = sh.text.find_first_of(",]", start);
      uint64_t d;
      if (auto e = parseUint(std::string_view(sh.text).substr(start, comma - start), sh.col + start, d)) return e;
      t.shape.push_back(d);
      if (t.shape.size() > bmodel::kMaxDims) return errAt(sh.col, "more than ", bmodel::kMaxDims, " dimensions");
      start = comma + 1;
    }
    std::optional<uint64_t> size;
    auto e = options(toks, 4, [&](const KeyValue &kv) -> MaybeError {
      if (kv.key == "addr") return address(kv, t.deviceAddr);
      if (kv.key == "mode") {
        auto m = parseStoreMode(kv.value);
        if (!m) return errAt(kv.valueCol, "unknown store mode '", kv.value, "' (1N, 2N or 4N)");
        t.storeMode = *m;
        return std::nullopt;
      }
      if (kv.key == "size") {
        uint64_t v;
        if (auto e = address(kv, v)) return e;
        size = v;
        return std::nullopt;
      }
      if (kv.key == "scale") {
        char *end = nullptr;
        t.scale = std::strtof(kv.value.c_str(), &end);
        if (kv.value.empty() || *end || !std::isfinite(t.scale))
          return errAt(kv.valueCol, "expected a finite number for scale, got '", kv.value, "'");
        return std::nullopt;
      }
      if (kv.key == "zero_point") {
        char *end = nullptr;
        errno = 0;
        long v = std::strtol(kv.value.c_str(), &end, 0);
        if (kv.value.empty() || *end || errno || v < INT32_MIN || v > INT32_MAX)
          return errAt(kv.valueCol, "expected a 32-bit integer for zero_point, got '", kv.value, "'");
        t.zeroPoint = int32_t(v);
        return std::nullopt;
      }
      return errAt(kv.keyCol, "unknown tensor option '", kv.key, "'");
    });
    if (e) return e;
    unsigned bytes = bmodel::dataTypeBytes(t.dtype);
    if ((t.storeMode == bmodel::StoreMode::N4 && bytes != 1) || (t.storeMode == bmodel::StoreMode::N2 && bytes != 2))
      return errAt(toks[2].col, "store mode ", storeModeName(t.storeMode), " does not fit ", toks[2].text);
    std::optional<uint64_t> need = t.checkedStorageBytes();
    if (!need) return errAt(sh.col, "shape exceeds the 2^40-byte address space");
    t.size = size.value_or(*need);
    if (t.size < *need)
      return errAt(toks[0].col, "size ", t.size, " is smaller than the ", *need, " bytes of the shape");
    if (t.size > bmodel::kAddressLimit - t.deviceAddr)
      return errAt(toks[0].col, "tensor extends beyond the 40-bit address space");
    auto &list = toks[0].text == ".input" ? net_->inputs : net_->outputs;
    for (const auto &o : list)
      if (o.name == t.name) return errAt(toks[1].col, "tensor '", t.name, "' declared twice");
    if (list.size() >= bmodel::kMaxTensorsPerNet) return errAt(toks[0].col, "too many tensors");
    list.push_back(std::move(t));
    return std::nullopt;
  }

  MaybeError coeffDirective(const std::vector<Token> &toks) {
    return options(toks, 1, [&](const KeyValue &kv) -> MaybeError {
      if (kv.key == "addr") return address(kv, net_->coeffAddr);
      if (kv.key == "size") {
        uint64_t v;
        if (auto e = address(kv, v)) return e;
        coeffSize_ = v;
        coeffSizeLine_ = line_;
        return std::nullopt;
      }
      return errAt(kv.keyCol, "unknown .coeff option '", kv.key, "'");
    });
  }

  MaybeError coeffData(const std::vector<Token> &toks) {
    for (size_t i = 1; i < toks.size(); ++i) {
      const std::string &h = toks[i].text;
      if (h.size() % 2) return errAt(toks[i].col, "odd number of hex digits");
      for (size_t j = 0; j < h.size(); j += 2) {
        int hi = hexDigit(h[j]), lo = hexDigit(h[j + 1]);
        if (hi < 0 || lo < 0) return errAt(toks[i].col + j + (hi < 0 ? 0 : 1), "not a hex digit");
        net_->coeff.push_back(uint8_t(hi << 4 | lo));
      }
    }
    return std::nullopt;
  }

  static int hexDigit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  MaybeError coeffFile(const std::vector<Token> &toks) {
    if (toks.size() != 2) return errAt(toks[0].col, ".coeff_file takes one path");
    std::string path = toks[1].text;
    if (!path.empty() && path[0] != '/' && !baseDir_.empty()) path = baseDir_ + "/" + path;
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    if (!f) return errAt(toks[1].col, "cannot open coefficient file ", path);
    std::streamoff len = f.tellg();
    if (len < 0 || uint64_t(len) > UINT32_MAX - net_->coeff.size())
      return errAt(toks[1].col, "coefficient file ", path, " is too large");
    size_t at = net_->coeff.size();
    net_->coeff.resize(at + size_t(len));
    f.seekg(0);
    f.read(reinterpret_cast<char *>(net_->coeff.data() + at), len);
    if (!f) return errAt(toks[1].col, "error reading ", path);
    return std::nullopt;
  }

  // End of a net: declared coefficient size, and every group orderable.
  Status finishNet() {
    if (!net_) return Status::ok();
    if (coeffSize_ && *coeffSize_ != net_->coeff.size())
      return makeError(file_, ":", coeffSizeLine_, ": net '", net_->name, "': .coeff size=", *coeffSize_,
                       " but ", net_->coeff.size(), " coefficient bytes were given");
    for (size_t g = 0; options_.checkOrder && g < net_->groups.size(); ++g) {
      const auto &grp = net_->groups[g];
      auto order = programOrder(grp.tiu, grp.gdma);
      if (!order)
        return makeError(file_, ": net '", net_->name, "' group ", g, " (", lineRange(g), "): ",
                         order.message());
    }
    net_ = nullptr;
    return Status::ok();
  }

  std::string lineRange(size_t g) const {
    size_t lo = SIZE_MAX, hi = 0;
    for (const auto *v : {&lines_[g].tiu, &lines_[g].gdma})
      for (size_t l : *v) lo = std::min(lo, l), hi = std::max(hi, l);
    return lo == SIZE_MAX ? "empty" : "lines " + std::to_string(lo) + "-" + std::to_string(hi);
  }

  struct GroupLines {
    std::vector<size_t> tiu, gdma;
  };

  std::string file_, baseDir_;
  AssembleOptions options_;
  bmodel::Model model_;
  bmodel::Net *net_ = nullptr;
  std::string layer_;
  std::vector<GroupLines> lines_;
  std::optional<uint64_t> coeffSize_;
  size_t coeffSizeLine_ = 0;
  size_t line_ = 0;
};

} // namespace

Result<AssembledCommand> assembleCommand(std::string_view line) {
  std::vector<Token> toks;
  MaybeError e = tokenize(line, toks);
  AssembledCommand out;
  if (!e && toks.empty()) e = errAt(1, "empty command line");
  if (!e) e = assembleTokens(toks, out);
  if (e) return makeError("column ", e->col, ": ", e->msg);
  return out;
}

Result<bmodel::Model> assemble(std::string_view text, const std::string &fileName,
                               const std::string &baseDir, const AssembleOptions &options) {
  return Assembler(fileName, baseDir, options).run(text);
}

Result<bmodel::Model> assembleFile(const std::string &path, const AssembleOptions &options) {
  auto text = readFile(path);
  if (!text) return text.status();
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  return assemble(*text, path, dir, options);
}

} // namespace tpu::isa

#include "isa/Disassembler.h"

#include "isa/AsmSyntax.h"
#include "isa/Opcodes.h"
#include "isa/ProgramOrder.h"

#include <cctype>
#include <cstdio>
#include <sstream>

namespace tpu::isa {

namespace {

// Bits past the last GDMA field (706 of the 1024) must be zero: they carry
// nothing the text could show.
unsigned gdmaUsedBits() {
  const FieldInfo &last = fieldInfo(GdmaField(size_t(GdmaField::Count) - 1));
  return last.offset + last.width;
}

using asmsyntax::formatValue;

// Fields shown by the mnemonic and the %-names, not as name=value.
bool tiuImplicit(TiuField f) {
  return f == TiuField::tsk_typ || f == TiuField::tsk_eu_typ || f == TiuField::cmd_id_tpu ||
         f == TiuField::cmd_id_gdma;
}
bool gdmaImplicit(GdmaField f) {
  return f == GdmaField::direction || f == GdmaField::special_func || f == GdmaField::cmd_id ||
         f == GdmaField::eng0_sync_id;
}

template <typename FieldT, typename Raw, typename Implicit>
void appendFields(std::string &out, const Raw &raw, Implicit implicit) {
  for (size_t i = 0; i < size_t(FieldT::Count); ++i) {
    FieldT f = FieldT(i);
    if (implicit(f) || raw[f] == 0) continue;
    const FieldInfo &fi = fieldInfo(f);
    out += ' ';
    out += fi.name;
    out += '=';
    out += formatValue(fi.name, raw[f]);
  }
}

} // namespace

Status checkTiuCommand(const CommandBytes &cmd) {
  auto raw = TiuRaw::decode(cmd.data());
  uint64_t tsk = raw[TiuField::tsk_typ], eu = raw[TiuField::tsk_eu_typ];
  if (tsk >= kTiuTaskCount) return makeError("unknown tsk_typ ", tsk);
  if (!isValidTiuOp(tsk, eu))
    return makeError("tsk_eu_typ ", eu, " is not valid for tsk_typ ", tsk, " (",
                     tiuTaskName(TiuTask(tsk)), ")");
  return Status::ok();
}

Status checkGdmaCommand(const CommandBytes &cmd) {
  auto raw = GdmaRaw::decode(cmd.data());
  for (GdmaField f : {GdmaField::src_data_format, GdmaField::dst_data_format})
    if (raw[f] >= kGdmaFormatCount) return makeError("unknown ", fieldInfo(f).name, " ", raw[f]);
  for (unsigned bit = gdmaUsedBits(); bit < kCommandBytes * 8; ++bit)
    if (getBits(cmd.data(), bit, 1))
      return makeError("bit ", bit, " is set, past the last GDMA field (bit ", gdmaUsedBits() - 1, ")");
  return Status::ok();
}

Result<std::string> disassembleTiu(const CommandBytes &cmd) {
  TPU_RETURN_IF_ERROR(checkTiuCommand(cmd));
  auto raw = TiuRaw::decode(cmd.data());
  std::string out = "%B" + std::to_string(raw[TiuField::cmd_id_tpu]) + " = " +
                    tiuMnemonic(TiuTask(raw[TiuField::tsk_typ]), EuOp(raw[TiuField::tsk_eu_typ]));
  appendFields<TiuField>(out, raw, tiuImplicit);
  if (raw[TiuField::cmd_id_gdma]) out += " deps %D" + std::to_string(raw[TiuField::cmd_id_gdma]);
  return out;
}

Result<std::string> disassembleGdma(const CommandBytes &cmd) {
  TPU_RETURN_IF_ERROR(checkGdmaCommand(cmd));
  auto raw = GdmaRaw::decode(cmd.data());
  std::string out = "%D" + std::to_string(raw[GdmaField::cmd_id]) + " = gdma." +
                    std::string(gdmaDirectionName(GdmaDirection(raw[GdmaField::direction]))) + "." +
                    std::string(gdmaSpecialFuncName(GdmaSpecialFunc(raw[GdmaField::special_func])));
  appendFields<GdmaField>(out, raw, gdmaImplicit);
  if (raw[GdmaField::eng0_sync_id]) out += " deps %B" + std::to_string(raw[GdmaField::eng0_sync_id]);
  return out;
}

std::string_view dataTypeName(bmodel::DataType t) {
  static constexpr std::string_view kNames[bmodel::kDataTypeCount] = {
      "fp32", "fp16", "int8", "uint8", "int16", "uint16", "int32", "uint32"};
  return unsigned(t) < bmodel::kDataTypeCount ? kNames[unsigned(t)] : "?";
}

std::string_view storeModeName(bmodel::StoreMode m) {
  switch (m) {
  case bmodel::StoreMode::N1: return "1N";
  case bmodel::StoreMode::N2: return "2N";
  case bmodel::StoreMode::N4: return "4N";
  }
  return "?";
}

namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
  return buf;
}

// Strings are quoted when they would not read back as one bare token.
std::string quoted(const std::string &s) {
  bool bare = !s.empty();
  for (char c : s)
    if (!(std::isalnum((unsigned char)c) || c == '_' || c == '.' || c == '/' || c == '-' || c == ':'))
      bare = false;
  if (bare) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') { // a line break would end the statement (TPU-MLIR's time strings end in one)
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

void printTensor(std::ostringstream &os, const char *kind, const bmodel::Tensor &t) {
  os << '.' << kind << ' ' << quoted(t.name) << ' ' << dataTypeName(t.dtype) << " [";
  for (size_t i = 0; i < t.shape.size(); ++i) os << (i ? "," : "") << t.shape[i];
  os << "] addr=" << hex(t.deviceAddr) << " mode=" << storeModeName(t.storeMode);
  if (t.size != t.storageBytes()) os << " size=" << t.size;
  if (t.scale != 1.0f) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", double(t.scale));
    os << " scale=" << buf;
  }
  if (t.zeroPoint) os << " zero_point=" << t.zeroPoint;
  os << '\n';
}

constexpr size_t kCoeffBytesPerLine = 32;

void printCoeffData(std::ostringstream &os, const std::vector<uint8_t> &coeff) {
  static const char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < coeff.size(); i += kCoeffBytesPerLine) {
    os << ".coeff_data ";
    for (size_t j = i; j < std::min(coeff.size(), i + kCoeffBytesPerLine); ++j)
      os << kHex[coeff[j] >> 4] << kHex[coeff[j] & 15];
    os << '\n';
  }
}

} // namespace

Result<std::string> disassembleModel(const bmodel::Model &model, const DisassembleOptions &options) {
  std::ostringstream os;
  os << ".model type=" << quoted(model.type) << " version=" << quoted(model.version)
     << " time=" << quoted(model.time) << " neuron_size=" << model.neuronSize
     << " device_num=" << model.deviceNum << '\n';
  for (size_t netIndex = 0; netIndex < model.nets.size(); ++netIndex) {
    const bmodel::Net &net = model.nets[netIndex];
    os << "\n.net " << quoted(net.name) << '\n';
    os << ".ctx addr=" << hex(net.ctxAddr) << " size=" << net.ctxSize << '\n';
    for (const auto &t : net.inputs) printTensor(os, "input", t);
    for (const auto &t : net.outputs) printTensor(os, "output", t);
    os << ".coeff addr=" << hex(net.coeffAddr) << " size=" << net.coeff.size() << '\n';
    auto file = options.coeffFiles.find(netIndex);
    if (file != options.coeffFiles.end() && !net.coeff.empty())
      os << ".coeff_file " << quoted(file->second) << '\n';
    else
      printCoeffData(os, net.coeff);
    std::string layer; // .layer persists until changed, across groups
    for (size_t g = 0; g < net.groups.size(); ++g) {
      const bmodel::CmdGroup &grp = net.groups[g];
      std::string where = "net '" + net.name + "' group " + std::to_string(g);
      os << ".group  # " << g << ": " << grp.tiu.size() << " TIU, " << grp.gdma.size() << " GDMA\n";
      auto order = programOrder(grp.tiu, grp.gdma);
      if (!order) return Status(order.status()).prefix(where);
      for (const OrderedCommand &oc : *order) {
        bool tiu = oc.engine == Engine::Tiu;
        const auto &layers = tiu ? grp.tiuLayer : grp.gdmaLayer;
        const std::string &cmdLayer = oc.index < layers.size() ? layers[oc.index] : std::string();
        if (cmdLayer != layer) {
          layer = cmdLayer;
          os << ".layer" << (layer.empty() ? "" : " " + quoted(layer)) << '\n';
        }
        auto line = tiu ? disassembleTiu(grp.tiu[oc.index]) : disassembleGdma(grp.gdma[oc.index]);
        if (!line)
          return Status(line.status())
              .prefix(where + ": " + (tiu ? "TIU" : "GDMA") + " command " + std::to_string(oc.index));
        os << *line << '\n';
      }
    }
  }
  return os.str();
}

} // namespace tpu::isa

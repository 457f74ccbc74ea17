#include "isa/bmodel/Bmodel.h"

#include "isa/Disassembler.h"
#include "isa/bmodel/bmodel_generated.h"
#include "isa/chips/Registry.h"
#include "support/ReadFile.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>

namespace tpu::bmodel {

namespace fb = ::bmodel;

std::vector<uint8_t> sha256(const std::vector<uint8_t> &bytes) {
  std::vector<uint8_t> out(32);
  unsigned len = 0;
  EVP_Digest(bytes.data(), bytes.size(), out.data(), &len, EVP_sha256(), nullptr);
  out.resize(len);
  return out;
}

std::string shapeText(const std::vector<uint64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

std::string inputShapesText(const Net &stage) {
  std::string s;
  for (const Tensor &t : stage.inputs) s += (s.empty() ? "" : ", ") + shapeText(t.shape);
  return s.empty() ? "(no inputs)" : s;
}

Status checkStages(const std::vector<const Net *> &stages, const std::vector<std::string> &labels) {
  const Net &first = *stages.front();
  for (size_t i = 1; i < stages.size(); ++i) {
    const Net &stage = *stages[i];
    for (bool input : {true, false}) {
      const char *kind = input ? "input" : "output";
      const std::vector<Tensor> &want = input ? first.inputs : first.outputs;
      const std::vector<Tensor> &have = input ? stage.inputs : stage.outputs;
      if (have.size() != want.size())
        return makeError(labels[i], " has ", have.size(), " ", kind, "(s), ", labels[0], " has ", want.size());
      for (size_t k = 0; k < have.size(); ++k) {
        if (have[k].name != want[k].name)
          return makeError(labels[i], " ", kind, " ", k, " is '", have[k].name, "', ", labels[0], "'s is '",
                           want[k].name, "'");
        if (have[k].dtype != want[k].dtype)
          return makeError(labels[i], " ", kind, " '", have[k].name, "' is ", isa::dataTypeName(have[k].dtype), ", ",
                           labels[0], "'s is ", isa::dataTypeName(want[k].dtype));
      }
    }
    // The runtime picks a stage by its input shapes: they must tell the stages apart.
    for (size_t j = 0; j < i; ++j) {
      bool same = true;
      for (size_t k = 0; same && k < stage.inputs.size(); ++k)
        same = stage.inputs[k].shape == stages[j]->inputs[k].shape;
      if (same) return makeError(labels[j], " and ", labels[i], " take the same input shapes ", inputShapesText(stage));
    }
  }
  return Status::ok();
}

namespace {

constexpr uint32_t kProfileMagic = 0x594C5054; // "TPLY": layer table, docs/bmodel.md
constexpr size_t kBlobAlign = 128;

void putU32(std::vector<uint8_t> &b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(uint8_t(v >> (8 * i)));
}
uint32_t getU32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

// ---------------------------------------------------------------- writing

class BlobWriter {
public:
  fb::Binary add(const uint8_t *data, size_t size) {
    blob_.resize((blob_.size() + kBlobAlign - 1) / kBlobAlign * kBlobAlign);
    fb::Binary b(blob_.size(), size);
    blob_.insert(blob_.end(), data, data + size);
    return b;
  }
  fb::Binary add(const std::vector<isa::CommandBytes> &cmds) {
    return add(cmds.empty() ? nullptr : cmds.front().data(), cmds.size() * isa::kCommandBytes);
  }
  std::vector<uint8_t> &bytes() { return blob_; }

private:
  std::vector<uint8_t> blob_;
};

// Layer names as runs of consecutive commands of one queue with one name.
std::vector<uint8_t> encodeProfile(const Net &net) {
  std::vector<std::string> names;
  std::map<std::string, uint32_t> index;
  struct Run { uint32_t group, engine, first, count, name; };
  std::vector<Run> runs;
  for (size_t g = 0; g < net.groups.size(); ++g) {
    const CmdGroup &grp = net.groups[g];
    for (uint32_t engine = 0; engine < 2; ++engine) {
      const auto &layers = engine == 0 ? grp.tiuLayer : grp.gdmaLayer;
      for (size_t i = 0; i < layers.size(); ++i) {
        if (layers[i].empty()) continue;
        auto [it, fresh] = index.emplace(layers[i], uint32_t(names.size()));
        if (fresh) names.push_back(layers[i]);
        if (!runs.empty() && runs.back().group == g && runs.back().engine == engine &&
            runs.back().name == it->second && runs.back().first + runs.back().count == i)
          ++runs.back().count;
        else
          runs.push_back({uint32_t(g), engine, uint32_t(i), 1, it->second});
      }
    }
  }
  std::vector<uint8_t> out;
  if (runs.empty()) return out;
  putU32(out, kProfileMagic);
  putU32(out, uint32_t(names.size()));
  for (const auto &n : names) {
    putU32(out, uint32_t(n.size()));
    out.insert(out.end(), n.begin(), n.end());
  }
  putU32(out, uint32_t(runs.size()));
  for (const Run &r : runs)
    for (uint32_t v : {r.group, r.engine, r.first, r.count, r.name}) putU32(out, v);
  return out;
}

flatbuffers::Offset<fb::Tensor> writeTensor(flatbuffers::FlatBufferBuilder &b, const Tensor &t) {
  auto name = b.CreateString(t.name);
  auto dims = b.CreateVector(t.shape);
  std::vector<flatbuffers::Offset<fb::Shape>> shapes{fb::CreateShape(b, dims)};
  auto shapeVec = b.CreateVector(shapes);
  fb::TensorBuilder tb(b);
  tb.add_name(name);
  tb.add_data_type(uint32_t(t.dtype));
  tb.add_gmem_stmode(int32_t(t.storeMode));
  tb.add_device_addr(t.deviceAddr);
  tb.add_size(t.size);
  tb.add_shape(shapeVec);
  tb.add_scale(t.scale);
  tb.add_zero_point(t.zeroPoint);
  return tb.Finish();
}

// The file keeps a TPU sub-net's groups inside it and the flat list is
// their concatenation, so TPU sub-nets must cover the net's groups in order.
Status checkSubnets(const Net &net) {
  if (net.subnets.size() > kMaxSubnetsPerNet) return makeError("more than ", kMaxSubnetsPerNet, " sub-nets");
  size_t nextGroup = 0;
  for (size_t i = 0; i < net.subnets.size(); ++i) {
    const Subnet &s = net.subnets[i];
    const std::string where = "sub-net " + std::to_string(i);
    if (s.mode == Subnet::Mode::Cpu) {
      if (s.firstGroup != 0 || s.groupCount != 0) return makeError(where, ": a CPU sub-net has no command groups");
      if (s.cpuOpType > uint32_t(INT32_MAX)) return makeError(where, ": op type ", s.cpuOpType, " beyond int32");
      continue;
    }
    if (s.mode != Subnet::Mode::Tpu) return makeError(where, ": unknown mode ", int32_t(s.mode));
    if (s.cpuOpType != 0 || !s.cpuParam.empty()) return makeError(where, ": a TPU sub-net has no host op");
    if (s.groupCount == 0) return makeError(where, ": a TPU sub-net needs at least one command group");
    if (s.firstGroup != nextGroup)
      return makeError(where, ": groups [", s.firstGroup, ", +", s.groupCount,
                       ") do not follow the previous sub-nets' (expected first group ", nextGroup, ")");
    nextGroup += s.groupCount;
    if (nextGroup > net.groups.size())
      return makeError(where, ": groups [", s.firstGroup, ", +", s.groupCount, ") beyond the net's ",
                       net.groups.size());
  }
  if (!net.subnets.empty() && nextGroup != net.groups.size())
    return makeError("the TPU sub-nets hold ", nextGroup, " of the net's ", net.groups.size(), " command groups");
  return Status::ok();
}

Status checkWritable(const Net &net) {
  for (size_t g = 0; g < net.groups.size(); ++g) {
    const CmdGroup &grp = net.groups[g];
    if (grp.tiu.size() > kMaxCommandsPerQueue || grp.gdma.size() > kMaxCommandsPerQueue)
      return makeError("net '", net.name, "' group ", g, ": more than ", kMaxCommandsPerQueue,
                       " commands in one queue");
    if (grp.tiuLayer.size() != grp.tiu.size() || grp.gdmaLayer.size() != grp.gdma.size())
      return makeError("net '", net.name, "' group ", g,
                       ": layer name lists do not match the command counts");
  }
  Status st = checkSubnets(net);
  return st ? st : st.prefix("net '" + net.name + "'");
}

using TensorVec = flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Tensor>>>;

TensorVec writeTensors(flatbuffers::FlatBufferBuilder &b, const std::vector<Tensor> &list) {
  std::vector<flatbuffers::Offset<fb::Tensor>> out;
  for (const Tensor &t : list) out.push_back(writeTensor(b, t));
  return b.CreateVector(out);
}

// Sub-net i is followed by i + 1 (BMRuntime's ids and next ids); a TPU
// sub-net holds its slice of `groups`, a CPU sub-net its parameter bytes,
// which go into the blob in sub-net order.
flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::SubNet>>>
writeSubnets(flatbuffers::FlatBufferBuilder &b, BlobWriter &blob, const Net &net,
             const std::vector<flatbuffers::Offset<fb::CmdGroup>> &groups) {
  std::vector<flatbuffers::Offset<fb::SubNet>> out;
  for (size_t i = 0; i < net.subnets.size(); ++i) {
    const Subnet &s = net.subnets[i];
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::CmdGroup>>> groupVec;
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::CpuParam>>> paramVec;
    if (s.mode == Subnet::Mode::Tpu) {
      groupVec = b.CreateVector(groups.data() + s.firstGroup, s.groupCount);
    } else {
      fb::Binary param = blob.add(s.cpuParam.data(), s.cpuParam.size());
      std::vector<flatbuffers::Offset<fb::CpuParam>> params{fb::CreateCpuParam(b, int32_t(s.cpuOpType), &param)};
      paramVec = b.CreateVector(params);
    }
    TensorVec ins = writeTensors(b, s.inputs), outs = writeTensors(b, s.outputs);
    flatbuffers::Offset<flatbuffers::Vector<int32_t>> next;
    if (i + 1 < net.subnets.size()) next = b.CreateVector(std::vector<int32_t>{int32_t(i + 1)});
    fb::SubNetBuilder sb(b);
    sb.add_subnet_mode(int32_t(s.mode));
    if (!groupVec.IsNull()) sb.add_cmd_group(groupVec);
    if (!paramVec.IsNull()) sb.add_cpu_param(paramVec);
    sb.add_input_tensor(ins);
    sb.add_output_tensor(outs);
    sb.add_id(int32_t(i));
    if (!next.IsNull()) sb.add_next_subnet_ids(next);
    out.push_back(sb.Finish());
  }
  return b.CreateVector(out);
}

// One NetParameter: tensors, context, coefficients, command groups or
// sub-nets and the layer table (in the blob in that order). With
// `shareCoeff` the stage refers to `coeff` (the previous stage's CoeffMem);
// otherwise its own coefficients are written and `coeff` becomes theirs.
flatbuffers::Offset<fb::NetParameter> writeStage(flatbuffers::FlatBufferBuilder &b, BlobWriter &blob, const Net &net,
                                                 bool shareCoeff, flatbuffers::Offset<fb::CoeffMem> &coeff) {
  std::vector<flatbuffers::Offset<fb::Tensor>> ins, outs;
  for (const Tensor &t : net.inputs) ins.push_back(writeTensor(b, t));
  for (const Tensor &t : net.outputs) outs.push_back(writeTensor(b, t));
  auto inVec = b.CreateVector(ins), outVec = b.CreateVector(outs);

  if (!shareCoeff) {
    fb::Binary coeffBin = blob.add(net.coeff.data(), net.coeff.size());
    auto check = b.CreateVector(sha256(net.coeff));
    coeff = fb::CreateCoeffMem(b, net.coeffAddr, check, &coeffBin);
  }

  std::vector<flatbuffers::Offset<fb::CmdGroup>> groups;
  for (const CmdGroup &g : net.groups) {
    const bool streams = !g.tiuStream.empty() || !g.gdmaStream.empty(); // serialize() checked the chip has them
    fb::Binary tiu = streams ? blob.add(g.tiuStream.data(), g.tiuStream.size()) : blob.add(g.tiu);
    fb::Binary gdma = streams ? blob.add(g.gdmaStream.data(), g.gdmaStream.size()) : blob.add(g.gdma);
    uint32_t tiuCount = streams ? g.tiuStreamCount : uint32_t(g.tiu.size());
    uint32_t gdmaCount = streams ? g.gdmaStreamCount : uint32_t(g.gdma.size());
    groups.push_back(
        fb::CreateCmdGroup(b, tiuCount, gdmaCount, &tiu, &gdma, uint32_t(tiu.size()), uint32_t(gdma.size())));
  }
  // Without sub-nets the groups are the net's own (today's layout, byte
  // for byte); with them each TPU sub-net holds its slice.
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::CmdGroup>>> groupVec;
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::SubNet>>> subnetVec;
  if (net.subnets.empty())
    groupVec = b.CreateVector(groups);
  else
    subnetVec = writeSubnets(b, blob, net, groups);
  std::vector<uint8_t> profile = encodeProfile(net);
  fb::Binary profileBin = blob.add(profile.data(), profile.size());

  fb::NetParameterBuilder pb(b);
  pb.add_input_tensor(inVec);
  pb.add_output_tensor(outVec);
  pb.add_ctx_addr(net.ctxAddr);
  pb.add_ctx_size(net.ctxSize);
  pb.add_coeff_mem(coeff);
  if (!groupVec.IsNull()) pb.add_cmd_group(groupVec);
  if (!subnetVec.IsNull()) pb.add_sub_net(subnetVec);
  if (!profile.empty()) pb.add_net_profile(&profileBin);
  return pb.Finish();
}

// Everything the reader checks across stages, and that the stages of a net
// are consecutive entries (the file holds them in one Net).
Status checkStageRuns(const Model &model, const std::vector<StageRun> &runs) {
  std::map<std::string, size_t> firstEntry;
  for (const StageRun &run : runs) {
    const Net &net = model.nets[run.first];
    auto [seen, fresh] = firstEntry.emplace(net.name, run.first);
    if (!fresh)
      return makeError("net '", net.name, "': entries ", seen->second, " and ", run.first,
                       " of the model are not adjacent (the stages of a net are consecutive entries)");
    if (run.count == 1) continue;
    std::vector<const Net *> stages;
    std::vector<std::string> labels;
    for (size_t i = 0; i < run.count; ++i) {
      stages.push_back(&model.nets[run.first + i]);
      labels.push_back("stage " + std::to_string(i));
    }
    Status st = checkStages(stages, labels);
    if (!st) return st.prefix("net '" + net.name + "'");
  }
  return Status::ok();
}

// The groups hold commands the way the model's chip stores them: 128-byte words or streams. (A chip the
// registry does not know is written as given: tests make such bmodels to see readers refuse them.)
Status checkChipStorage(const Model &model) {
  const isa::ChipInfo *chip = isa::chipByBmodelName(model.chip);
  if (!chip) return Status::ok();
  for (const Net &net : model.nets)
    for (size_t i = 0; i < net.groups.size(); ++i) {
      const CmdGroup &g = net.groups[i];
      const bool words = !g.tiu.empty() || !g.gdma.empty();
      const bool streams = !g.tiuStream.empty() || !g.gdmaStream.empty() || g.tiuStreamCount || g.gdmaStreamCount;
      if (chip->commandWordBytes ? streams : words)
        return makeError("net '", net.name, "' group ", i, ": ", chip->bmodelName, " commands are ",
                         chip->commandWordBytes ? "128-byte words, not streams" : "streams, not 128-byte words");
      for (auto [bytes, count, engine] : {std::tuple{&g.tiuStream, g.tiuStreamCount, isa::Engine::Tiu},
                                          std::tuple{&g.gdmaStream, g.gdmaStreamCount, isa::Engine::Gdma}})
        if (streams) {
          Status st = chip->checkStream(engine, bytes->data(), bytes->size(), count);
          if (!st) return st.prefix("net '" + net.name + "' group " + std::to_string(i));
        }
    }
  return Status::ok();
}

} // namespace

Result<std::vector<uint8_t>> serialize(const Model &model) {
  if (model.nets.size() > kMaxNets) return makeError("more than ", kMaxNets, " nets");
  TPU_RETURN_IF_ERROR(checkChipStorage(model));
  const std::vector<StageRun> runs = stageRuns(model.nets);
  TPU_RETURN_IF_ERROR(checkStageRuns(model, runs));
  flatbuffers::FlatBufferBuilder b;
  BlobWriter blob;
  std::vector<flatbuffers::Offset<fb::Net>> nets;
  for (const StageRun &run : runs) {
    // One NetParameter per stage; a stage with the previous stage's
    // coefficients (address and bytes) shares its CoeffMem, so equal
    // weights are stored once.
    std::vector<flatbuffers::Offset<fb::NetParameter>> params;
    flatbuffers::Offset<fb::CoeffMem> coeff;
    for (size_t stage = run.first; stage < run.first + run.count; ++stage) {
      const Net &net = model.nets[stage];
      TPU_RETURN_IF_ERROR(checkWritable(net));
      const Net *previous = stage == run.first ? nullptr : &model.nets[stage - 1];
      const bool sharesCoeff = previous && previous->coeffAddr == net.coeffAddr && previous->coeff == net.coeff;
      params.push_back(writeStage(b, blob, net, sharesCoeff, coeff));
    }
    auto paramVec = b.CreateVector(params);
    auto name = b.CreateString(model.nets[run.first].name);
    nets.push_back(fb::CreateNet(b, name, 0, 0, paramVec));
  }
  auto netVec = b.CreateVector(nets);
  auto root = fb::CreateModel(b, b.CreateString(model.type), b.CreateString(model.version),
                              b.CreateString(model.time), b.CreateString(model.chip), netVec,
                              model.neuronSize, 0, model.deviceNum);
  b.Finish(root);

  std::vector<uint8_t> &bin = blob.bytes();
  if (b.GetSize() > UINT32_MAX || bin.size() > UINT32_MAX)
    return makeError("bmodel too large for the 32-bit header sizes");
  std::vector<uint8_t> out;
  out.reserve(kHeaderSize + b.GetSize() + bin.size());
  for (uint32_t v : {kMagic, kHeaderSize, uint32_t(b.GetSize()), uint32_t(bin.size())}) putU32(out, v);
  out.resize(kHeaderSize, 0);
  out.insert(out.end(), b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  out.insert(out.end(), bin.begin(), bin.end());
  return out;
}

Status writeFile(const Model &model, const std::string &path) {
  auto bytes = serialize(model);
  if (!bytes) return bytes.status();
  std::ofstream f(path, std::ios::binary);
  if (!f) return makeError("cannot open ", path, " for writing");
  f.write(reinterpret_cast<const char *>(bytes->data()), std::streamsize(bytes->size()));
  if (!f) return makeError("error writing ", path);
  return Status::ok();
}

// ---------------------------------------------------------------- reading

Result<Header> parseHeader(const uint8_t *data, size_t size) {
  if (size < kHeaderSize)
    return makeError("truncated: ", size, " bytes, shorter than the ", kHeaderSize, "-byte header");
  Header h;
  h.magic = getU32(data);
  h.headerSize = getU32(data + 4);
  h.flatbuffersSize = getU32(data + 8);
  h.binarySize = getU32(data + 12);
  if (h.magic != kMagic) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08X", h.magic);
    return makeError("bad magic ", buf, " (expected 0xFF55AAEE): not a bmodel");
  }
  if (h.headerSize != kHeaderSize)
    return makeError("header_size is ", h.headerSize, ", expected ", kHeaderSize);
  uint64_t expected = uint64_t(kHeaderSize) + h.flatbuffersSize + h.binarySize;
  if (expected > size)
    return makeError("truncated: header announces ", expected, " bytes (flatbuffers ",
                     h.flatbuffersSize, ", binary ", h.binarySize, "), file has ", size);
  if (expected < size)
    return makeError("size mismatch: header announces ", expected, " bytes, file has ", size);
  return h;
}

namespace {

class Reader {
public:
  Reader(const uint8_t *blob, uint64_t blobSize, const isa::ChipInfo &chip)
      : blob_(blob), blobSize_(blobSize), chip_(chip) {}

  Status range(const fb::Binary *b, const char *what, uint64_t &start, uint64_t &size) const {
    start = size = 0;
    if (!b) return Status::ok();
    if (b->start() > blobSize_ || b->size() > blobSize_ - b->start())
      return makeError(what, " range [", b->start(), ", +", b->size(),
                       ") lies outside the ", blobSize_, "-byte binary blob");
    start = b->start();
    size = b->size();
    return Status::ok();
  }

  Result<Tensor> tensor(const fb::Tensor *t, size_t i, const char *kind) const {
    std::string where = std::string(kind) + " tensor " + std::to_string(i);
    if (!t->name()) return makeError(where, ": no name");
    Tensor out;
    out.name = t->name()->str();
    where += " '" + out.name + "'";
    if (t->data_type() >= kDataTypeCount) return makeError(where, ": unknown data_type ", t->data_type());
    out.dtype = DataType(t->data_type());
    if (t->gmem_stmode() < 0 || t->gmem_stmode() > 2)
      return makeError(where, ": unknown gmem_stmode ", t->gmem_stmode());
    out.storeMode = StoreMode(t->gmem_stmode());
    if ((out.storeMode == StoreMode::N4 && dataTypeBytes(out.dtype) != 1) ||
        (out.storeMode == StoreMode::N2 && dataTypeBytes(out.dtype) != 2))
      return makeError(where, ": store mode does not fit a ", dataTypeBytes(out.dtype), "-byte type");
    if (!t->shape() || t->shape()->size() == 0 || !t->shape()->Get(0) || !t->shape()->Get(0)->dim())
      return makeError(where, ": no shape");
    const auto *dims = t->shape()->Get(0)->dim();
    if (dims->size() > kMaxDims) // 0 dims: a scalar
      return makeError(where, ": ", dims->size(), " dimensions (0 to ", kMaxDims, " allowed)");
    // The verifier only checks 4-byte alignment of vectors; FlatBuffers writers
    // align 8-byte elements, so anything else is corrupt (and a misaligned load).
    if (dims->size() && reinterpret_cast<uintptr_t>(dims->Data()) % alignof(uint64_t) != 0)
      return makeError(where, ": misaligned shape vector (corrupted FlatBuffers part)");
    out.shape.assign(dims->begin(), dims->end()); // a dim of 0: an empty tensor (of a host op)
    std::optional<uint64_t> need = out.checkedStorageBytes();
    if (!need) return makeError(where, ": shape exceeds the 2^40-byte address space");
    out.deviceAddr = t->device_addr();
    out.size = t->size();
    if (out.size < *need)
      return makeError(where, ": size ", out.size, " smaller than the ", *need, " bytes its shape needs");
    if (out.deviceAddr >= kAddressLimit || out.size > kAddressLimit - out.deviceAddr)
      return makeError(where, ": device range beyond the 40-bit address space");
    out.scale = t->scale();
    out.zeroPoint = t->zero_point();
    return out;
  }

  Status tensors(const flatbuffers::Vector<flatbuffers::Offset<fb::Tensor>> *v, const char *kind,
                 std::vector<Tensor> &out) const {
    if (!v) return Status::ok();
    if (v->size() > kMaxTensorsPerNet)
      return makeError(v->size(), " ", kind, " tensors (limit ", kMaxTensorsPerNet, ")");
    for (size_t i = 0; i < v->size(); ++i) {
      auto t = tensor(v->Get(i), i, kind);
      if (!t) return t.status();
      out.push_back(t.take());
    }
    return Status::ok();
  }

  // One engine's queue of a group: 128-byte words, each checked, or, for a chip whose commands vary in
  // length, the stream as stored, checked by the chip's codec.
  Status queue(const fb::Binary *bin, uint32_t num, uint32_t cmdBytes, bool tiu, CmdGroup &grp) const {
    const char *engine = tiu ? "TIU" : "GDMA";
    if (num > kMaxCommandsPerQueue)
      return makeError(num, " ", engine, " commands (limit ", kMaxCommandsPerQueue, ")");
    uint64_t start, size;
    TPU_RETURN_IF_ERROR(range(bin, tiu ? "binary_bdc" : "binary_gdma", start, size));
    const bool words = chip_.commandWordBytes != 0;
    if (words && size % isa::kCommandBytes != 0)
      return makeError(engine, " binary of ", size, " bytes is not a multiple of 128");
    if (words && size != uint64_t(num) * isa::kCommandBytes)
      return makeError(engine, " count ", num, " does not match its ", size, "-byte binary");
    if (cmdBytes != 0 && cmdBytes != size)
      return makeError(engine, " cmd_byte ", cmdBytes, " does not match its ", size, "-byte binary");
    if (!words) {
      Status st = chip_.checkStream(tiu ? isa::Engine::Tiu : isa::Engine::Gdma, blob_ + start, size, num);
      if (!st) return st.prefix(std::string(engine) + " commands");
      (tiu ? grp.tiuStream : grp.gdmaStream).assign(blob_ + start, blob_ + start + size);
      (tiu ? grp.tiuStreamCount : grp.gdmaStreamCount) = num;
      return Status::ok();
    }
    std::vector<isa::CommandBytes> &out = tiu ? grp.tiu : grp.gdma;
    out.resize(num);
    for (uint32_t i = 0; i < num; ++i) {
      std::memcpy(out[i].data(), blob_ + start + uint64_t(i) * isa::kCommandBytes, isa::kCommandBytes);
      Status st = tiu ? isa::checkTiuCommand(out[i]) : isa::checkGdmaCommand(out[i]);
      if (!st) return st.prefix(std::string(engine) + " command " + std::to_string(i));
    }
    return Status::ok();
  }

  Status profile(const fb::Binary *bin, Net &net) const {
    uint64_t start, size;
    TPU_RETURN_IF_ERROR(range(bin, "net_profile", start, size));
    if (size == 0) return Status::ok();
    const uint8_t *p = blob_ + start, *end = p + size;
    auto u32 = [&](uint32_t &v) {
      if (end - p < 4) return false;
      v = getU32(p);
      p += 4;
      return true;
    };
    const auto truncated = makeError("net_profile layer table truncated");
    uint32_t magic, nameCount, runCount;
    if (!u32(magic)) return truncated;
    if (magic != kProfileMagic) return makeError("net_profile is not a layer table (bad magic)");
    if (!u32(nameCount)) return truncated;
    if (nameCount > size / 4) return makeError("net_profile claims ", nameCount, " layer names");
    std::vector<std::string> names(nameCount);
    for (auto &n : names) {
      uint32_t len;
      if (!u32(len) || uint64_t(end - p) < len) return truncated;
      n.assign(reinterpret_cast<const char *>(p), len);
      p += len;
    }
    if (!u32(runCount)) return truncated;
    for (uint32_t r = 0; r < runCount; ++r) {
      uint32_t group, engine, first, count, name;
      if (!u32(group) || !u32(engine) || !u32(first) || !u32(count) || !u32(name)) return truncated;
      if (group >= net.groups.size() || engine > 1 || name >= nameCount)
        return makeError("net_profile run ", r, " names group ", group, " engine ", engine,
                         " layer ", name, ", which do not exist");
      CmdGroup &g = net.groups[group];
      auto &layers = engine == 0 ? g.tiuLayer : g.gdmaLayer;
      if (first > layers.size() || count > layers.size() - first)
        return makeError("net_profile run ", r, " covers commands beyond group ", group);
      for (uint32_t i = first; i < first + count; ++i) layers[i] = names[name];
    }
    return Status::ok();
  }

  // Appends the stages of one net (one Net entry each, in order) to `out`,
  // which may hold at most kMaxNets entries. Errors name the net and, when
  // it has several stages, the stage.
  Status net(const fb::Net *n, size_t index, std::vector<Net> &out) const {
    const std::string name = n->name() ? n->name()->str() : std::string();
    const std::string where = "net " + std::to_string(index) + " '" + name + "'";
    if (!n->name()) return makeError(where, ": no name");
    const size_t count = n->parameter() ? n->parameter()->size() : 0;
    if (count == 0) return makeError(where, ": no stages (empty parameter list)");
    if (count > kMaxNets - out.size())
      return makeError(where, ": ", count, " stages make more than ", kMaxNets, " net stages in the model");
    const size_t first = out.size();
    for (size_t i = 0; i < count; ++i) {
      Net stage;
      stage.name = name;
      Status st = stageBody(n->parameter()->Get(i), stage);
      if (!st) return st.prefix(count == 1 ? where : where + ": stage " + std::to_string(i));
      out.push_back(std::move(stage));
    }
    if (count == 1) return Status::ok();
    std::vector<const Net *> stages;
    std::vector<std::string> labels;
    for (size_t i = 0; i < count; ++i) {
      stages.push_back(&out[first + i]);
      labels.push_back("stage " + std::to_string(i));
    }
    Status st = checkStages(stages, labels);
    return st ? st : st.prefix(where);
  }

private:
  Status stageBody(const fb::NetParameter *p, Net &out) const {
    if (p->is_dynamic()) return makeError("dynamic nets are not supported");
    TPU_RETURN_IF_ERROR(tensors(p->input_tensor(), "input", out.inputs));
    TPU_RETURN_IF_ERROR(tensors(p->output_tensor(), "output", out.outputs));
    out.ctxAddr = p->ctx_addr();
    out.ctxSize = p->ctx_size();
    if (out.ctxAddr >= kAddressLimit || out.ctxSize > kAddressLimit - out.ctxAddr)
      return makeError("context memory beyond the 40-bit address space");
    if (const fb::CoeffMem *c = p->coeff_mem()) {
      if (c->encrypt_mode()) return makeError("encrypted coefficients are not supported");
      uint64_t start, size;
      TPU_RETURN_IF_ERROR(range(c->binary_coeff(), "coefficient", start, size));
      if (c->address() >= kAddressLimit || size > kAddressLimit - c->address())
        return makeError("coefficients beyond the 40-bit address space");
      out.coeffAddr = c->address();
      out.coeff.assign(blob_ + start, blob_ + start + size);
      if (!c->check_code() || c->check_code()->size() != 32)
        return makeError("coefficient check code missing or not a sha256");
      if (std::memcmp(c->check_code()->data(), sha256(out.coeff).data(), 32) != 0)
        return makeError("coefficient sha256 mismatch: coefficients corrupted");
    }
    if (p->sub_net() && p->sub_net()->size()) {
      TPU_RETURN_IF_ERROR(subnets(p->sub_net(), out));
      // TPU-MLIR also writes the TPU sub-nets' command groups at the net level, a copy (BMRuntime reads the
      // sub-nets'). Accept the copy, nothing else.
      if (p->cmd_group() && p->cmd_group()->size()) {
        Net copy;
        TPU_RETURN_IF_ERROR(groups(p->cmd_group(), copy));
        bool same = copy.groups.size() == out.groups.size();
        for (size_t i = 0; same && i < copy.groups.size(); ++i)
          same = copy.groups[i].tiu == out.groups[i].tiu && copy.groups[i].gdma == out.groups[i].gdma &&
                 copy.groups[i].tiuStream == out.groups[i].tiuStream &&
                 copy.groups[i].gdmaStream == out.groups[i].gdmaStream;
        if (!same) return makeError("command groups in the net that are not a copy of its sub-nets'");
      }
    } else {
      TPU_RETURN_IF_ERROR(groups(p->cmd_group(), out));
    }
    return profile(p->net_profile(), out);
  }

  // Appends `list` to the net's flat group list; errors name the group by
  // its index there (the one the runtime and the layer table use).
  Status groups(const flatbuffers::Vector<flatbuffers::Offset<fb::CmdGroup>> *list, Net &out) const {
    if (!list) return Status::ok();
    if (list->size() > kMaxGroupsPerNet - out.groups.size())
      return makeError(out.groups.size() + list->size(), " command groups (limit ", kMaxGroupsPerNet, ")");
    for (const fb::CmdGroup *cg : *list) {
      CmdGroup grp;
      Status st = queue(cg->binary_bdc(), cg->bdc_num(), cg->bdc_cmd_byte(), true, grp);
      if (st) st = queue(cg->binary_gdma(), cg->gdma_num(), cg->gdma_cmd_byte(), false, grp);
      if (!st) return st.prefix("group " + std::to_string(out.groups.size()));
      grp.tiuLayer.assign(grp.tiu.size(), std::string());
      grp.gdmaLayer.assign(grp.gdma.size(), std::string());
      out.groups.push_back(std::move(grp));
    }
    return Status::ok();
  }

  Status subnets(const flatbuffers::Vector<flatbuffers::Offset<fb::SubNet>> *list, Net &out) const {
    if (list->size() > kMaxSubnetsPerNet) return makeError(list->size(), " sub-nets (limit ", kMaxSubnetsPerNet, ")");
    for (size_t i = 0; i < list->size(); ++i) {
      Status st = subnet(list->Get(i), i, list->size(), out);
      if (!st) return st.prefix("sub-net " + std::to_string(i));
    }
    return Status::ok();
  }

  // Sub-nets run in file order: BMRuntime's ids and next ids may describe
  // other graphs, this project only writes (and runs) the linear chain.
  Status subnet(const fb::SubNet *s, size_t i, size_t count, Net &out) const {
    // id -1 is the schema's "unset"; TPU-MLIR leaves it so when a net is one sub-net.
    if (s->id() != int64_t(i) && !(s->id() == -1 && count == 1))
      return makeError("id ", s->id(), " breaks the sub-net order (expected ", i, ")");
    const auto *next = s->next_subnet_ids();
    const bool last = i + 1 == count;
    const size_t nextCount = next ? next->size() : 0;
    // The last one names no next sub-net, or -1 (TPU-MLIR's "none").
    const bool endsHere = nextCount == 0 || (nextCount == 1 && next->Get(0) == -1);
    if (last ? !endsHere : nextCount != 1 || next->Get(0) != int64_t(i + 1))
      return makeError("next_subnet_ids ", idList(next), " break the sub-net order (expected ",
                       last ? "{}" : "{" + std::to_string(i + 1) + "}", ")");
    if (s->is_dynamic()) return makeError("dynamic sub-nets are not supported");
    Subnet sub;
    const size_t groupCount = s->cmd_group() ? s->cmd_group()->size() : 0;
    const size_t paramCount = s->cpu_param() ? s->cpu_param()->size() : 0;
    switch (s->subnet_mode()) {
    case int32_t(Subnet::Mode::Tpu):
      if (groupCount == 0) return makeError("a TPU sub-net without command groups");
      if (paramCount != 0) return makeError("a TPU sub-net with a cpu_param");
      sub.firstGroup = out.groups.size();
      sub.groupCount = groupCount;
      TPU_RETURN_IF_ERROR(groups(s->cmd_group(), out));
      break;
    case int32_t(Subnet::Mode::Cpu): {
      if (groupCount != 0) return makeError("a CPU sub-net with ", groupCount, " command group(s)");
      if (paramCount != 1) return makeError("a CPU sub-net needs one cpu_param, it has ", paramCount);
      const fb::CpuParam *param = s->cpu_param()->Get(0);
      if (param->op_type() < 0) return makeError("negative op_type ", param->op_type());
      uint64_t start, size;
      TPU_RETURN_IF_ERROR(range(param->binary_param(), "binary_param", start, size));
      sub.cpuOpType = uint32_t(param->op_type());
      sub.cpuParam.assign(blob_ + start, blob_ + start + size);
      break;
    }
    default:
      return makeError("unknown subnet_mode ", s->subnet_mode(), " (0 TPU, 1 CPU)");
    }
    sub.mode = Subnet::Mode(s->subnet_mode());
    TPU_RETURN_IF_ERROR(tensors(s->input_tensor(), "input", sub.inputs));
    TPU_RETURN_IF_ERROR(tensors(s->output_tensor(), "output", sub.outputs));
    out.subnets.push_back(std::move(sub));
    return Status::ok();
  }

  // "{3}", "{}", "{1, 2, 3, 4, ...}": a corrupt list stays one short line.
  static std::string idList(const flatbuffers::Vector<int32_t> *ids) {
    std::string s = "{";
    for (uint32_t n = 0; ids && n < ids->size(); ++n) {
      if (n == 4) return s + ", ...}";
      s += (n ? ", " : "") + std::to_string(ids->Get(n));
    }
    return s + "}";
  }

  const uint8_t *blob_;
  uint64_t blobSize_;
  const isa::ChipInfo &chip_;
};

} // namespace

// The FlatBuffers part of a bmodel (fsize bytes at fbuf), copied to an aligned buffer (so the verifier's
// alignment checks hold) and verified; its model table and chip name.
struct VerifiedTable {
  std::vector<uint64_t> aligned;
  std::string chip;
  const fb::Model *model() const { return fb::GetModel(aligned.data()); }
};
Result<VerifiedTable> verifiedTable(const uint8_t *fbuf, size_t fsize) {
  VerifiedTable t;
  t.aligned.resize((fsize + 7) / 8);
  if (fsize) std::memcpy(t.aligned.data(), fbuf, fsize); // an empty vector's data() may be null
  const uint8_t *fb8 = reinterpret_cast<const uint8_t *>(t.aligned.data());
  // Every table visit costs at least one 4-byte offset in the buffer, so a
  // table budget of one per byte keeps verification linear in the file size
  // and lets the reader's own limits (nets, groups, commands) name what is absurd.
  flatbuffers::Verifier verifier(fb8, fsize, /*max_depth=*/64,
                                 /*max_tables=*/std::max<size_t>(fsize, 1000000));
  if (!fb::VerifyModelBuffer(verifier))
    return makeError("corrupted: the FlatBuffers part fails verification");
  const fb::Model *m = fb::GetModel(fb8);
  if (!m->chip()) return makeError("no chip name");
  t.chip = m->chip()->str();
  return t;
}

Result<Model> parse(const uint8_t *data, size_t size, ChipScope scope) {
  auto header = parseHeader(data, size);
  if (!header) return header.status();
  const size_t fsize = header->flatbuffersSize;
  auto table = verifiedTable(data + kHeaderSize, fsize);
  if (!table) return table.status();
  const fb::Model *m = table->model();
  Model out;
  out.chip = table->chip;
  const isa::ChipInfo *chip = isa::chipByBmodelName(out.chip);
  if (!chip || (scope == ChipScope::Bm1684 && out.chip != kChip))
    return makeError("bmodel is for chip '", out.chip, "', not ", kChip,
                     !chip ? ""
                     : chip->hasSimulator
                         ? " (this step reads BM1684 commands only; tpuc run, sim, profile, graph and sweep, the "
                           "runtime APIs and Python run it on func and sim, tpuc dis reads it)"
                         : " (tpuc dis reads it)");
  if (m->type()) out.type = m->type()->str();
  if (m->version()) out.version = m->version()->str();
  if (m->time()) out.time = m->time()->str();
  out.neuronSize = m->neuron_size();
  out.deviceNum = m->device_num();
  if (!m->net()) return out;
  if (m->net()->size() > kMaxNets) return makeError(m->net()->size(), " nets (limit ", kMaxNets, ")");
  Reader reader(data + kHeaderSize + fsize, header->binarySize, *chip);
  std::map<std::string, size_t> netIndex; // a net's stages are its parameter list, never a second Net
  for (size_t i = 0; i < m->net()->size(); ++i) {
    TPU_RETURN_IF_ERROR(reader.net(m->net()->Get(i), i, out.nets));
    auto [seen, fresh] = netIndex.emplace(out.nets.back().name, i);
    if (!fresh)
      return makeError("net ", i, " '", out.nets.back().name, "': net ", seen->second,
                       " has this name too (the stages of a net are its parameter list)");
  }
  return out;
}

Result<std::string> readChip(const std::string &path) {
  auto len = fileSize(path);
  if (!len) return len.status();
  auto head = tpu::readFileHead(path, kHeaderSize);
  if (!head) return head.status();
  // The header's sizes are checked against the whole file's.
  const size_t size = head->size() < kHeaderSize ? head->size() : size_t(*len);
  auto header = parseHeader(reinterpret_cast<const uint8_t *>(head->data()), size);
  if (!header) return Status(header.status()).prefix(path);
  auto part = tpu::readFileHead(path, uint64_t(kHeaderSize) + header->flatbuffersSize);
  if (!part) return part.status();
  auto table = verifiedTable(reinterpret_cast<const uint8_t *>(part->data()) + kHeaderSize, header->flatbuffersSize);
  if (!table) return Status(table.status()).prefix(path);
  return table->chip;
}

Result<Model> readFile(const std::string &path, Header *header, ChipScope scope) {
  auto len = fileSize(path);
  if (!len) return len.status();
  if (*len > uint64_t(kHeaderSize) + 2ull * UINT32_MAX)
    return makeError(path, ": ", *len, " bytes is larger than any bmodel header can describe");
  auto file = tpu::readFile(path);
  if (!file) return file.status();
  const auto *bytes = reinterpret_cast<const uint8_t *>(file->data());
  auto m = parse(bytes, file->size(), scope);
  if (!m) return m.prefix(path);
  if (header) *header = *parseHeader(bytes, file->size());
  return m;
}

} // namespace tpu::bmodel

// bmodel container: write/read round trip and every rejected-input case.
#include "isa/bmodel/Bmodel.h"

#include "BmodelTestUtil.h"
#include "isa/bmodel/bmodel_generated.h" // to hand-build containers the writer never makes

#include "isa/Opcodes.h"
#include "isa/bm1684x/Command.h"

#include <gtest/gtest.h>

#include <fstream>

#include <cstring>
#include <random>

using namespace tpu;
using namespace tpu::bmodel;
using namespace tpu::bmodel::testutil;
using tpu::isa::GdmaField;
using tpu::isa::GdmaRaw;
using tpu::isa::TiuField;
using tpu::isa::TiuRaw;

namespace {

Model sampleModel() {
  Model m;
  m.type = "test";
  m.version = "1";
  m.neuronSize = 0x10000;
  Net n;
  n.name = "net0";
  Tensor in;
  in.name = "x";
  in.dtype = DataType::Int8;
  in.storeMode = StoreMode::N4;
  in.shape = {1, 3, 4, 4};
  in.deviceAddr = 0x100000000;
  in.size = in.storageBytes();
  in.scale = 0.125f;
  Tensor out = in;
  out.name = "y";
  out.dtype = DataType::Float32;
  out.storeMode = StoreMode::N1;
  out.deviceAddr = 0x100001000;
  out.size = out.storageBytes();
  out.zeroPoint = -3;
  n.inputs = {in};
  n.outputs = {out};
  n.ctxAddr = 0x100000000;
  n.ctxSize = 0x10000;
  n.coeffAddr = 0x100100000;
  std::mt19937 rng(7);
  for (int i = 0; i < 300; ++i) n.coeff.push_back(uint8_t(rng()));
  CmdGroup g;
  g.gdma = {gdmaCmd(1, 0), gdmaCmd(2, 0), gdmaCmd(3, 1)};
  g.tiu = {tiuCmd(1, 2)};
  g.gdmaLayer = {"load", "load", "store"};
  g.tiuLayer = {"conv1"};
  n.groups.push_back(g);
  CmdGroup g2;
  g2.tiu = {tiuCmd(1, 0, 3, 2), tiuCmd(2, 0, 3, 2)};
  g2.tiuLayer = {"", "add"};
  n.groups.push_back(g2);
  m.nets.push_back(n);
  return m;
}

void expectEqual(const Model &a, const Model &b) {
  EXPECT_EQ(a.chip, b.chip);
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.neuronSize, b.neuronSize);
  ASSERT_EQ(a.nets.size(), b.nets.size());
  for (size_t i = 0; i < a.nets.size(); ++i) {
    const Net &x = a.nets[i], &y = b.nets[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.ctxAddr, y.ctxAddr);
    EXPECT_EQ(x.ctxSize, y.ctxSize);
    EXPECT_EQ(x.coeffAddr, y.coeffAddr);
    EXPECT_EQ(x.coeff, y.coeff);
    ASSERT_EQ(x.inputs.size(), y.inputs.size());
    ASSERT_EQ(x.outputs.size(), y.outputs.size());
    for (size_t t = 0; t < x.inputs.size() + x.outputs.size(); ++t) {
      const Tensor &p = t < x.inputs.size() ? x.inputs[t] : x.outputs[t - x.inputs.size()];
      const Tensor &q = t < y.inputs.size() ? y.inputs[t] : y.outputs[t - y.inputs.size()];
      EXPECT_EQ(p.name, q.name);
      EXPECT_EQ(p.dtype, q.dtype);
      EXPECT_EQ(p.storeMode, q.storeMode);
      EXPECT_EQ(p.deviceAddr, q.deviceAddr);
      EXPECT_EQ(p.size, q.size);
      EXPECT_EQ(p.shape, q.shape);
      EXPECT_EQ(p.scale, q.scale);
      EXPECT_EQ(p.zeroPoint, q.zeroPoint);
    }
    ASSERT_EQ(x.groups.size(), y.groups.size());
    for (size_t g = 0; g < x.groups.size(); ++g) {
      EXPECT_EQ(x.groups[g].tiu, y.groups[g].tiu);
      EXPECT_EQ(x.groups[g].gdma, y.groups[g].gdma);
      EXPECT_EQ(x.groups[g].tiuLayer, y.groups[g].tiuLayer);
      EXPECT_EQ(x.groups[g].gdmaLayer, y.groups[g].gdmaLayer);
    }
  }
}

std::vector<uint8_t> sampleBytes() { return *serialize(sampleModel()); }

std::string parseError(const std::vector<uint8_t> &bytes) {
  auto m = parse(bytes.data(), bytes.size());
  EXPECT_FALSE(m.isOk());
  return m.isOk() ? std::string() : m.message();
}

void putU32(std::vector<uint8_t> &b, size_t at, uint32_t v) { std::memcpy(&b[at], &v, 4); }

// Offset of the blob in a serialized model.
size_t blobOffset(const std::vector<uint8_t> &b) {
  uint32_t fsize;
  std::memcpy(&fsize, &b[8], 4);
  return kHeaderSize + fsize;
}

} // namespace

TEST(Bmodel, RoundTrip) {
  Model m = sampleModel();
  auto bytes = serialize(m);
  ASSERT_TRUE(bytes.isOk()) << bytes.message();
  auto back = parse(bytes->data(), bytes->size());
  ASSERT_TRUE(back.isOk()) << back.message();
  expectEqual(m, *back);
  // Serialising again gives the same bytes: the writer is deterministic.
  EXPECT_EQ(*serialize(*back), *bytes);
}

// A scalar (an ONNX 0-d input): no dims, one element.
TEST(Bmodel, ScalarTensorRoundTrips) {
  Model m = sampleModel();
  Tensor &out = m.nets[0].outputs[0];
  out.shape.clear();
  out.size = out.storageBytes();
  EXPECT_EQ(out.size, 4u);
  auto bytes = serialize(m);
  ASSERT_TRUE(bytes.isOk()) << bytes.message();
  auto back = parse(bytes->data(), bytes->size());
  ASSERT_TRUE(back.isOk()) << back.message();
  expectEqual(m, *back);
  EXPECT_TRUE(back->nets[0].outputs[0].shape.empty());
}

TEST(Bmodel, HeaderFields) {
  auto b = sampleBytes();
  auto h = parseHeader(b.data(), b.size());
  ASSERT_TRUE(h.isOk()) << h.message();
  EXPECT_EQ(h->magic, 0xFF55AAEEu);
  EXPECT_EQ(h->headerSize, 64u);
  EXPECT_EQ(64u + h->flatbuffersSize + h->binarySize, b.size());
}

TEST(Bmodel, FileRoundTripAndMissingFile) {
  std::string path = ::testing::TempDir() + "/rt.bmodel";
  ASSERT_TRUE(writeFile(sampleModel(), path).isOk());
  auto back = readFile(path);
  ASSERT_TRUE(back.isOk()) << back.message();
  expectEqual(sampleModel(), *back);
  auto missing = readFile(path + ".none");
  ASSERT_FALSE(missing.isOk());
  EXPECT_NE(missing.message().find("cannot open"), std::string::npos);
}

// readChip reads the header and FlatBuffers part only: the chip of a good file, and for a file cut anywhere
// or missing the error readFile gives when the cut is in those parts (and none past them).
TEST(Bmodel, ReadChipFromTheHeadOnly) {
  const std::string path = ::testing::TempDir() + "/chip.bmodel";
  ASSERT_TRUE(writeFile(sampleModel(), path).isOk());
  auto chip = readChip(path);
  ASSERT_TRUE(chip.isOk()) << chip.message();
  EXPECT_EQ(*chip, "BM1684");
  const auto bytes = sampleBytes();
  const size_t head = 64 + parseHeader(bytes.data(), bytes.size())->flatbuffersSize;
  for (size_t len = 0; len < bytes.size(); len += 7) {
    const std::string cut = ::testing::TempDir() + "/cut.bmodel";
    std::ofstream(cut, std::ios::binary).write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(len));
    auto fromHead = readChip(cut);
    auto whole = readFile(cut);
    ASSERT_FALSE(whole.isOk()) << len;
    if (len < head || len < 64) {
      ASSERT_FALSE(fromHead.isOk()) << len;
      EXPECT_EQ(fromHead.message(), whole.message()) << len;
    }
  }
  auto missing = readChip(path + ".none");
  ASSERT_FALSE(missing.isOk());
  EXPECT_EQ(missing.message(), readFile(path + ".none").message());
}

TEST(Bmodel, RejectsTruncatedAtEveryLength) {
  auto b = sampleBytes();
  for (size_t len = 0; len < b.size(); len += 7) {
    auto m = parse(b.data(), len);
    EXPECT_FALSE(m.isOk()) << "length " << len;
  }
  EXPECT_NE(parseError({b.begin(), b.begin() + 10}).find("truncated"), std::string::npos);
  EXPECT_NE(parseError({b.begin(), b.end() - 1}).find("truncated"), std::string::npos);
}

TEST(Bmodel, RejectsTrailingBytes) {
  auto b = sampleBytes();
  b.push_back(0);
  EXPECT_NE(parseError(b).find("size mismatch"), std::string::npos);
}

TEST(Bmodel, RejectsBadMagicAndHeaderSize) {
  auto b = sampleBytes();
  b[0] ^= 1;
  EXPECT_NE(parseError(b).find("bad magic"), std::string::npos);
  b = sampleBytes();
  putU32(b, 4, 32);
  EXPECT_NE(parseError(b).find("header_size"), std::string::npos);
}

TEST(Bmodel, RejectsCorruptedFlatbuffers) {
  auto b = sampleBytes();
  // The root offset pointing past the buffer must be caught by the verifier.
  putU32(b, kHeaderSize, 0x7fffff00);
  EXPECT_NE(parseError(b).find("FlatBuffers"), std::string::npos);
}

TEST(Bmodel, RandomCorruptionNeverCrashes) {
  auto good = sampleBytes();
  std::mt19937 rng(1234);
  int rejected = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    auto b = good;
    int flips = 1 + int(rng() % 4);
    for (int i = 0; i < flips; ++i) b[rng() % b.size()] ^= uint8_t(1u << (rng() % 8));
    auto m = parse(b.data(), b.size());
    if (!m.isOk()) {
      ++rejected;
      EXPECT_FALSE(m.message().empty());
    }
  }
  EXPECT_GT(rejected, 0);
}

TEST(Bmodel, RejectsCorruptedCoefficients) {
  auto b = sampleBytes();
  // The coefficients are the first thing in the blob.
  b[blobOffset(b) + 5] ^= 0xff;
  std::string e = parseError(b);
  EXPECT_NE(e.find("net 0 'net0'"), std::string::npos) << e;
  EXPECT_NE(e.find("sha256"), std::string::npos) << e;
}

TEST(Bmodel, RejectsOtherChip) {
  Model m = sampleModel();
  m.chip = "BM1688";
  auto b = *serialize(m);
  EXPECT_NE(parseError(b).find("chip 'BM1688', not BM1684"), std::string::npos);
}

TEST(Bmodel, RejectsUnknownTaskTypeNamingGroupAndCommand) {
  Model m = sampleModel();
  TiuRaw r = TiuRaw::decode(m.nets[0].groups[1].tiu[1].data());
  r[TiuField::tsk_typ] = 15;
  m.nets[0].groups[1].tiu[1] = *r.encode();
  std::string e = parseError(*serialize(m));
  EXPECT_NE(e.find("net 0 'net0': group 1: TIU command 1: unknown tsk_typ 15"), std::string::npos) << e;

  m = sampleModel();
  r = TiuRaw::decode(m.nets[0].groups[0].tiu[0].data());
  r[TiuField::tsk_eu_typ] = 7; // conv has eu 0/1 only
  m.nets[0].groups[0].tiu[0] = *r.encode();
  e = parseError(*serialize(m));
  EXPECT_NE(e.find("group 0: TIU command 0: tsk_eu_typ 7 is not valid for tsk_typ 0 (conv)"),
            std::string::npos) << e;
}

TEST(Bmodel, RejectsBadGdmaCommand) {
  Model m = sampleModel();
  m.nets[0].groups[0].gdma[2][127] = 0x80; // past the last GDMA field
  std::string e = parseError(*serialize(m));
  EXPECT_NE(e.find("group 0: GDMA command 2: bit 1023 is set"), std::string::npos) << e;

  m = sampleModel();
  GdmaRaw r = GdmaRaw::decode(m.nets[0].groups[0].gdma[0].data());
  r[GdmaField::src_data_format] = 6;
  m.nets[0].groups[0].gdma[0] = *r.encode();
  e = parseError(*serialize(m));
  EXPECT_NE(e.find("GDMA command 0: unknown src_data_format 6"), std::string::npos) << e;
}

TEST(Bmodel, RejectsBadTensors) {
  Model m = sampleModel();
  m.nets[0].inputs[0].size = 10;
  EXPECT_NE(parseError(*serialize(m)).find("input tensor 0 'x': size 10 smaller"), std::string::npos);

  m = sampleModel();
  m.nets[0].inputs[0].shape = {1ull << 30, 1ull << 30, 16};
  m.nets[0].inputs[0].size = 1;
  EXPECT_NE(parseError(*serialize(m)).find("exceeds the 2^40-byte"), std::string::npos);

  m = sampleModel();
  m.nets[0].outputs[0].storeMode = StoreMode::N4; // fp32 cannot be 4N
  EXPECT_NE(parseError(*serialize(m)).find("output tensor 0 'y': store mode"), std::string::npos);

  m = sampleModel();
  m.nets[0].outputs[0].dtype = DataType(9);
  EXPECT_NE(parseError(*serialize(m)).find("unknown data_type 9"), std::string::npos);

  m = sampleModel();
  m.nets[0].outputs[0].shape.assign(9, 1);
  EXPECT_NE(parseError(*serialize(m)).find("output tensor 0 'y': 9 dimensions (0 to 8 allowed)"), std::string::npos);
}

TEST(Bmodel, RejectsBinaryRangeOutsideBlob) {
  auto b = sampleBytes();
  // Grow the header's binary_size claim: the blob shrinks relative to the
  // ranges only if we cut the file, so cut the last bytes and fix the header.
  uint32_t binSize;
  std::memcpy(&binSize, &b[12], 4);
  b.resize(b.size() - 64);
  putU32(b, 12, binSize - 64);
  std::string e = parseError(b);
  EXPECT_NE(e.find("outside the"), std::string::npos) << e;
}

TEST(Bmodel, WriterRejectsMismatchedLayerLists) {
  Model m = sampleModel();
  m.nets[0].groups[0].tiuLayer.clear();
  auto b = serialize(m);
  ASSERT_FALSE(b.isOk());
  EXPECT_NE(b.message().find("layer name lists"), std::string::npos);
}

TEST(Bmodel, EmptyModelRoundTrips) {
  Model m;
  auto b = serialize(m);
  ASSERT_TRUE(b.isOk());
  auto back = parse(b->data(), b->size());
  ASSERT_TRUE(back.isOk()) << back.message();
  EXPECT_TRUE(back->nets.empty());
}

// ---- hand-built containers: claims the writer would never make ----------------

namespace {

// Wraps a finished FlatBuffers Model and a blob into a bmodel file image.
std::vector<uint8_t> container(flatbuffers::FlatBufferBuilder &b, const std::vector<uint8_t> &blob) {
  std::vector<uint8_t> out(kHeaderSize, 0);
  putU32(out, 0, kMagic);
  putU32(out, 4, kHeaderSize);
  putU32(out, 8, uint32_t(b.GetSize()));
  putU32(out, 12, uint32_t(blob.size()));
  out.insert(out.end(), b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  out.insert(out.end(), blob.begin(), blob.end());
  return out;
}

std::vector<uint8_t> oneNet(flatbuffers::FlatBufferBuilder &b,
                            flatbuffers::Offset<::bmodel::NetParameter> param,
                            const std::vector<uint8_t> &blob = {}) {
  std::vector<flatbuffers::Offset<::bmodel::NetParameter>> params{param};
  auto pv = b.CreateVector(params);
  std::vector<flatbuffers::Offset<::bmodel::Net>> nets{::bmodel::CreateNet(b, b.CreateString("big"), 0, 0, pv)};
  auto nv = b.CreateVector(nets);
  b.Finish(::bmodel::CreateModel(b, 0, 0, 0, b.CreateString("BM1684"), nv));
  return container(b, blob);
}

} // namespace

TEST(BmodelLimits, AbsurdCommandCountRejectedBeforeAllocation) {
  flatbuffers::FlatBufferBuilder b;
  ::bmodel::Binary empty(0, 0);
  std::vector<flatbuffers::Offset<::bmodel::CmdGroup>> groups{
      ::bmodel::CreateCmdGroup(b, 1000000, 0, &empty, &empty)};
  auto gv = b.CreateVector(groups);
  ::bmodel::NetParameterBuilder pb(b);
  pb.add_cmd_group(gv);
  auto bytes = oneNet(b, pb.Finish());
  EXPECT_EQ(parseError(bytes), "net 0 'big': group 0: 1000000 TIU commands (limit 65535)");
}

TEST(BmodelLimits, TooManyGroupsRejected) {
  flatbuffers::FlatBufferBuilder b;
  auto g = ::bmodel::CreateCmdGroup(b);
  std::vector<flatbuffers::Offset<::bmodel::CmdGroup>> groups(kMaxGroupsPerNet + 1, g);
  auto gv = b.CreateVector(groups);
  ::bmodel::NetParameterBuilder pb(b);
  pb.add_cmd_group(gv);
  auto bytes = oneNet(b, pb.Finish());
  EXPECT_EQ(parseError(bytes), "net 0 'big': 65537 command groups (limit 65536)");
}

TEST(BmodelLimits, HugeTensorAndRangesRejected) {
  flatbuffers::FlatBufferBuilder b;
  auto dims = b.CreateVector(std::vector<uint64_t>{1ull << 20, 1ull << 20, 1ull << 20});
  std::vector<flatbuffers::Offset<::bmodel::Shape>> shapes{::bmodel::CreateShape(b, dims)};
  auto sv = b.CreateVector(shapes);
  std::vector<flatbuffers::Offset<::bmodel::Tensor>> ts{
      ::bmodel::CreateTensor(b, b.CreateString("t"), 0, 0, 0x100000000, ~0ull, sv)};
  auto tv = b.CreateVector(ts);
  ::bmodel::NetParameterBuilder pb(b);
  pb.add_input_tensor(tv);
  auto bytes = oneNet(b, pb.Finish());
  EXPECT_EQ(parseError(bytes), "net 0 'big': input tensor 0 't': shape exceeds the 2^40-byte address space");

  flatbuffers::FlatBufferBuilder b2;
  ::bmodel::Binary far(~0ull - 4, 16); // start + size overflows 64 bits
  auto check = b2.CreateVector(std::vector<uint8_t>(32, 0));
  auto coeff = ::bmodel::CreateCoeffMem(b2, 0x100000000, check, &far);
  ::bmodel::NetParameterBuilder pb2(b2);
  pb2.add_coeff_mem(coeff);
  auto bytes2 = oneNet(b2, pb2.Finish(), std::vector<uint8_t>(64, 0));
  std::string e = parseError(bytes2);
  EXPECT_NE(e.find("coefficient range"), std::string::npos) << e;
  EXPECT_NE(e.find("outside the 64-byte binary blob"), std::string::npos) << e;
}

TEST(BmodelLimits, StagesOfOneShapeAndDynamicNetsRejected) {
  flatbuffers::FlatBufferBuilder b;
  auto p1 = ::bmodel::CreateNetParameter(b), p2 = ::bmodel::CreateNetParameter(b);
  std::vector<flatbuffers::Offset<::bmodel::NetParameter>> params{p1, p2};
  auto pv = b.CreateVector(params);
  std::vector<flatbuffers::Offset<::bmodel::Net>> nets{::bmodel::CreateNet(b, b.CreateString("two"), 0, 0, pv)};
  auto nv = b.CreateVector(nets);
  b.Finish(::bmodel::CreateModel(b, 0, 0, 0, b.CreateString("BM1684"), nv));
  EXPECT_EQ(parseError(container(b, {})), "net 0 'two': stage 0 and stage 1 take the same input shapes (no inputs)");

  flatbuffers::FlatBufferBuilder b2;
  ::bmodel::NetParameterBuilder pb(b2);
  pb.add_is_dynamic(1);
  EXPECT_EQ(parseError(oneNet(b2, pb.Finish())), "net 0 'big': dynamic nets are not supported");
}

TEST(Bmodel, CorruptedFlatBuffersPartNeverCrashes) {
  auto good = sampleBytes();
  uint32_t fsize;
  std::memcpy(&fsize, &good[8], 4);
  std::mt19937 rng(77);
  int rejected = 0;
  for (int trial = 0; trial < 5000; ++trial) {
    auto b = good;
    for (int i = 0, n = 1 + int(rng() % 3); i < n; ++i) b[kHeaderSize + rng() % fsize] = uint8_t(rng());
    auto m = parse(b.data(), b.size());
    rejected += !m.isOk();
  }
  EXPECT_GT(rejected, 0);
}

TEST(BmodelLimits, BadLayerTablesRejected) {
  auto withProfile = [](const std::vector<uint32_t> &words) {
    std::vector<uint8_t> blob(words.size() * 4);
    std::memcpy(blob.data(), words.data(), blob.size());
    flatbuffers::FlatBufferBuilder b;
    ::bmodel::Binary profile(0, blob.size());
    ::bmodel::NetParameterBuilder pb(b);
    pb.add_net_profile(&profile);
    return parseError(oneNet(b, pb.Finish(), blob));
  };
  const uint32_t magic = 0x594C5054;
  EXPECT_EQ(withProfile({magic}), "net 0 'big': net_profile layer table truncated");
  EXPECT_EQ(withProfile({0x12345678, 0, 0}), "net 0 'big': net_profile is not a layer table (bad magic)");
  EXPECT_EQ(withProfile({magic, 1, 100}), "net 0 'big': net_profile layer table truncated");
  EXPECT_EQ(withProfile({magic, 0, 1, 5, 0, 0, 1, 0}),
            "net 0 'big': net_profile run 0 names group 5 engine 0 layer 0, which do not exist");
  EXPECT_EQ(withProfile({magic, 0, 2, 5, 0, 0}), "net 0 'big': net_profile layer table truncated");
}

// A BM1684X bmodel keeps each engine's command stream as stored (its commands vary in length): written and
// read back unchanged when the reader takes any known chip; the default reader refuses it by name.
TEST(Bmodel, Bm1684xStreamsRoundTrip) {
  auto add = isa::bm1684x::Command::make(*isa::bm1684x::findOp("arith.add"), true);
  auto sys = isa::bm1684x::Command::make(*isa::bm1684x::findOp("sys.end"), false);
  auto dsys = isa::bm1684x::Command::make(*isa::bm1684x::findOp("dma.sys"), true);
  ASSERT_TRUE(add.isOk() && sys.isOk() && dsys.isOk());
  ASSERT_TRUE(add->set("cmd_id", 1).isOk() && sys->set("cmd_id", 2).isOk() && dsys->set("cmd_id", 1).isOk());
  Model m;
  m.chip = "BM1684X";
  Net net;
  net.name = "x";
  CmdGroup g;
  g.tiuStream = isa::bm1684x::encodeBuffer({*add, *sys});
  g.gdmaStream = isa::bm1684x::encodeBuffer({*dsys});
  g.tiuStreamCount = 2, g.gdmaStreamCount = 1;
  net.groups.push_back(g);
  m.nets.push_back(net);
  auto bytes = serialize(m);
  ASSERT_TRUE(bytes.isOk()) << bytes.message();
  auto back = parse(bytes->data(), bytes->size(), ChipScope::AnyKnown);
  ASSERT_TRUE(back.isOk()) << back.message();
  EXPECT_EQ(back->nets[0].groups[0].tiuStream, g.tiuStream);
  EXPECT_EQ(back->nets[0].groups[0].gdmaStream, g.gdmaStream);
  EXPECT_EQ(back->nets[0].groups[0].tiuStreamCount, 2u);
  EXPECT_TRUE(back->nets[0].groups[0].tiu.empty());
  EXPECT_EQ(parseError(*bytes), "bmodel is for chip 'BM1684X', not BM1684 (this step reads BM1684 commands only; "
                                "tpuc run, sim, profile, graph and sweep, the runtime APIs and Python run it on func "
                                "and sim, tpuc dis reads it)");

  // A count that is not what the stream holds, and words where streams belong, are refused by name.
  m.nets[0].groups[0].tiuStreamCount = 3;
  auto wrong = serialize(m);
  ASSERT_FALSE(wrong.isOk());
  EXPECT_EQ(wrong.message(), "net 'x' group 0: count 3 does not match the 2 commands its 128-byte binary holds");
  m.nets[0].groups[0] = sampleModel().nets[0].groups[0];
  wrong = serialize(m);
  ASSERT_FALSE(wrong.isOk());
  EXPECT_EQ(wrong.message(), "net 'x' group 0: BM1684X commands are streams, not 128-byte words");
}

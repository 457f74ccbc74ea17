// Multi-stage nets (docs/bmodel.md, "Stages"): a two-stage round trip with
// the coefficients stored once, and every rejection of the writer, the
// reader and bmodel::combine with its message.
#include "isa/bmodel/Bmodel.h"

#include "BmodelTestUtil.h"
#include "isa/bmodel/bmodel_generated.h" // to hand-build stage lists the writer refuses

#include <gtest/gtest.h>

using namespace tpu;
using namespace tpu::bmodel;
using namespace tpu::bmodel::testutil;

namespace {

constexpr uint64_t kBase = 0x100000000;

// One stage of "rec": x [1,3,16,width] -> y [1,4,16,width], 4 KiB of weights.
Net stage(uint64_t width, uint8_t weightSeed = 1, const std::string &name = "rec") {
  Net n;
  n.name = name;
  n.inputs = {tensor("x", {1, 3, 16, width}, kBase + 0x10000)};
  n.outputs = {tensor("y", {1, 4, 16, width}, kBase + 0x20000)};
  n.ctxAddr = kBase + 0x10000;
  n.ctxSize = 0x10000 + width * 256;
  n.coeffAddr = kBase;
  for (int i = 0; i < 4096; ++i) n.coeff.push_back(uint8_t(i * weightSeed + 7));
  CmdGroup g;
  g.tiu = {tiuCmd(1)};
  g.gdma = {gdmaCmd(1), gdmaCmd(2)};
  g.tiuLayer = {"conv" + std::to_string(width)};
  g.gdmaLayer = {"", "store"};
  n.groups = {g};
  return n;
}

Model modelOf(std::vector<Net> nets) {
  Model m;
  m.type = "stage test";
  m.nets = std::move(nets);
  return m;
}

std::string serializeError(const Model &m) {
  auto b = serialize(m);
  return b ? std::string("(serialized)") : b.message();
}

std::string parseError(const std::vector<uint8_t> &bytes) {
  auto m = parse(bytes.data(), bytes.size());
  return m ? std::string("(parsed)") : m.message();
}

std::string combineError(const std::vector<Model> &models, const std::vector<std::string> &origins) {
  auto m = combine(models, origins);
  return m ? std::string("(combined)") : m.message();
}

// ---- hand-built containers: stage lists the writer would never make ----------

flatbuffers::Offset<::bmodel::Tensor> fbTensor(flatbuffers::FlatBufferBuilder &b, const Tensor &t) {
  auto dims = b.CreateVector(t.shape);
  std::vector<flatbuffers::Offset<::bmodel::Shape>> shapes{::bmodel::CreateShape(b, dims)};
  auto sv = b.CreateVector(shapes);
  return ::bmodel::CreateTensor(b, b.CreateString(t.name), uint32_t(t.dtype), 0, t.deviceAddr, t.size, sv);
}

// A NetParameter with these tensors only (no weights, no commands).
flatbuffers::Offset<::bmodel::NetParameter> fbStage(flatbuffers::FlatBufferBuilder &b, const std::vector<Tensor> &ins,
                                                    const std::vector<Tensor> &outs, int dynamic = 0) {
  std::vector<flatbuffers::Offset<::bmodel::Tensor>> in, out;
  for (const Tensor &t : ins) in.push_back(fbTensor(b, t));
  for (const Tensor &t : outs) out.push_back(fbTensor(b, t));
  auto iv = b.CreateVector(in), ov = b.CreateVector(out);
  ::bmodel::NetParameterBuilder pb(b);
  pb.add_input_tensor(iv);
  pb.add_output_tensor(ov);
  pb.add_is_dynamic(dynamic);
  return pb.Finish();
}

using FbNet = std::pair<std::string, std::vector<flatbuffers::Offset<::bmodel::NetParameter>>>;

std::vector<uint8_t> container(flatbuffers::FlatBufferBuilder &b, const std::vector<FbNet> &list) {
  std::vector<flatbuffers::Offset<::bmodel::Net>> nets;
  for (const auto &[name, params] : list) {
    auto n = b.CreateString(name);
    auto pv = b.CreateVector(params);
    nets.push_back(::bmodel::CreateNet(b, n, 0, 0, pv));
  }
  auto nv = b.CreateVector(nets);
  b.Finish(::bmodel::CreateModel(b, 0, 0, 0, b.CreateString("BM1684"), nv));
  std::vector<uint8_t> out;
  for (uint32_t v : {kMagic, kHeaderSize, uint32_t(b.GetSize()), 0u})
    for (int i = 0; i < 4; ++i) out.push_back(uint8_t(v >> (8 * i)));
  out.resize(kHeaderSize, 0);
  out.insert(out.end(), b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  return out;
}

const Tensor x32 = tensor("x", {1, 3, 16, 32}, kBase), x64 = tensor("x", {1, 3, 16, 64}, kBase),
             y32 = tensor("y", {1, 4, 16, 32}, kBase + 0x10000), y64 = tensor("y", {1, 4, 16, 64}, kBase + 0x10000);

} // namespace

TEST(BmodelStages, TwoStageNetRoundTripsWithItsCoefficientsStoredOnce) {
  Model m = modelOf({stage(32), stage(64), stage(8, 3, "other")});
  auto bytes = serialize(m);
  ASSERT_TRUE(bytes) << bytes.message();
  auto back = parse(bytes->data(), bytes->size());
  ASSERT_TRUE(back) << back.message();
  ASSERT_EQ(back->nets.size(), 3u);
  EXPECT_EQ(stageRuns(back->nets).size(), 2u);
  for (size_t i = 0; i < 3; ++i) {
    const Net &a = m.nets[i], &b = back->nets[i];
    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.inputs[0].shape, a.inputs[0].shape);
    EXPECT_EQ(b.outputs[0].shape, a.outputs[0].shape);
    EXPECT_EQ(b.ctxSize, a.ctxSize);
    EXPECT_EQ(b.coeffAddr, a.coeffAddr);
    EXPECT_EQ(b.coeff, a.coeff);
    EXPECT_EQ(b.groups[0].tiu, a.groups[0].tiu);
    EXPECT_EQ(b.groups[0].tiuLayer, a.groups[0].tiuLayer); // each stage has its own layer table
  }
  // The same stages as two nets store the 4 KiB of weights twice.
  auto twoNets = serialize(modelOf({stage(32), stage(64, 1, "rec2")}));
  auto twoStages = serialize(modelOf({stage(32), stage(64)}));
  ASSERT_TRUE(twoNets && twoStages);
  EXPECT_GE(twoNets->size(), twoStages->size() + 4096);
  // Re-serialising what was read gives the same bytes.
  auto again = serialize(*back);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *bytes);
}

// The container lets stages have weights of their own (written twice);
// the runtime is what refuses to load them.
TEST(BmodelStages, StagesWithOtherWeightsKeepTheirOwn) {
  auto shared = serialize(modelOf({stage(32), stage(64)}));
  auto own = serialize(modelOf({stage(32), stage(64, 5)}));
  ASSERT_TRUE(shared && own);
  EXPECT_GE(own->size(), shared->size() + 4096);
  auto back = parse(own->data(), own->size());
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(back->nets[1].coeff, stage(64, 5).coeff);
}

TEST(BmodelStages, WriterRejectsWhatAreNotStagesOfOneNet) {
  EXPECT_EQ(serializeError(modelOf({stage(32), stage(8, 1, "other"), stage(64)})),
            "net 'rec': entries 0 and 2 of the model are not adjacent (the stages of a net are consecutive entries)");
  EXPECT_EQ(serializeError(modelOf({stage(32), stage(32)})),
            "net 'rec': stage 0 and stage 1 take the same input shapes [1,3,16,32]");
  Net renamed = stage(64);
  renamed.inputs[0].name = "image";
  EXPECT_EQ(serializeError(modelOf({stage(32), renamed})), "net 'rec': stage 1 input 0 is 'image', stage 0's is 'x'");
  Net int8 = stage(64);
  int8.outputs[0].dtype = DataType::Int8;
  EXPECT_EQ(serializeError(modelOf({stage(32), int8})), "net 'rec': stage 1 output 'y' is int8, stage 0's is fp32");
  Net twoInputs = stage(64);
  twoInputs.inputs.push_back(tensor("z", {1, 1}, kBase + 0x30000));
  EXPECT_EQ(serializeError(modelOf({stage(32), stage(16), twoInputs})),
            "net 'rec': stage 2 has 2 input(s), stage 0 has 1");
}

TEST(BmodelStages, ReaderRejectsBadStageLists) {
  {
    flatbuffers::FlatBufferBuilder b;
    auto p0 = fbStage(b, {x32}, {y32}), p1 = fbStage(b, {x32}, {y64});
    EXPECT_EQ(parseError(container(b, {{"rec", {p0, p1}}})),
              "net 0 'rec': stage 0 and stage 1 take the same input shapes [1,3,16,32]");
  }
  {
    flatbuffers::FlatBufferBuilder b;
    Tensor z = x64;
    z.name = "z";
    auto p0 = fbStage(b, {x32}, {y32}), p1 = fbStage(b, {z}, {y64});
    EXPECT_EQ(parseError(container(b, {{"rec", {p0, p1}}})), "net 0 'rec': stage 1 input 0 is 'z', stage 0's is 'x'");
  }
  {
    flatbuffers::FlatBufferBuilder b;
    Tensor x8 = x64;
    x8.dtype = DataType::Int8;
    auto p0 = fbStage(b, {x32}, {y32}), p1 = fbStage(b, {x8}, {y64});
    EXPECT_EQ(parseError(container(b, {{"rec", {p0, p1}}})),
              "net 0 'rec': stage 1 input 'x' is int8, stage 0's is fp32");
  }
  {
    flatbuffers::FlatBufferBuilder b;
    auto p0 = fbStage(b, {x32}, {y32}), p1 = fbStage(b, {x64}, {y64, y32});
    EXPECT_EQ(parseError(container(b, {{"rec", {p0, p1}}})), "net 0 'rec': stage 1 has 2 output(s), stage 0 has 1");
  }
  {
    flatbuffers::FlatBufferBuilder b;
    auto p0 = fbStage(b, {x32}, {y32}), p1 = fbStage(b, {x64}, {y64}, /*dynamic=*/1);
    EXPECT_EQ(parseError(container(b, {{"rec", {p0, p1}}})), "net 0 'rec': stage 1: dynamic nets are not supported");
  }
  {
    // A net's stages are its parameter list: a second Net of the name is not one.
    flatbuffers::FlatBufferBuilder b;
    auto p0 = fbStage(b, {x32}, {y32}), p1 = fbStage(b, {x64}, {y64});
    EXPECT_EQ(parseError(container(b, {{"rec", {p0}}, {"rec", {p1}}})),
              "net 1 'rec': net 0 has this name too (the stages of a net are its parameter list)");
  }
  {
    flatbuffers::FlatBufferBuilder b;
    EXPECT_EQ(parseError(container(b, {{"rec", {}}})), "net 0 'rec': no stages (empty parameter list)");
  }
  {
    flatbuffers::FlatBufferBuilder b;
    auto p = fbStage(b, {x32}, {y32});
    std::vector<flatbuffers::Offset<::bmodel::NetParameter>> many(kMaxNets, p);
    EXPECT_EQ(parseError(container(b, {{"one", {p}}, {"rec", many}})),
              "net 1 'rec': 256 stages make more than 256 net stages in the model");
  }
}

TEST(BmodelStages, CombineJoinsEquallyNamedNetsInArgumentOrder) {
  Model a = modelOf({stage(8, 3, "det"), stage(32)});
  a.neuronSize = 100;
  Model b = modelOf({stage(64), stage(4, 1, "cls")});
  b.neuronSize = 300;
  Model c = modelOf({stage(16)});
  auto m = combine({a, b, c}, {"a.bmodel", "b.bmodel", "c.bmodel"});
  ASSERT_TRUE(m) << m.message();
  std::vector<std::pair<std::string, uint64_t>> got;
  for (const Net &n : m->nets) got.push_back({n.name, n.inputs[0].shape[3]});
  EXPECT_EQ(got, (std::vector<std::pair<std::string, uint64_t>>{
                     {"det", 8}, {"rec", 32}, {"rec", 64}, {"rec", 16}, {"cls", 4}}));
  EXPECT_EQ(m->type, "stage test");
  EXPECT_EQ(m->neuronSize, 300u);
  // A combined model combines again: its stages keep their place.
  auto again = combine({*m, modelOf({stage(128)})}, {"abc.bmodel", "d.bmodel"});
  ASSERT_TRUE(again) << again.message();
  EXPECT_EQ(again->nets[4].inputs[0].shape[3], 128u);
  auto bytes = serialize(*again);
  ASSERT_TRUE(bytes) << bytes.message();
  auto back = parse(bytes->data(), bytes->size());
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(back->nets.size(), 6u);
}

TEST(BmodelStages, CombineRejectsNetsThatAreNotStagesOfOneNet) {
  EXPECT_EQ(combineError({modelOf({stage(32)}), modelOf({stage(64, 5)})}, {"a.bmodel", "b.bmodel"}),
            "net 'rec': the weights of b.bmodel differ from a.bmodel's (same address and size, other bytes): they are "
            "not stages of one net");
  Net moved = stage(64);
  moved.coeffAddr += 0x1000;
  EXPECT_EQ(combineError({modelOf({stage(32)}), modelOf({moved})}, {"a.bmodel", "b.bmodel"}),
            "net 'rec': the weights of b.bmodel [0x100001000, +4096 bytes) are not those of a.bmodel [0x100000000, "
            "+4096 bytes): they are not stages of one net");
  EXPECT_EQ(combineError({modelOf({stage(32)}), modelOf({stage(32)})}, {"a.bmodel", "b.bmodel"}),
            "net 'rec': a.bmodel and b.bmodel take the same input shapes [1,3,16,32]");
  Net renamed = stage(64);
  renamed.outputs[0].name = "logits";
  EXPECT_EQ(combineError({modelOf({stage(32)}), modelOf({renamed})}, {"a.bmodel", "b.bmodel"}),
            "net 'rec': b.bmodel output 0 is 'logits', a.bmodel's is 'y'");
  EXPECT_EQ(combineError({modelOf({stage(32), stage(64)}), modelOf({stage(64)})}, {"ab.bmodel", "b.bmodel"}),
            "net 'rec': ab.bmodel stage 1 and b.bmodel take the same input shapes [1,3,16,64]");
  EXPECT_EQ(combineError({}, {}), "no bmodels to combine");
}

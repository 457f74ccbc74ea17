// bmodel sub-nets (docs/bmodel.md, "Sub-nets"): write/read round trip of a
// TPU + CPU + TPU net, the writer's checks, and every rejected sub-net list.
#include "isa/bmodel/Bmodel.h"

#include "BmodelTestUtil.h"
#include "isa/bmodel/bmodel_generated.h" // to hand-build sub-net lists the writer never makes

#include <gtest/gtest.h>

#include <cstring>

using namespace tpu;
using namespace tpu::bmodel;
using namespace tpu::bmodel::testutil;
using tpu::isa::TiuField;
using tpu::isa::TiuRaw;

namespace {

// x -> [TPU: groups 0, 1] -> t -> [CPU: op 1] -> u (int32) -> [TPU: group 2] -> y
Model threeStepModel() {
  Model m;
  m.type = "subnet test";
  Net n;
  n.name = "steps";
  const uint64_t base = 0x100000000;
  Tensor x = tensor("x", {1, 4, 2, 2}, base, DataType::Float32);
  Tensor t = tensor("t", {1, 4, 2, 2}, base + 0x1000, DataType::Float32);
  Tensor u = tensor("u", {1, 1, 2, 2}, base + 0x2000, DataType::Int32);
  Tensor y = tensor("y", {1, 1, 2, 2}, base + 0x3000, DataType::Int32);
  n.inputs = {x};
  n.outputs = {y};
  n.ctxAddr = base;
  n.ctxSize = 0x10000;
  n.coeffAddr = base + 0x100000;
  n.coeff = {1, 2, 3, 4, 5};
  for (int g = 0; g < 3; ++g) {
    CmdGroup grp;
    grp.tiu = {tiuCmd(1)};
    grp.gdma = {gdmaCmd(1), gdmaCmd(2)};
    grp.tiuLayer = {"layer" + std::to_string(g)};
    grp.gdmaLayer = {"", "store" + std::to_string(g)};
    n.groups.push_back(grp);
  }
  Subnet tpu1;
  tpu1.firstGroup = 0;
  tpu1.groupCount = 2;
  tpu1.inputs = {x};
  tpu1.outputs = {t};
  Subnet cpu;
  cpu.mode = Subnet::Mode::Cpu;
  cpu.cpuOpType = 1;
  cpu.cpuParam = {9, 8, 7, 6, 5, 4, 3, 2, 1};
  cpu.inputs = {t};
  cpu.outputs = {u};
  Subnet tpu2;
  tpu2.firstGroup = 2;
  tpu2.groupCount = 1;
  tpu2.inputs = {u};
  tpu2.outputs = {y};
  n.subnets = {tpu1, cpu, tpu2};
  m.nets.push_back(n);
  return m;
}

void expectSameTensors(const std::vector<Tensor> &a, const std::vector<Tensor> &b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].dtype, b[i].dtype);
    EXPECT_EQ(a[i].storeMode, b[i].storeMode);
    EXPECT_EQ(a[i].deviceAddr, b[i].deviceAddr);
    EXPECT_EQ(a[i].size, b[i].size);
    EXPECT_EQ(a[i].shape, b[i].shape);
    EXPECT_EQ(a[i].scale, b[i].scale);
    EXPECT_EQ(a[i].zeroPoint, b[i].zeroPoint);
  }
}

std::string parseError(const std::vector<uint8_t> &bytes) {
  auto m = parse(bytes.data(), bytes.size());
  return m ? std::string("(parsed)") : m.message();
}

std::string serializeError(const Model &m) {
  auto b = serialize(m);
  return b ? std::string("(serialized)") : b.message();
}

} // namespace

TEST(BmodelSubnets, RoundTripKeepsEverything) {
  Model m = threeStepModel();
  auto bytes = serialize(m);
  ASSERT_TRUE(bytes) << bytes.message();
  auto back = parse(bytes->data(), bytes->size());
  ASSERT_TRUE(back) << back.message();
  const Net &a = m.nets[0], &b = back->nets[0];
  expectSameTensors(a.inputs, b.inputs);
  expectSameTensors(a.outputs, b.outputs);
  EXPECT_EQ(a.coeff, b.coeff);
  ASSERT_EQ(b.groups.size(), 3u);
  for (size_t g = 0; g < 3; ++g) {
    EXPECT_EQ(a.groups[g].tiu, b.groups[g].tiu);
    EXPECT_EQ(a.groups[g].gdma, b.groups[g].gdma);
    // The layer table indexes the flat group list across sub-nets.
    EXPECT_EQ(a.groups[g].tiuLayer, b.groups[g].tiuLayer);
    EXPECT_EQ(a.groups[g].gdmaLayer, b.groups[g].gdmaLayer);
  }
  ASSERT_EQ(b.subnets.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const Subnet &p = a.subnets[i], &q = b.subnets[i];
    EXPECT_EQ(p.mode, q.mode) << i;
    EXPECT_EQ(p.firstGroup, q.firstGroup) << i;
    EXPECT_EQ(p.groupCount, q.groupCount) << i;
    EXPECT_EQ(p.cpuOpType, q.cpuOpType) << i;
    EXPECT_EQ(p.cpuParam, q.cpuParam) << i;
    expectSameTensors(p.inputs, q.inputs);
    expectSameTensors(p.outputs, q.outputs);
  }
  EXPECT_EQ(*serialize(*back), *bytes); // deterministic, nothing lost
}

// Written as BMRuntime lays it out: groups inside the TPU sub-nets, none in
// the net, ids in order with next ids chaining them.
TEST(BmodelSubnets, LayoutInTheFile) {
  auto bytes = *serialize(threeStepModel());
  uint32_t fsize;
  std::memcpy(&fsize, &bytes[8], 4);
  std::vector<uint8_t> fbuf(bytes.begin() + kHeaderSize, bytes.begin() + kHeaderSize + fsize);
  const auto *param = ::bmodel::GetModel(fbuf.data())->net()->Get(0)->parameter()->Get(0);
  EXPECT_EQ(param->cmd_group(), nullptr);
  ASSERT_EQ(param->sub_net()->size(), 3u);
  const std::vector<int> groupCounts{2, 0, 1};
  for (uint32_t i = 0; i < 3; ++i) {
    const auto *s = param->sub_net()->Get(i);
    EXPECT_EQ(s->id(), int(i));
    EXPECT_EQ(s->subnet_mode(), i == 1 ? 1 : 0);
    EXPECT_EQ(s->cmd_group() ? int(s->cmd_group()->size()) : 0, groupCounts[i]);
    if (i < 2) {
      ASSERT_NE(s->next_subnet_ids(), nullptr);
      EXPECT_EQ(s->next_subnet_ids()->size(), 1u);
      EXPECT_EQ(s->next_subnet_ids()->Get(0), int(i + 1));
    } else {
      EXPECT_EQ(s->next_subnet_ids(), nullptr);
    }
  }
  const auto *cpu = param->sub_net()->Get(1)->cpu_param();
  ASSERT_EQ(cpu->size(), 1u);
  EXPECT_EQ(cpu->Get(0)->op_type(), 1);
  EXPECT_EQ(cpu->Get(0)->binary_param()->size(), 9u);
}

// A net without sub-nets keeps its groups in NetParameter.cmd_group and has
// no sub_net list: today's files, byte for byte.
TEST(BmodelSubnets, NetWithoutSubnetsHasNoSubnetList) {
  Model m = threeStepModel();
  m.nets[0].subnets.clear();
  auto bytes = *serialize(m);
  uint32_t fsize;
  std::memcpy(&fsize, &bytes[8], 4);
  std::vector<uint8_t> fbuf(bytes.begin() + kHeaderSize, bytes.begin() + kHeaderSize + fsize);
  const auto *param = ::bmodel::GetModel(fbuf.data())->net()->Get(0)->parameter()->Get(0);
  EXPECT_EQ(param->sub_net(), nullptr);
  ASSERT_NE(param->cmd_group(), nullptr);
  EXPECT_EQ(param->cmd_group()->size(), 3u);
  auto back = parse(bytes.data(), bytes.size());
  ASSERT_TRUE(back) << back.message();
  EXPECT_TRUE(back->nets[0].subnets.empty());
}

TEST(BmodelSubnets, WriterRejectsSubnetsThatDoNotCoverTheGroups) {
  Model m = threeStepModel();
  m.nets[0].subnets[2].firstGroup = 1;
  EXPECT_EQ(serializeError(m), "net 'steps': sub-net 2: groups [1, +1) do not follow the previous sub-nets' "
                               "(expected first group 2)");
  m = threeStepModel();
  m.nets[0].subnets.pop_back();
  EXPECT_EQ(serializeError(m), "net 'steps': the TPU sub-nets hold 2 of the net's 3 command groups");
  m = threeStepModel();
  m.nets[0].subnets[1].groupCount = 1;
  EXPECT_EQ(serializeError(m), "net 'steps': sub-net 1: a CPU sub-net has no command groups");
  m = threeStepModel();
  m.nets[0].subnets[0].cpuParam = {1};
  EXPECT_EQ(serializeError(m), "net 'steps': sub-net 0: a TPU sub-net has no host op");
  m = threeStepModel();
  m.nets[0].subnets[2].groupCount = 0;
  EXPECT_EQ(serializeError(m), "net 'steps': sub-net 2: a TPU sub-net needs at least one command group");
}

TEST(BmodelSubnets, GroupErrorsNameSubnetAndNetLevelGroup) {
  Model m = threeStepModel();
  TiuRaw r = TiuRaw::decode(m.nets[0].groups[2].tiu[0].data());
  r[TiuField::tsk_typ] = 15;
  m.nets[0].groups[2].tiu[0] = *r.encode();
  EXPECT_EQ(parseError(*serialize(m)), "net 0 'steps': sub-net 2: group 2: TIU command 0: unknown tsk_typ 15");
}

TEST(BmodelSubnets, SubnetTensorsAreChecked) {
  Model m = threeStepModel();
  m.nets[0].subnets[1].outputs[0].size = 3;
  EXPECT_EQ(parseError(*serialize(m)),
            "net 0 'steps': sub-net 1: output tensor 0 'u': size 3 smaller than the 16 bytes its shape needs");
}

// ---- hand-built sub-net lists: claims the writer would never make ----------

namespace {

struct SubnetSpec {
  int mode = 0;
  int groups = 1;
  int params = 0;
  int id = -1;               // -1: its position
  std::vector<int> next{-1}; // {-1}: the next position (none for the last)
  bool unsetIds = false;     // as TPU-MLIR writes a lone sub-net: id -1, next_subnet_ids {-1}
  ::bmodel::Binary param{0, 8};
  int opType = 1;
};

// A one-net bmodel whose NetParameter holds `specs` as its sub_net list (empty
// command groups, no tensors) over a 16-byte blob.
// netGroups: command groups also at the net level (TPU-MLIR writes the sub-nets' there too).
std::vector<uint8_t> withSubnets(const std::vector<SubnetSpec> &specs, int netGroups = 0) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<::bmodel::SubNet>> subnets;
  for (size_t i = 0; i < specs.size(); ++i) {
    const SubnetSpec &s = specs[i];
    std::vector<flatbuffers::Offset<::bmodel::CmdGroup>> groups(size_t(s.groups), ::bmodel::CreateCmdGroup(b));
    std::vector<flatbuffers::Offset<::bmodel::CpuParam>> params(size_t(s.params),
                                                                ::bmodel::CreateCpuParam(b, s.opType, &s.param));
    std::vector<int> next = s.next;
    if (next == std::vector<int>{-1}) next = i + 1 < specs.size() ? std::vector<int>{int(i + 1)} : std::vector<int>{};
    auto gv = s.groups ? b.CreateVector(groups) : 0;
    auto pv = s.params ? b.CreateVector(params) : 0;
    if (s.unsetIds) next = {-1};
    auto nv = next.empty() ? 0 : b.CreateVector(next);
    ::bmodel::SubNetBuilder sb(b);
    sb.add_subnet_mode(s.mode);
    if (s.groups) sb.add_cmd_group(gv);
    if (s.params) sb.add_cpu_param(pv);
    sb.add_id(s.unsetIds ? -1 : s.id == -1 ? int(i) : s.id);
    if (!next.empty()) sb.add_next_subnet_ids(nv);
    subnets.push_back(sb.Finish());
  }
  auto sv = b.CreateVector(subnets);
  std::vector<flatbuffers::Offset<::bmodel::CmdGroup>> netGroupList(size_t(netGroups), ::bmodel::CreateCmdGroup(b));
  auto ngv = b.CreateVector(netGroupList);
  ::bmodel::NetParameterBuilder pb(b);
  pb.add_sub_net(sv);
  if (netGroups) pb.add_cmd_group(ngv);
  std::vector<flatbuffers::Offset<::bmodel::NetParameter>> params{pb.Finish()};
  auto pv = b.CreateVector(params);
  std::vector<flatbuffers::Offset<::bmodel::Net>> nets{::bmodel::CreateNet(b, b.CreateString("n"), 0, 0, pv)};
  auto nv = b.CreateVector(nets);
  b.Finish(::bmodel::CreateModel(b, 0, 0, 0, b.CreateString("BM1684"), nv));
  std::vector<uint8_t> out(kHeaderSize, 0);
  const uint32_t head[4] = {kMagic, kHeaderSize, uint32_t(b.GetSize()), 16};
  std::memcpy(out.data(), head, sizeof head);
  out.insert(out.end(), b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  out.resize(out.size() + 16, 0);
  return out;
}

SubnetSpec tpuSpec() { return SubnetSpec{}; }
SubnetSpec cpuSpec() {
  SubnetSpec s;
  s.mode = 1;
  s.groups = 0;
  s.params = 1;
  return s;
}

} // namespace

TEST(BmodelSubnets, HandBuiltChainParses) {
  auto bytes = withSubnets({tpuSpec(), cpuSpec(), tpuSpec()});
  auto m = parse(bytes.data(), bytes.size());
  ASSERT_TRUE(m) << m.message();
  const Net &n = m->nets[0];
  EXPECT_EQ(n.groups.size(), 2u);
  ASSERT_EQ(n.subnets.size(), 3u);
  EXPECT_EQ(n.subnets[2].firstGroup, 1u);
  EXPECT_EQ(n.subnets[1].cpuParam.size(), 8u);
}

TEST(BmodelSubnets, BrokenOrderRejected) {
  SubnetSpec jump = cpuSpec();
  jump.next = {5};
  EXPECT_EQ(parseError(withSubnets({tpuSpec(), jump, tpuSpec()})),
            "net 0 'n': sub-net 1: next_subnet_ids {5} break the sub-net order (expected {2})");
  SubnetSpec fork = tpuSpec();
  fork.next = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(parseError(withSubnets({fork, cpuSpec(), tpuSpec()})),
            "net 0 'n': sub-net 0: next_subnet_ids {1, 2, 3, 4, ...} break the sub-net order (expected {1})");
  SubnetSpec loop = tpuSpec();
  loop.next = {0};
  EXPECT_EQ(parseError(withSubnets({tpuSpec(), cpuSpec(), loop})),
            "net 0 'n': sub-net 2: next_subnet_ids {0} break the sub-net order (expected {})");
  SubnetSpec renumbered = tpuSpec();
  renumbered.id = 7;
  EXPECT_EQ(parseError(withSubnets({tpuSpec(), cpuSpec(), renumbered})),
            "net 0 'n': sub-net 2: id 7 breaks the sub-net order (expected 2)");
}

TEST(BmodelSubnets, ModeAndContentsMustAgree) {
  SubnetSpec odd = tpuSpec();
  odd.mode = 7;
  EXPECT_EQ(parseError(withSubnets({odd})), "net 0 'n': sub-net 0: unknown subnet_mode 7 (0 TPU, 1 CPU)");
  SubnetSpec cpuWithGroups = cpuSpec();
  cpuWithGroups.groups = 1;
  EXPECT_EQ(parseError(withSubnets({tpuSpec(), cpuWithGroups})),
            "net 0 'n': sub-net 1: a CPU sub-net with 1 command group(s)");
  SubnetSpec cpuTwoParams = cpuSpec();
  cpuTwoParams.params = 2;
  EXPECT_EQ(parseError(withSubnets({cpuTwoParams})),
            "net 0 'n': sub-net 0: a CPU sub-net needs one cpu_param, it has 2");
  SubnetSpec cpuNoParam = cpuSpec();
  cpuNoParam.params = 0;
  EXPECT_EQ(parseError(withSubnets({cpuNoParam})), "net 0 'n': sub-net 0: a CPU sub-net needs one cpu_param, it has 0");
  SubnetSpec emptyTpu = tpuSpec();
  emptyTpu.groups = 0;
  EXPECT_EQ(parseError(withSubnets({emptyTpu})), "net 0 'n': sub-net 0: a TPU sub-net without command groups");
  SubnetSpec tpuWithParam = tpuSpec();
  tpuWithParam.params = 1;
  EXPECT_EQ(parseError(withSubnets({tpuWithParam})), "net 0 'n': sub-net 0: a TPU sub-net with a cpu_param");
  SubnetSpec negative = cpuSpec();
  negative.opType = -2;
  EXPECT_EQ(parseError(withSubnets({negative})), "net 0 'n': sub-net 0: negative op_type -2");
  EXPECT_EQ(parseError(withSubnets({tpuSpec()}, /*netGroups=*/2)),
            "net 0 'n': command groups in the net that are not a copy of its sub-nets'");
}

// TPU-MLIR writes a net of one TPU sub-net with id -1, next_subnet_ids {-1}, and a copy of its command
// groups at the net level (its yolov5s_bm1684_f32.bmodel does): read like any one-sub-net net.
TEST(BmodelSubnets, TpuMlirsLoneSubnetIsRead) {
  SubnetSpec lone = tpuSpec();
  lone.unsetIds = true;
  auto bytes = withSubnets({lone}, /*netGroups=*/1);
  auto m = parse(bytes.data(), bytes.size());
  ASSERT_TRUE(m.isOk()) << m.message();
  ASSERT_EQ(m->nets[0].subnets.size(), 1u);
  EXPECT_EQ(m->nets[0].groups.size(), 1u);
  // Unset ids are a lone sub-net's privilege.
  SubnetSpec second = tpuSpec();
  EXPECT_EQ(parseError(withSubnets({lone, second})),
            "net 0 'n': sub-net 0: id -1 breaks the sub-net order (expected 0)");
}

TEST(BmodelSubnets, BinaryParamOutsideBlobRejected) {
  SubnetSpec far = cpuSpec();
  far.param = ::bmodel::Binary(12, 8);
  EXPECT_EQ(parseError(withSubnets({tpuSpec(), far})),
            "net 0 'n': sub-net 1: binary_param range [12, +8) lies outside the 16-byte binary blob");
  far.param = ::bmodel::Binary(~0ull - 2, 8); // start + size overflows 64 bits
  EXPECT_EQ(parseError(withSubnets({far})),
            "net 0 'n': sub-net 0: binary_param range [18446744073709551613, +8) lies outside the 16-byte binary "
            "blob");
}

TEST(BmodelLimits, TooManySubnetsRejected) {
  std::vector<SubnetSpec> specs(kMaxSubnetsPerNet + 1, tpuSpec());
  for (auto &s : specs) s.next = {}; // only the count is looked at
  EXPECT_EQ(parseError(withSubnets(specs)), "net 0 'n': 65537 sub-nets (limit 65536)");
}

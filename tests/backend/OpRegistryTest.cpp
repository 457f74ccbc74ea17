// The back end's op table: every kind of OpKinds.def has exactly one
// implementation, registered for that kind (none under two kinds), with a
// check, a reference and exactly one emitter; the shared checks of
// Graph::validate read the kind's line of the table.
#include "BackendHarness.h"

#include "compiler/Backend/OpRegistry.h"

#include <iterator>
#include <set>
#include <string>

namespace tpu::backend::test {
namespace {

struct DefLine {
  OpKind kind;
  const char *name;
  size_t minInputs, maxInputs;
  bool takesWeights, sharesInputBytes;
};
const DefLine kDef[] = {
#define TPU_OP_KIND(Name, MinInputs, MaxInputs, TakesWeights, SharesInputBytes) \
  {OpKind::Name, #Name, MinInputs, MaxInputs, TakesWeights, SharesInputBytes},
#include "compiler/Backend/OpKinds.def"
};

TEST(BackendOpRegistry, EveryKindHasExactlyOneImplementation) {
  ASSERT_EQ(std::size(kDef), kOpKindCount);
  std::set<const OpImpl *> impls;
  std::set<std::string> names;
  for (const DefLine &d : kDef) {
    SCOPED_TRACE(d.name);
    const OpImpl &impl = opImpl(d.kind);
    EXPECT_EQ(impl.kind, d.kind) << "ops::" << d.name << " is registered for " << opKindName(impl.kind);
    EXPECT_TRUE(impls.insert(&impl).second) << "one implementation registered for two kinds";
    EXPECT_TRUE(names.insert(d.name).second) << "kind listed twice";
    EXPECT_STREQ(opKindName(d.kind), d.name);
    EXPECT_NE(impl.validate, nullptr);
    EXPECT_NE(impl.evaluate == nullptr, impl.evaluateOnHost == nullptr)
        << "needs exactly one reference (evaluate, or evaluateOnHost for a host op)";
    EXPECT_NE(impl.sliced == nullptr, impl.direct == nullptr) << "needs exactly one emitter (sliced or direct)";
    const OpKindInfo &info = opKindInfo(d.kind);
    EXPECT_STREQ(info.name, d.name);
    EXPECT_EQ(info.minInputs, d.minInputs);
    EXPECT_EQ(info.maxInputs, d.maxInputs);
    EXPECT_EQ(info.takesWeights, d.takesWeights);
    EXPECT_EQ(info.sharesInputBytes, d.sharesInputBytes);
    EXPECT_GE(info.minInputs, 1u);
    EXPECT_LE(info.minInputs, info.maxInputs);
  }
  EXPECT_EQ(impls.size(), kOpKindCount);
}

// A graph of one op of kind k reading `inputs` activations (1, 8, 4, 4),
// the graph's inputs, and optionally a weight; fp32.
Graph oneOp(OpKind k, size_t inputs, bool withWeight) {
  GraphBuilder gb;
  for (size_t i = 0; i < inputs; ++i) gb.g.inputs.push_back(gb.act("x" + std::to_string(i), {1, 8, 4, 4}, DType::F32));
  std::vector<int> in = gb.g.inputs;
  if (withWeight) in.push_back(gb.weight("w", {8}, DType::F32));
  int y = gb.act("y", {1, 8, 4, 4}, DType::F32);
  gb.op(k, "op", in, y);
  gb.g.outputs = {y};
  return gb.g;
}

TEST(BackendOpRegistry, SharedChecksFollowTheTable) {
  for (const DefLine &d : kDef) {
    SCOPED_TRACE(d.name);
    if (d.maxInputs < 4096) {
      Status st = oneOp(d.kind, d.maxInputs + 1, false).validate();
      EXPECT_NE(st.message().find(std::string(d.name) + " 'op': takes "), std::string::npos) << st.message();
      EXPECT_NE(st.message().find("inputs, has " + std::to_string(d.maxInputs + 1)), std::string::npos)
          << st.message();
    }
    if (!d.takesWeights) {
      Status st = oneOp(d.kind, d.minInputs, true).validate();
      EXPECT_EQ(st.message(), std::string(d.name) + " 'op': input 'w' is a weight; " + d.name + " takes activations");
    }
  }
}

} // namespace
} // namespace tpu::backend::test

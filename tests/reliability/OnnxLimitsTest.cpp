// Resource limits of the ONNX reader (issue 8): an initializer whose dims
// claim 2^40 elements is rejected, naming the tensor, before its storage is
// allocated (4 TiB of float32 would abort the test with std::bad_alloc).
#include "compiler/Import/OnnxModel.h"

#include "onnx/onnx_pb.h"

#include <gtest/gtest.h>

namespace pb = ::onnx;

namespace {

// A graph y = Identity(w) with the float initializer `w` of `dims`, holding
// `rawBytes` bytes of raw data (none: no data fields at all).
std::string modelWithInitializer(const std::vector<int64_t> &dims, size_t rawBytes) {
  pb::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  pb::GraphProto *g = m.mutable_graph();
  g->set_name("limits");
  pb::TensorProto *w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(pb::TensorProto::FLOAT);
  for (int64_t d : dims) w->add_dims(d);
  if (rawBytes) w->set_raw_data(std::string(rawBytes, '\0'));
  pb::NodeProto *n = g->add_node();
  n->set_op_type("Identity");
  n->add_input("w");
  n->add_output("y");
  pb::ValueInfoProto *y = g->add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(pb::TensorProto::FLOAT);
  return m.SerializeAsString();
}

std::string parseError(const std::string &bytes) {
  auto m = tpu::onnx::parseModel(bytes.data(), bytes.size(), "");
  EXPECT_FALSE(m) << "accepted";
  return m ? "" : m.message();
}

} // namespace

TEST(OnnxLimits, InitializerOf2To40ElementsWithoutDataRejected) {
  std::string e = parseError(modelWithInitializer({1 << 20, 1 << 20}, 0));
  EXPECT_EQ(e, "initializer: tensor 'w': has 0 values but its shape 1048576x1048576 needs 1099511627776");
}

TEST(OnnxLimits, InitializerOf2To40ElementsWithSmallRawDataRejected) {
  std::string e = parseError(modelWithInitializer({1 << 20, 1 << 20}, 16));
  EXPECT_EQ(e, "initializer: tensor 'w': has 4 values but its shape 1048576x1048576 needs 1099511627776");
}

TEST(OnnxLimits, InitializerBeyond2To40ElementsRejected) {
  EXPECT_EQ(parseError(modelWithInitializer({1 << 21, 1 << 20}, 0)), "initializer: tensor 'w': bad dims");
  EXPECT_EQ(parseError(modelWithInitializer({int64_t(1) << 62, int64_t(1) << 62}, 0)),
            "initializer: tensor 'w': bad dims");
  EXPECT_EQ(parseError(modelWithInitializer({4, -1}, 0)), "initializer: tensor 'w': bad dims");
}

TEST(OnnxLimits, MatchingDataIsStillAccepted) {
  auto bytes = modelWithInitializer({2, 3}, 24);
  auto m = tpu::onnx::parseModel(bytes.data(), bytes.size(), "");
  ASSERT_TRUE(m) << m.message();
  ASSERT_EQ(m->initializers.count("w"), 1u);
  EXPECT_EQ(m->initializers.at("w").data.size(), 24u);
}

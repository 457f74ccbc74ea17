// 16-bit float graphs (Graph.h): a 16-bit float op is checked and evaluated as its fp32 form on its inputs
// widened exactly, the result rounded once (support/Float16.h); only a Cast changes a tensor's float type;
// the BM1684 refuses them.
#include "compiler/Backend/CodeGen.h"
#include "compiler/Backend/Ops/Window.h"
#include "compiler/Backend/QuantRef.h"
#include "support/Float16.h"
#include "tests/backend/BackendHarness.h"

#include <gtest/gtest.h>

using namespace tpu;
using namespace tpu::backend;
using namespace tpu::backend::test;

namespace {

std::vector<float> asFloats(const Bytes &b) {
  std::vector<float> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}
std::vector<uint16_t> asHalves(const Bytes &b) {
  std::vector<uint16_t> v(b.size() / 2);
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

} // namespace

// Cast in, an Add and a 1x1 conv in F16 or BF16, Cast out: each value equals the fp32 computation on the
// widened values, rounded to the type after each op.
TEST(HalfGraph, OpsComputeTheirFp32FormRoundedOnce) {
  for (DType half : {DType::F16, DType::BF16}) {
    GraphBuilder b;
    int x = b.act("x", {1, 3, 2, 2}, DType::F32), h = b.act("h", {1, 3, 2, 2}, half);
    b.op(OpKind::Cast, "in", {x}, h);
    int s = b.act("s", {1, 3, 2, 2}, half);
    b.op(OpKind::Add, "s", {h, h}, s);
    int w = b.weight("w", {2, 3, 1, 1}, half), bias = b.weight("bias", {2}, DType::F32);
    int c = b.act("c", {1, 2, 2, 2}, half), y = b.act("y", {1, 2, 2, 2}, DType::F32);
    WindowParams &p = b.op(OpKind::Conv, "c", {s, w, bias}, c).params<WindowParams>();
    p.kh = p.kw = 1;
    b.op(OpKind::Cast, "out", {c}, y);
    b.g.inputs = {x};
    b.g.outputs = {y};
    ASSERT_TRUE(b.g.validate().isOk()) << b.g.validate().message();
    Bytes in(12 * 4);
    const float xs[12] = {1.0f,     1.0009766f, 0.33333334f, -2.5f, 65504.0f, 1e-6f,
                          3.14159f, -0.1f,      7.0f,        1e-3f, 0.5f,     2.0f};
    std::memcpy(in.data(), xs, sizeof xs);
    auto values = evalGraph(b.g, {in});
    ASSERT_TRUE(values.isOk()) << values.message();
    auto widen = [&](uint16_t v) { return half == DType::F16 ? f16ToFloat(v) : bf16ToFloat(v); };
    auto round = [&](float v) { return half == DType::F16 ? floatToF16(v) : floatToBf16(v); };
    const std::vector<uint16_t> hv = asHalves((*values)[size_t(h)]), sv = asHalves((*values)[size_t(s)]);
    const std::vector<uint16_t> cv = asHalves((*values)[size_t(c)]), wv = asHalves(b.g.tensors[size_t(w)].data);
    const std::vector<float> bv = asFloats(b.g.tensors[size_t(bias)].data), yv = asFloats((*values)[size_t(y)]);
    for (size_t i = 0; i < 12; ++i) {
      EXPECT_EQ(hv[i], round(xs[i])) << i;
      EXPECT_EQ(sv[i], round(widen(hv[i]) + widen(hv[i]))) << i; // 65504 + 65504 overflows fp16 to infinity
    }
    for (size_t o = 0; o < 2; ++o)
      for (size_t q = 0; q < 4; ++q) {
        float acc = 0.0f; // the conv's fp32 order: the products summed from 0, then the bias
        for (size_t i = 0; i < 3; ++i) acc += widen(sv[i * 4 + q]) * widen(wv[o * 3 + i]);
        acc += bv[o];
        EXPECT_EQ(cv[o * 4 + q], round(acc)) << o << "," << q;
        EXPECT_EQ(yv[o * 4 + q], widen(cv[o * 4 + q]));
      }
    EXPECT_EQ(sv[4], half == DType::F16 ? 0x7c00 : round(131008.0f));
  }
}

TEST(HalfGraph, OnlyACastChangesTheFloatType) {
  GraphBuilder b;
  int x = b.act("x", {1, 4}, DType::F16), y = b.act("y", {1, 4}, DType::F32);
  b.op(OpKind::Relu, "r", {x}, y);
  b.g.inputs = {x};
  b.g.outputs = {y};
  EXPECT_EQ(b.g.validate().message(), "Relu 'r': output 'y' is float32 but inputs are 16-bit floats: only a Cast "
                                      "changes a tensor's float type");
  GraphBuilder m;
  int a = m.act("a", {1, 4}, DType::F16), c = m.act("c", {1, 4}, DType::BF16), s = m.act("s", {1, 4}, DType::BF16);
  m.op(OpKind::Add, "s", {a, c}, s);
  m.g.inputs = {a, c};
  m.g.outputs = {s};
  EXPECT_EQ(m.g.validate().message(), "Add 's': input 'a' is float16, the output bfloat16");
}

TEST(HalfGraph, TheBm1684RefusesThem) {
  GraphBuilder b;
  int x = b.act("x", {1, 4}, DType::F32), h = b.act("h", {1, 4}, DType::F16), y = b.act("y", {1, 4}, DType::F32);
  b.op(OpKind::Cast, "in", {x}, h);
  b.op(OpKind::Cast, "out", {h}, y);
  b.g.inputs = {x};
  b.g.outputs = {y};
  ASSERT_TRUE(b.g.validate().isOk()) << b.g.validate().message();
  auto model = compileToBmodel(b.g, Options{});
  ASSERT_FALSE(model.isOk());
  EXPECT_EQ(model.message(), "tensor 'h' is float16: the BM1684 has no 16-bit float arithmetic");
}

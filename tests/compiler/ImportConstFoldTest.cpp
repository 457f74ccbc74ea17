// Constant folding and ONNX normalisation rules of the importer (plain C++).
#include "compiler/Import/ConstFold.h"

#include <gtest/gtest.h>

using namespace tpu;
using namespace tpu::onnx;

namespace {

NpyArray ints(std::vector<int64_t> shape, std::vector<int64_t> v) { return NpyArray::from<int64_t>(shape, v); }
NpyArray floats(std::vector<int64_t> shape, std::vector<float> v) { return NpyArray::from<float>(shape, v); }

TEST(ImportConstFold, ReshapeTargetCopiesZerosAndInfersMinusOne) {
  auto r = reshapeTarget({2, 3, 4}, {0, -1}, false);
  ASSERT_TRUE(r) << r.message();
  EXPECT_EQ(*r, (std::vector<int64_t>{2, 12}));
  auto z = reshapeTarget({2, 0, 4}, {0, 4}, true); // allowzero keeps the literal 0
  ASSERT_TRUE(z) << z.message();
  EXPECT_EQ(*z, (std::vector<int64_t>{0, 4}));
  EXPECT_FALSE(reshapeTarget({2, 3}, {-1, -1}, false));
  EXPECT_FALSE(reshapeTarget({2, 3}, {4, -1}, false));
  EXPECT_FALSE(reshapeTarget({2, 3}, {7}, false));
}

TEST(ImportConstFold, SqueezeUnsqueezeFlatten) {
  EXPECT_EQ(*squeezeShape({1, 3, 1, 4}, {}), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(*squeezeShape({1, 3, 1, 4}, {-2}), (std::vector<int64_t>{1, 3, 4}));
  EXPECT_FALSE(squeezeShape({1, 3}, {1}));
  EXPECT_EQ(*unsqueezeShape({3, 4}, {0, -1}), (std::vector<int64_t>{1, 3, 4, 1}));
  EXPECT_FALSE(unsqueezeShape({3}, {0, 0}));
  EXPECT_EQ(flattenShape({2, 3, 4}, 0), (std::vector<int64_t>{1, 24}));
  EXPECT_EQ(flattenShape({2, 3, 4}, 2), (std::vector<int64_t>{6, 4}));
}

TEST(ImportConstFold, SliceClampsLikeOnnx) {
  auto p = normalizeSlice({10, 5}, {-3, INT64_MAX}, {INT64_MAX, -INT64_MAX}, {0, 1}, {1, -2});
  ASSERT_TRUE(p) << p.message();
  EXPECT_EQ(p->starts, (std::vector<int64_t>{7, 4}));
  EXPECT_EQ(p->ends, (std::vector<int64_t>{10, -1}));
  EXPECT_EQ(p->steps, (std::vector<int64_t>{1, -2}));
  NpyArray a = ints({10, 5}, [] {
    std::vector<int64_t> v(50);
    for (int i = 0; i < 50; ++i) v[i] = i;
    return v;
  }());
  NpyArray s = sliceArray(a, *p);
  EXPECT_EQ(s.shape, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(s.values<int64_t>(), (std::vector<int64_t>{39, 37, 35, 44, 42, 40, 49, 47, 45}));
  EXPECT_FALSE(normalizeSlice({4}, {0}, {4}, {}, {0}));
  EXPECT_FALSE(normalizeSlice({4}, {0}, {4}, {3}, {}));
}

TEST(ImportConstFold, BinaryBroadcastsAndKeepsIntegers) {
  auto r = binaryArray("Mul", ints({2, 1}, {2, 3}), ints({3}, {1, 10, 100}));
  ASSERT_TRUE(r) << r.message();
  EXPECT_EQ(r->dtype, "int64");
  EXPECT_EQ(r->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r->values<int64_t>(), (std::vector<int64_t>{2, 20, 200, 3, 30, 300}));
  auto f = binaryArray("Div", floats({2}, {1, 3}), floats({}, {2}));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->values<float>(), (std::vector<float>{0.5f, 1.5f}));
  auto eq = binaryArray("Equal", ints({3}, {1, 2, 3}), ints({1}, {2}));
  ASSERT_TRUE(eq);
  EXPECT_EQ(eq->dtype, "bool");
  EXPECT_EQ(eq->data, (std::vector<uint8_t>{0, 1, 0}));
  EXPECT_FALSE(binaryArray("Add", ints({2}, {1, 2}), ints({3}, {1, 2, 3})));
  EXPECT_FALSE(binaryArray("Div", ints({1}, {1}), ints({1}, {0})));
}

TEST(ImportConstFold, ShapeChainGatherConcatCast) {
  // Shape(x)[0] concatenated with -1, as exporters write x.view(x.size(0), -1).
  NpyArray shape = ints({4}, {8, 3, 4, 4});
  auto n = gatherArray(shape, ints({}, {0}), 0);
  ASSERT_TRUE(n);
  EXPECT_TRUE(n->shape.empty());
  NpyArray n1 = reshapeArray(*n, {1});
  NpyArray minus1 = ints({1}, {-1});
  auto target = concatArrays({&n1, &minus1}, 0);
  ASSERT_TRUE(target);
  EXPECT_EQ(target->values<int64_t>(), (std::vector<int64_t>{8, -1}));
  NpyArray f = castArray(*target, "float32");
  EXPECT_EQ(f.values<float>(), (std::vector<float>{8, -1}));
  EXPECT_FALSE(gatherArray(shape, ints({1}, {4}), 0));
  auto neg = gatherArray(shape, ints({2}, {-1, 1}), 0);
  ASSERT_TRUE(neg);
  EXPECT_EQ(neg->values<int64_t>(), (std::vector<int64_t>{4, 3}));
}

TEST(ImportConstFold, TransposeWhereExpand) {
  NpyArray a = floats({2, 3}, {0, 1, 2, 3, 4, 5});
  NpyArray t = transposeArray(a, {1, 0});
  EXPECT_EQ(t.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(t.values<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  NpyArray cond;
  cond.dtype = "bool";
  cond.shape = {3};
  cond.data = {1, 0, 1};
  auto w = whereArray(cond, floats({3}, {1, 2, 3}), floats({}, {-1}));
  ASSERT_TRUE(w);
  EXPECT_EQ(w->values<float>(), (std::vector<float>{1, -1, 3}));
  auto e = expandArray(floats({2, 1}, {1, 2}), {2, 3});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->values<float>(), (std::vector<float>{1, 1, 1, 2, 2, 2}));
}

// ONNX Mod: fmod=0 takes the divisor's sign (numpy.mod), fmod=1 the dividend's (numpy.fmod).
TEST(ImportConstFold, ModFollowsTheDivisorFmodTheDividend) {
  auto m = binaryArray("Mod", ints({4}, {-7, 7, -7, 6}), ints({4}, {3, -3, -3, 3}));
  ASSERT_TRUE(m) << m.message();
  EXPECT_EQ(m->values<int64_t>(), (std::vector<int64_t>{2, -2, -1, 0}));
  auto f = binaryArray("Fmod", ints({2}, {-7, 7}), ints({2}, {3, -3}));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->values<int64_t>(), (std::vector<int64_t>{-1, 1}));
  auto ff = binaryArray("Fmod", floats({2}, {-7.5f, 5.5f}), floats({}, {2}));
  ASSERT_TRUE(ff);
  EXPECT_EQ(ff->values<float>(), (std::vector<float>{-1.5f, 1.5f}));
  EXPECT_FALSE(binaryArray("Mod", ints({1}, {5}), ints({1}, {0})));
}

TEST(ImportConstFold, LogicAndComparisonsGiveBool) {
  auto le = binaryArray("LessOrEqual", ints({3}, {1, 2, 3}), ints({}, {2}));
  ASSERT_TRUE(le);
  EXPECT_EQ(le->dtype, "bool");
  EXPECT_EQ(le->data, (std::vector<uint8_t>{1, 1, 0}));
  auto ge = binaryArray("GreaterOrEqual", ints({3}, {1, 2, 3}), ints({}, {2}));
  ASSERT_TRUE(ge);
  EXPECT_EQ(ge->data, (std::vector<uint8_t>{0, 1, 1}));
  NpyArray a = castArray(ints({4}, {0, 0, 1, 1}), "bool"), b = castArray(ints({4}, {0, 1, 0, 1}), "bool");
  EXPECT_EQ(binaryArray("And", a, b)->data, (std::vector<uint8_t>{0, 0, 0, 1}));
  EXPECT_EQ(binaryArray("Or", a, b)->data, (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(binaryArray("Xor", a, b)->data, (std::vector<uint8_t>{0, 1, 1, 0}));
  auto no = unaryArray("Not", a);
  ASSERT_TRUE(no);
  EXPECT_EQ(no->dtype, "bool");
  EXPECT_EQ(no->data, (std::vector<uint8_t>{1, 1, 0, 0}));
}

TEST(ImportConstFold, SignKeepsIntegersRoundIsHalfToEven) {
  auto s = unaryArray("Sign", ints({3}, {-4, 0, 9}));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->dtype, "int64");
  EXPECT_EQ(s->values<int64_t>(), (std::vector<int64_t>{-1, 0, 1}));
  auto r = unaryArray("Round", floats({5}, {0.5f, 1.5f, 2.5f, -0.5f, 2.6f}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->values<float>(), (std::vector<float>{0, 2, 2, -0.0f, 3}));
}

TEST(ImportConstFold, ReduceOverAxesKeepsDtype) {
  // ReduceProd of Shape[1:]: x.numel() // batch.
  auto prod = reduceArray("Prod", ints({3}, {3, 4, 5}), {0}, true);
  ASSERT_TRUE(prod) << prod.message();
  EXPECT_EQ(prod->dtype, "int64");
  EXPECT_EQ(prod->shape, (std::vector<int64_t>{1}));
  EXPECT_EQ(prod->values<int64_t>(), (std::vector<int64_t>{60}));
  NpyArray m = floats({2, 3}, {1, 5, 3, -2, 0, 4});
  EXPECT_EQ(reduceArray("Sum", m, {1}, false)->values<float>(), (std::vector<float>{9, 2}));
  EXPECT_EQ(reduceArray("Max", m, {0}, false)->values<float>(), (std::vector<float>{1, 5, 4}));
  EXPECT_EQ(reduceArray("Min", m, {0, 1}, false)->values<float>(), (std::vector<float>{-2}));
  auto mean = reduceArray("Mean", m, {1}, true);
  ASSERT_TRUE(mean);
  EXPECT_EQ(mean->shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(mean->values<float>(), (std::vector<float>{3, 2.0f / 3}));
  EXPECT_FALSE(reduceArray("L2", m, {1}, true));
}

TEST(ImportConstFold, TileRepeatsEachDim) {
  auto t = tileArray(ints({2, 2}, {1, 2, 3, 4}), {2, 1});
  ASSERT_TRUE(t) << t.message();
  EXPECT_EQ(t->shape, (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(t->values<int64_t>(), (std::vector<int64_t>{1, 2, 3, 4, 1, 2, 3, 4}));
  auto w = tileArray(floats({1, 2}, {7, 8}), {1, 3});
  ASSERT_TRUE(w);
  EXPECT_EQ(w->values<float>(), (std::vector<float>{7, 8, 7, 8, 7, 8}));
  EXPECT_FALSE(tileArray(ints({2}, {1, 2}), {1, 1}));
  EXPECT_FALSE(tileArray(ints({2}, {1, 2}), {-1}));
}

} // namespace

// Host ops (kernels/HostOps.h): hand-computed results, the checks that keep
// a bmodel's host call honest, and the serialized form's round trip and
// its rejections.
#include "kernels/HostOps.h"

#include <gtest/gtest.h>

using namespace tpu::kernels;

namespace {

// Runs op `name` and returns its results, which must have `outShapes`.
std::vector<std::vector<float>> run(const std::string &name, const HostAttrs &a, std::vector<ConstView> in,
                                    std::vector<Shape> outShapes, std::string *error = nullptr) {
  auto results = runHostOp(name, a, in);
  if (error)
    *error = results ? "" : results.message();
  else
    EXPECT_TRUE(results) << results.message();
  std::vector<std::vector<float>> values;
  if (!results) return values;
  for (size_t i = 0; i < results->size(); ++i) {
    EXPECT_EQ((*results)[i].shape, outShapes.at(i)) << name << " result " << i;
    values.push_back((*results)[i].values);
  }
  return values;
}

TEST(HostOps, TopKSortsAndBreaksTiesByTheLowerIndex) {
  const std::vector<float> x = {3, 1, 3, 2, /* row 2 */ 0, 5, -1, 5};
  HostAttrs a;
  a.setInts("axis", {1});
  a.setInts("k", {2});
  auto r = run("top.topk", a, {{{2, 4}, x.data()}}, {{2, 2}, {2, 2}});
  EXPECT_EQ(r[0], (std::vector<float>{3, 3, 5, 5}));
  EXPECT_EQ(r[1], (std::vector<float>{0, 2, 1, 3}));
  a.setInts("largest", {0});
  r = run("top.topk", a, {{{2, 4}, x.data()}}, {{2, 2}, {2, 2}});
  EXPECT_EQ(r[0], (std::vector<float>{1, 2, -1, 0}));
  EXPECT_EQ(r[1], (std::vector<float>{1, 3, 2, 0}));
}

TEST(HostOps, ArgMaxCastAndGather) {
  const std::vector<float> x = {1, 7, 7, 2, 9, 0};
  HostAttrs a;
  a.setInts("axis", {1});
  a.setInts("keepdims", {0});
  EXPECT_EQ(run("top.arg_max", a, {{{2, 3}, x.data()}}, {{2}})[0], (std::vector<float>{1, 1}));
  a.setInts("select_last_index", {1});
  EXPECT_EQ(run("top.arg_max", a, {{{2, 3}, x.data()}}, {{2}})[0], (std::vector<float>{2, 1}));
  HostAttrs cast;
  cast.setText("to", "i64");
  const std::vector<float> f = {-1.5f, 2.7f, 0.0f};
  EXPECT_EQ(run("top.cast", cast, {{{3}, f.data()}}, {{3}})[0], (std::vector<float>{-1, 2, 0}));
  HostAttrs gather;
  gather.setInts("axis", {0});
  const std::vector<float> idx = {-1, 0};
  EXPECT_EQ(run("top.gather", gather, {{{2, 3}, x.data()}, {{2}, idx.data()}}, {{2, 3}})[0],
            (std::vector<float>{2, 9, 0, 1, 7, 7}));
  std::string error;
  const std::vector<float> bad = {2};
  run("top.gather", gather, {{{2, 3}, x.data()}, {{1}, bad.data()}}, {{1, 3}}, &error);
  EXPECT_EQ(error, "index 2 out of range for dim 0 of size 2");
}

TEST(HostOps, RefusesAttributesAndOpsItDoesNotKnow) {
  const std::vector<float> x = {1, 2, 3, 4};
  HostAttrs a;
  a.setInts("axis", {0});
  std::string error;
  a.setInts("k", {5});
  run("top.topk", a, {{{4}, x.data()}}, {{5}, {5}}, &error);
  EXPECT_EQ(error, "top.topk: k 5 is not in [0, 4]");
  run("top.nothing", a, {{{4}, x.data()}}, {{4}}, &error);
  EXPECT_EQ(error, "top.nothing is not a host op");
}

// Two classes over four boxes [y1, x1, y2, x2], hand-computed: boxes 0 and 1
// overlap with IoU 0.8 / 1.2, boxes 2 and 3 with 0.9 / 1.1.
TEST(HostOps, NonMaxSuppressionKeepsTheBestOfEachOverlapPerClass) {
  const std::vector<float> boxes = {0,
                                    0,
                                    1,
                                    1,
                                    /* IoU with 0: 0.8/1.2 */ 0,
                                    0.2f,
                                    1,
                                    1.2f,
                                    /* apart */ 0,
                                    5,
                                    1,
                                    6,
                                    /* corners swapped */ 1,
                                    6.1f,
                                    0,
                                    5.1f};
  const std::vector<float> scores = {0.9f, 0.95f, 0.3f, 0.2f, /* class 1 */ 0.1f, 0.1f, 0.8f, 0.7f};
  HostAttrs a;
  a.setInts("max_output_boxes_per_class", {3});
  a.setReals("iou_threshold", {0.5});
  // Class 0: 1 (0.95), 0 suppressed (IoU 0.667), 2, 3 suppressed by 2 (IoU 0.82).
  // Class 1: 2, 3 suppressed, 0 (tie with 1: the lower index), 1 suppressed.
  auto r = run("top.nms", a, {{{1, 4, 4}, boxes.data()}, {{1, 2, 4}, scores.data()}}, {{4, 3}});
  EXPECT_EQ(r[0], (std::vector<float>{0, 0, 1, 0, 0, 2, 0, 1, 2, 0, 1, 0}));
  // A score threshold drops the low boxes before suppression; the bound is
  // batches x classes x min(max, boxes) rows.
  a.setReals("score_threshold", {0.5});
  r = run("top.nms", a, {{{1, 4, 4}, boxes.data()}, {{1, 2, 4}, scores.data()}}, {{2, 3}});
  EXPECT_EQ(r[0], (std::vector<float>{0, 0, 1, 0, 1, 2}));
  auto bound = findHostOp("top.nms")->inferShapes(a, {{1, 4, 4}, {1, 2, 4}});
  ASSERT_TRUE(bound);
  EXPECT_EQ((*bound)[0], (Shape{6, 3}));
  std::string error;
  run("top.nms", a, {{{1, 4, 4}, boxes.data()}, {{1, 2, 3}, scores.data()}}, {}, &error);
  EXPECT_EQ(error, "top.nms: scores must be [batches, classes, boxes] = [1, classes, 4]");
}

TEST(HostOps, NonZeroListsCoordinatesPerDimension) {
  const std::vector<float> x = {0, 2, 0, /* row 1 */ -1, 0, 0.5f};
  auto r = run("top.nonzero", {}, {{{2, 3}, x.data()}}, {{2, 3}});
  EXPECT_EQ(r[0], (std::vector<float>{0, 1, 1, /* columns */ 1, 0, 2}));
  const std::vector<float> zeros(4, 0.0f);
  r = run("top.nonzero", {}, {{{4}, zeros.data()}}, {{1, 0}});
  EXPECT_TRUE(r[0].empty());
}

// A call whose result came from the data must fit the room the model has.
TEST(HostOps, CallRefusesAResultBeyondItsRoom) {
  const std::vector<float> x = {1, 2, 3};
  HostCall c;
  c.code = findHostOp("top.nonzero")->code;
  c.resultShapes = {{1, 2}};
  auto r = c.run({{{3}, x.data()}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(), "top.nonzero: result 0 is 1x3, larger than the 1x2 the model has room for");
  c.resultShapes = {{1, 3}};
  r = c.run({{{3}, x.data()}});
  ASSERT_TRUE(r) << r.message();
  EXPECT_EQ(r->shape, (Shape{1, 3}));
}

HostCall topkCall() {
  HostCall c;
  c.code = findHostOp("top.topk")->code;
  c.attrs.setInts("axis", {1});
  c.attrs.setInts("k", {2});
  c.attrs.setReals("unused", {0.5});
  c.attrs.setText("note", "x");
  c.resultShapes = {{1, 2}, {1, 2}};
  c.result = 1;
  return c;
}

TEST(HostOps, HostCallRoundTripsAndRuns) {
  const HostCall c = topkCall();
  const auto bytes = c.serialize();
  auto back = HostCall::parse(bytes.data(), bytes.size());
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(back->code, c.code);
  EXPECT_EQ(back->result, 1u);
  EXPECT_EQ(back->resultShapes, c.resultShapes);
  EXPECT_TRUE(back->attrs == c.attrs);
  EXPECT_EQ(back->describe(), "top.topk result 1 of 2 (axis=1 k=2 note=x unused=0.5)");
  const std::vector<float> x = {4, 9, 1};
  auto y = back->run({{{1, 3}, x.data()}});
  ASSERT_TRUE(y) << y.message();
  EXPECT_EQ(y->values, (std::vector<float>{1, 0}));
}

TEST(HostOps, HostCallParseNamesWhatIsWrong) {
  auto bytes = topkCall().serialize();
  auto parse = [](const std::vector<uint8_t> &b) {
    auto r = HostCall::parse(b.data(), b.size());
    return r ? std::string("ok") : r.message();
  };
  auto cut = bytes;
  cut.pop_back();
  EXPECT_EQ(parse(cut), "host op parameters are truncated or oversized (" + std::to_string(cut.size()) + " bytes)");
  auto longer = bytes;
  longer.push_back(0);
  EXPECT_EQ(parse(longer), "top.topk: bytes after the host op parameters");
  auto unknown = bytes;
  unknown[0] = 0xEE;
  EXPECT_EQ(parse(unknown), "unknown host op code 238");
  auto result = bytes;
  result[4] = 7;
  EXPECT_EQ(parse(result), "top.topk: result 7 of 2 (the op has 2)");
  EXPECT_EQ(parse({}), "host op parameters are truncated or oversized (0 bytes)");
}

} // namespace

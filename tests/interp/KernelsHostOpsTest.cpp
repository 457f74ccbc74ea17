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

// The shape read at run time, within its bound; a dim past it (a corrupt
// bmodel's or a wrong bound) is an error, not a write past the buffer.
TEST(HostOps, ConstantOfShapeFillsTheShapeReadAtRunTime) {
  HostAttrs a;
  a.setInts("bound", {1, 8});
  a.setReals("value", {7.0});
  const std::vector<float> shape = {1, 3};
  EXPECT_EQ(run("top.constant_of_shape", a, {{{2}, shape.data()}}, {{1, 3}})[0], (std::vector<float>{7, 7, 7}));
  std::string error;
  const std::vector<float> past = {1, 9};
  run("top.constant_of_shape", a, {{{2}, past.data()}}, {}, &error);
  EXPECT_NE(error.find("dim 1 of the shape is 9, outside [0, 8] (its bound)"), std::string::npos) << error;
  const std::vector<float> rank3 = {1, 2, 3};
  run("top.constant_of_shape", a, {{{3}, rank3.data()}}, {}, &error);
  EXPECT_NE(error.find("the shape input has shape 3, not 2"), std::string::npos) << error;
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

// Two 3x3 images, 3y + x and 3y + x + 100: bilinear interpolation of a
// plane is exact, so each sample is 3y + x at its point (clamped at the
// edges), by hand. rois (x1, y1, x2, y2).
TEST(HostOps, RoiAlignSamplesBilinearlyPerRoi) {
  std::vector<float> x(18);
  for (int i = 0; i < 9; ++i) x[size_t(i)] = float(i), x[size_t(i + 9)] = float(i + 100);
  // 0: samples at 0.5 and 1.5 per side, mean 4. 1: in image 1, x at 2.25 and
  // 2.75 clamp to the last column 2, y at 0.25 and 0.75: 103.5. 2: every
  // sample left of -1 and above -1 counts 0.
  std::vector<float> rois = {0, 0, 2, 2, /* 1 */ 2, 0, 3, 1, /* 2 */ -4, -4, -2, -2};
  const std::vector<float> batch = {0, 1, 0};
  HostAttrs a;
  a.setInts("sampling_ratio", {2});
  a.setText("coordinate_transformation_mode", "output_half_pixel");
  const Shape xs = {2, 1, 3, 3}, rs = {3, 4}, bs = {3};
  auto r = run("top.roi_align", a, {{xs, x.data()}, {rs, rois.data()}, {bs, batch.data()}}, {{3, 1, 1, 1}});
  EXPECT_EQ(r[0], (std::vector<float>{4, 103.5f, 0}));
  // max: onnxruntime's largest weighted corner term, not the largest sample.
  // Roi 0's sample (1.5, 1.5) weighs its corners 4, 5, 7, 8 by 1/4: 2; roi
  // 1's (2, 0.75): 0.25 * 102 and 0.75 * 105 = 78.75.
  a.setText("mode", "max");
  r = run("top.roi_align", a, {{xs, x.data()}, {rs, rois.data()}, {bs, batch.data()}}, {{3, 1, 1, 1}});
  EXPECT_EQ(r[0], (std::vector<float>{2, 78.75f, 0}));
  // half_pixel (the default) shifts each roi by -0.5: the same rois + 0.5
  // give the avg results again.
  HostAttrs half;
  half.setInts("sampling_ratio", {2});
  for (float &v : rois) v += 0.5f;
  r = run("top.roi_align", half, {{xs, x.data()}, {rs, rois.data()}, {bs, batch.data()}}, {{3, 1, 1, 1}});
  EXPECT_EQ(r[0], (std::vector<float>{4, 103.5f, 0}));
  // sampling_ratio 0: ceil(roi size / output size) samples per bin side; a
  // 2x2 output of roi 0 samples once per bin. output_half_pixel makes the
  // empty roi (1, 1, 1, 1) of image 1 one pixel: bins of 0.5, samples at
  // 1.25 and 1.75 per side.
  HostAttrs adaptive;
  adaptive.setInts("output_height", {2});
  adaptive.setInts("output_width", {2});
  adaptive.setText("coordinate_transformation_mode", "output_half_pixel");
  const std::vector<float> two = {0, 0, 2, 2, /* empty */ 1, 1, 1, 1}, twoBatch = {0, 1};
  r = run("top.roi_align", adaptive, {{xs, x.data()}, {{2, 4}, two.data()}, {{2}, twoBatch.data()}}, {{2, 1, 2, 2}});
  EXPECT_EQ(r[0], (std::vector<float>{2, 3, 5, 6, 105, 105.5f, 106.5f, 107}));
  // A batch index beyond the batch, the shapes and the mode are refused.
  std::string error;
  const std::vector<float> badBatch = {0, 2};
  run("top.roi_align", adaptive, {{xs, x.data()}, {{2, 4}, two.data()}, {{2}, badBatch.data()}}, {}, &error);
  EXPECT_EQ(error, "batch index 2 of roi 1 out of range for a batch of 2");
  run("top.roi_align", adaptive, {{xs, x.data()}, {{2, 4}, two.data()}, {{1}, badBatch.data()}}, {}, &error);
  EXPECT_EQ(error, "top.roi_align: batch_indices must be [2], one per roi");
  const std::vector<float> huge = {0, 0, 2, 2, /* 8192 x 8192 */ 0, 0, 8192, 8192};
  run("top.roi_align", adaptive, {{xs, x.data()}, {{2, 4}, huge.data()}, {{2}, twoBatch.data()}}, {}, &error);
  EXPECT_EQ(error, "roi 1 needs 67108864 samples, more than 2^24");
  adaptive.setText("mode", "sum");
  run("top.roi_align", adaptive, {{xs, x.data()}, {{2, 4}, two.data()}, {{2}, twoBatch.data()}}, {}, &error);
  EXPECT_EQ(error, "top.roi_align: mode 'sum' is not avg or max");
}

// Squeeze and Unsqueeze take their shape from the real input (NMS rows).
TEST(HostOps, SqueezeAndUnsqueezeFollowTheRealShape) {
  const std::vector<float> x = {4, 7, 9};
  HostAttrs a;
  a.setInts("axes", {1});
  EXPECT_EQ(run("top.squeeze", a, {{{3, 1}, x.data()}}, {{3}})[0], x);
  EXPECT_EQ(run("top.unsqueeze", a, {{{3}, x.data()}}, {{3, 1}})[0], x);
  std::string error;
  run("top.squeeze", a, {{{1, 3}, x.data()}}, {}, &error);
  EXPECT_EQ(error, "top.squeeze: cannot squeeze dim 1 of size 3");
}

// TopK's k from a second input at run time (the attribute its bound): the
// results shrink to k; a k past the axis is refused.
TEST(HostOps, TopKTakesKFromItsInputAtRunTime) {
  const std::vector<float> x = {3, 9, 1, 7}, k = {2}, big = {5};
  HostAttrs a;
  a.setInts("k", {4});
  a.setInts("axis", {0});
  auto r = run("top.topk", a, {{{4}, x.data()}, {{1}, k.data()}}, {{2}, {2}});
  EXPECT_EQ(r[0], (std::vector<float>{9, 7}));
  EXPECT_EQ(r[1], (std::vector<float>{1, 3}));
  std::string error;
  run("top.topk", a, {{{4}, x.data()}, {{1}, big.data()}}, {}, &error);
  EXPECT_EQ(error, "k 5 is not in [0, 4]"); // the sub-net names the op
}

// Split has as many results as sizes; on a dim that came out smaller the
// last pieces come out short (here the second is empty).
TEST(HostOps, SplitClampsItsPiecesToTheRealDim) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  HostAttrs a;
  a.setInts("axis", {0});
  a.setInts("split", {3, 2});
  auto r = run("top.split", a, {{{3, 2}, x.data()}}, {{3, 2}, {0, 2}});
  EXPECT_EQ(r[0], x);
  EXPECT_TRUE(r[1].empty());
  HostCall c;
  c.code = findHostOp("top.split")->code;
  c.attrs = a;
  c.resultShapes = {{3, 2}, {2, 2}};
  c.result = 1;
  auto bytes = c.serialize();
  auto parsed = HostCall::parse(bytes.data(), bytes.size());
  ASSERT_TRUE(parsed) << parsed.message();
  EXPECT_EQ(parsed->resultShapes.size(), 2u);
  c.resultShapes.clear();
  c.result = 0;
  bytes = c.serialize();
  EXPECT_EQ(HostCall::parse(bytes.data(), bytes.size()).message(),
            "top.split: result 0 of 0 (the op has one per split)");
}

// A result's shape stays as compiled when the rule does not read the dims
// that come from the data: a reduction over every dim, Shape; a Flatten of
// them does not, nor NonZero's own result.
TEST(HostOps, ResultShapeFromDataUnlessTheRuleIgnoresThoseDims) {
  HostAttrs none, all, flat;
  all.setInts("axes", {0, 1});
  flat.setInts("axis", {1});
  EXPECT_FALSE(resultShapeFromData(*findHostOp("top.reduce_min"), all, {{60, 4}}, {true}));
  EXPECT_TRUE(resultShapeFromData(*findHostOp("top.reduce_min"), none, {{60, 4}}, {true}));
  EXPECT_FALSE(resultShapeFromData(*findHostOp("top.shape"), none, {{60, 4}}, {true}));
  EXPECT_TRUE(resultShapeFromData(*findHostOp("top.flatten"), flat, {{60, 4}}, {true}));
  EXPECT_TRUE(resultShapeFromData(*findHostOp("top.nonzero"), none, {{60, 4}}, {false}));
  EXPECT_FALSE(resultShapeFromData(*findHostOp("top.flatten"), flat, {{60, 4}}, {false}));
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

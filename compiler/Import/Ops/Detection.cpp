// ONNX object detection: NonMaxSuppression and RoiAlign.
#include "compiler/Import/OnnxNodeImporter.h"

using namespace mlir;

namespace tpu::onnx {

namespace {

// NonMaxSuppression(boxes, scores, max_output_boxes_per_class, iou_threshold,
// score_threshold): the last three optional constant scalars, attributes of
// top.nms (its result's bound needs the maximum at compile time).
Status nonMaxSuppression(OnnxImporter &im, const Node &n) {
  std::vector<NamedAttribute> attrs = {im.i64("center_point_box", n.getInt("center_point_box", 0))};
  auto most = im.present(n, 2) ? im.constInt(n, 2, "max_output_boxes_per_class") : Result<int64_t>(0);
  auto iou = im.present(n, 3) ? im.constFloat(n, 3, "iou_threshold") : Result<double>(0.0);
  if (!most) return most.status();
  if (!iou) return iou.status();
  attrs.push_back(im.i64("max_output_boxes_per_class", *most));
  attrs.push_back(im.f64("iou_threshold", *iou));
  if (im.present(n, 4)) {
    auto minScore = im.constFloat(n, 4, "score_threshold");
    if (!minScore) return minScore.status();
    attrs.push_back(im.f64("score_threshold", *minScore));
  }
  auto boxes = im.operand(n, 0), scores = im.operand(n, 1);
  if (!boxes) return boxes.status();
  if (!scores) return scores.status();
  auto op = im.build<top::NmsOp>(n, {*boxes, *scores}, attrs);
  return op ? Status::ok() : op.status();
}

// RoiAlign(X, rois, batch_indices): top.roi_align with every attribute
// explicit. coordinate_transformation_mode came with opset 16, whose default
// is half_pixel; RoiAlign-10 is output_half_pixel (no half-pixel shift).
Status roiAlign(OnnxImporter &im, const Node &n) {
  const std::string mode = n.getString("mode", "avg");
  const std::string coord =
      im.opset() >= 16 ? n.getString("coordinate_transformation_mode", "half_pixel") : "output_half_pixel";
  if (mode != "avg" && mode != "max") return makeError(n.describe(), ": RoiAlign mode '", mode, "' is not avg or max");
  if (coord != "half_pixel" && coord != "output_half_pixel")
    return makeError(n.describe(), ": RoiAlign coordinate_transformation_mode '", coord,
                     "' is not half_pixel or output_half_pixel");
  std::vector<Value> ins;
  for (size_t i = 0; i < 3; ++i) {
    auto v = im.operand(n, i);
    if (!v) return v.status();
    ins.push_back(*v);
  }
  auto op = im.build<top::RoiAlignOp>(
      n, ins,
      {im.str("mode", mode), im.i64("output_height", n.getInt("output_height", 1)),
       im.i64("output_width", n.getInt("output_width", 1)), im.i64("sampling_ratio", n.getInt("sampling_ratio", 0)),
       im.f64("spatial_scale", n.getFloat("spatial_scale", 1.0)), im.str("coordinate_transformation_mode", coord)});
  return op ? Status::ok() : op.status();
}

} // namespace

void registerDetectionOps(OpTable &t) {
  t.add("NonMaxSuppression", nonMaxSuppression, {2});
  t.add("RoiAlign", roiAlign, {3});
}

} // namespace tpu::onnx

// Object detection: top.nms (post-processing) and top.roi_align.
#ifndef TOP_OPS_DETECTION_TD
#define TOP_OPS_DETECTION_TD

include "compiler/Dialect/Top/TopBase.td"

// ONNX NonMaxSuppression with its thresholds as attributes: rows [batch,
// class, box] of the boxes kept, per batch and class in descending score
// order. The row count comes from the data; the result type holds the most
// there can be, batches x classes x min(max_output_boxes_per_class, boxes)
// (docs/codegen.md "Shapes from the data"). Without score_threshold every
// box is a candidate.
def Top_NmsOp : Top_IndexHostOp<"nms", "Non-max suppression of boxes per batch and class (i64 rows)",
    (ins Top_Tensor:$boxes, Top_Tensor:$scores,
         DefaultValuedAttr<I64Attr, "0">:$center_point_box,
         DefaultValuedAttr<I64Attr, "0">:$max_output_boxes_per_class,
         DefaultValuedAttr<F64Attr, "0.0">:$iou_threshold,
         OptionalAttr<F64Attr>:$score_threshold)>;

// ONNX RoiAlign: X [N, C, H, W], rois [R, 4] as (x1, y1, x2, y2) in the
// input's scale, batch_indices [R] (exact integers, checked at run time);
// the result [R, C, output_height, output_width], X's element type.
// onnxruntime's arithmetic (kernels/HostOps.cpp): coordinate_transformation_mode
// half_pixel shifts the roi by -0.5 pixel (ONNX's default from opset 16),
// output_half_pixel does not and makes each roi at least 1 x 1.
def Top_RoiAlignOp : Top_HostOp<"roi_align", "Pools each region of interest to a fixed size by bilinear sampling",
    (ins Top_Tensor:$input, Top_Tensor:$rois, Top_Tensor:$batch_indices,
         DefaultValuedAttr<StrAttr, "\"avg\"">:$mode,
         DefaultValuedAttr<I64Attr, "1">:$output_height,
         DefaultValuedAttr<I64Attr, "1">:$output_width,
         DefaultValuedAttr<I64Attr, "0">:$sampling_ratio,
         DefaultValuedAttr<F64Attr, "1.0">:$spatial_scale,
         DefaultValuedAttr<StrAttr, "\"half_pixel\"">:$coordinate_transformation_mode)>;

#endif // TOP_OPS_DETECTION_TD

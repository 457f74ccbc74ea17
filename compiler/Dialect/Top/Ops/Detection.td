// Object detection post-processing: top.nms.
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

#endif // TOP_OPS_DETECTION_TD

// Resizing: top.resize.
#ifndef TOP_OPS_RESIZE_TD
#define TOP_OPS_RESIZE_TD

include "compiler/Dialect/Top/TopBase.td"

def Top_ResizeOp : Top_Op<"resize"> {
  let summary = "Nearest or linear resize of any dims";
  let description = [{
    `scales` (one per dim) drive the coordinate transform x_in = f(x_out, scale);
    `sizes`, when not empty, is the output shape, else out = floor(in * scale).
    coordinate_transformation_mode: half_pixel, asymmetric, align_corners,
    pytorch_half_pixel; nearest_mode: round_prefer_floor, round_prefer_ceil,
    floor, ceil.
  }];
  let arguments = (ins Top_Tensor:$input,
    DefaultValuedAttr<StrAttr, "\"nearest\"">:$mode,
    DefaultValuedAttr<StrAttr, "\"half_pixel\"">:$coordinate_transformation_mode,
    DefaultValuedAttr<StrAttr, "\"round_prefer_floor\"">:$nearest_mode,
    DenseF64ArrayAttr:$scales, DenseI64ArrayAttr:$sizes);
  let results = (outs Top_Tensor:$output);
  let hasVerifier = 1;
}

#endif // TOP_OPS_RESIZE_TD

// The sliding window of the conv and pool families: the check of its
// attributes (kernel_shape, strides, pads = [begins..., ends...], dilations)
// and the kernels' parameters made from them. A 1-D window (NCH) is a 2-D one
// of height 1 on the W axis.
#pragma once

#include "kernels/Kernels.h"

#include "mlir/IR/Operation.h"

namespace top {

// 1 or 2 spatial dims, one value per dim (two pads), k, s, d >= 1, pads >= 0.
mlir::LogicalResult verifyWindow(mlir::Operation *op, llvm::ArrayRef<int64_t> kernel, llvm::ArrayRef<int64_t> strides,
                                 llvm::ArrayRef<int64_t> pads, llvm::ArrayRef<int64_t> dilations);

// n, ih, iw, oh, ow and the window fields of kernels::ConvParams or
// kernels::PoolParams, from NCH/NCHW input and output shapes.
template <typename Params>
Params windowParams(const std::vector<int64_t> &in, const std::vector<int64_t> &out, llvm::ArrayRef<int64_t> kernel,
                    llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> pads, llvm::ArrayRef<int64_t> dilations) {
  Params p;
  const bool oneD = kernel.size() == 1;
  p.n = in[0];
  p.ih = oneD ? 1 : in[2];
  p.iw = in.back();
  p.oh = oneD ? 1 : out[2];
  p.ow = out.back();
  if (oneD) {
    p.kw = kernel[0], p.strideW = strides[0], p.dilationW = dilations[0];
    p.padLeft = pads[0], p.padRight = pads[1];
  } else {
    p.kh = kernel[0], p.kw = kernel[1], p.strideH = strides[0], p.strideW = strides[1];
    p.dilationH = dilations[0], p.dilationW = dilations[1];
    p.padTop = pads[0], p.padLeft = pads[1], p.padBottom = pads[2], p.padRight = pads[3];
  }
  return p;
}

} // namespace top

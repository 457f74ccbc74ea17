#include "compiler/Dialect/Top/Window.h"

using namespace mlir;

namespace top {

LogicalResult verifyWindow(Operation *op, ArrayRef<int64_t> k, ArrayRef<int64_t> s, ArrayRef<int64_t> pads,
                           ArrayRef<int64_t> d) {
  const size_t spatial = k.size();
  if (spatial < 1 || spatial > 2) return op->emitOpError() << "supports 1 or 2 spatial dims, got " << spatial;
  if (s.size() != spatial || d.size() != spatial || pads.size() != 2 * spatial)
    return op->emitOpError() << "kernel_shape/strides/dilations need " << spatial << " values and pads " << 2 * spatial;
  for (size_t i = 0; i < spatial; ++i) {
    if (k[i] < 1 || s[i] < 1 || d[i] < 1) return op->emitOpError() << "kernel, stride and dilation must be >= 1";
    if (pads[i] < 0 || pads[i + spatial] < 0) return op->emitOpError() << "pads must be >= 0";
  }
  return success();
}

} // namespace top

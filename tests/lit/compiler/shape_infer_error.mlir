// RUN: not tpuc-opt %s --top-shape-infer 2>&1 | FileCheck %s

// A shape that no longer fits is reported on the op.
// CHECK: error: 'top.reshape' op cannot reshape [4,3,8,8] to [1,192]
func.func @bad(%arg0: tensor<4x3x8x8xf32>) -> tensor<1x192xf32> {
  %0 = "top.reshape"(%arg0) {shape = array<i64: 1, 192>} : (tensor<4x3x8x8xf32>) -> tensor<1x192xf32>
  return %0 : tensor<1x192xf32>
}

// RUN: tpuc-opt %s --top-shape-infer | FileCheck %s

// The batch changed from 1 to 4: every result type and the function type follow.
// CHECK-LABEL: func.func @main(%arg0: tensor<4x3x8x8xf32>) -> tensor<4x16xf32>
// CHECK: "top.conv"{{.*}} -> tensor<4x4x4x4xf32>
// CHECK: "top.max_pool"{{.*}} -> tensor<4x4x2x2xf32>
// CHECK: "top.reshape"{{.*}} -> tensor<4x16xf32>
func.func @main(%arg0: tensor<4x3x8x8xf32>) -> tensor<1x16xf32> {
  %0 = "top.input"(%arg0) : (tensor<4x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  %w = top.weight "w" : tensor<4x3x3x3xf32>
  %n = top.none
  %1 = "top.conv"(%0, %w, %n) {kernel_shape = array<i64: 3,3>, strides = array<i64: 2,2>, pads = array<i64: 1,1,1,1>, dilations = array<i64: 1,1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x4x4xf32>
  %2 = "top.max_pool"(%1) {kernel_shape = array<i64: 2,2>, strides = array<i64: 2,2>, pads = array<i64: 0,0,0,0>, dilations = array<i64: 1,1>} : (tensor<1x4x4x4xf32>) -> tensor<1x4x2x2xf32>
  %3 = "top.reshape"(%2) {shape = array<i64: 4, 16>} : (tensor<1x4x2x2xf32>) -> tensor<1x16xf32>
  return %3 : tensor<1x16xf32>
}


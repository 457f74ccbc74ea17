// RUN: tpuc-opt %s --canonicalize --split-input-file | FileCheck %s
// RUN: tpuc-opt %s --canonicalize --split-input-file --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=LOC

// Zero pad on spatial dims folds into the conv's pads, and the ReLU fuses.
// CHECK-LABEL: func @pad_conv_relu
// CHECK-NOT: top.pad
// CHECK: "top.conv"(%{{.*}}) <{{{.*}}do_relu = true{{.*}}pads = array<i64: 1, 2, 1, 2>
// CHECK-NOT: top.relu
module attributes {top.weight_file = "w.npz"} {
  func.func @pad_conv_relu(%arg0: tensor<1x3x8x8xf32>) -> tensor<1x4x10x10xf32> {
    %0 = "top.input"(%arg0) : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
    %w = top.weight "conv_w" : tensor<4x3x3x3xf32>
    %n = top.none
    %p = "top.pad"(%0) {pads = array<i64: 0,0,1,1,0,0,1,1>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x10x10xf32>
    %1 = "top.conv"(%p, %w, %n) {kernel_shape = array<i64: 3,3>, strides = array<i64: 1,1>, pads = array<i64: 0,1,0,1>, dilations = array<i64: 1,1>} : (tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x10x10xf32>
    %2 = "top.relu"(%1) : (tensor<1x4x10x10xf32>) -> tensor<1x4x10x10xf32>
    return %2 : tensor<1x4x10x10xf32>
  }
}

// -----
// Clip(0, 6) after a conv becomes a ReLU with limit 6.
// CHECK-LABEL: func @conv_relu6
// CHECK: "top.conv"{{.*}}do_relu = true{{.*}}relu_limit = 6.0
// CHECK-NOT: top.clip
module attributes {top.weight_file = "w.npz"} {
  func.func @conv_relu6(%arg0: tensor<1x3x8x8xf32>) -> tensor<1x4x6x6xf32> {
    %w = top.weight "conv_w" : tensor<4x3x3x3xf32>
    %n = top.none
    %1 = "top.conv"(%arg0, %w, %n) {kernel_shape = array<i64: 3,3>, strides = array<i64: 1,1>, pads = array<i64: 0,0,0,0>, dilations = array<i64: 1,1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x6x6xf32>
    %2 = "top.clip"(%1) {min = 0.0 : f64, max = 6.0 : f64} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
    return %2 : tensor<1x4x6x6xf32>
  }
}

// -----
// Consecutive reshapes merge; consecutive permutes compose; identities vanish.
// CHECK-LABEL: func @reshape_permute
// CHECK-NEXT: %[[R:.*]] = "top.reshape"(%arg0) <{shape = array<i64: 6, 4>}>
// CHECK-NEXT: %[[P:.*]] = "top.permute"(%arg1) <{order = array<i64: 2, 0, 1>}>
// CHECK-NEXT: return %[[R]], %[[P]], %arg2
func.func @reshape_permute(%arg0: tensor<2x3x4xf32>, %arg1: tensor<2x3x4xf32>, %arg2: tensor<5xf32>) -> (tensor<6x4xf32>, tensor<4x2x3xf32>, tensor<5xf32>) {
  %0 = "top.reshape"(%arg0) {shape = array<i64: 24>} : (tensor<2x3x4xf32>) -> tensor<24xf32>
  %1 = "top.reshape"(%0) {shape = array<i64: 6, 4>} : (tensor<24xf32>) -> tensor<6x4xf32>
  %2 = "top.permute"(%arg1) {order = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %3 = "top.permute"(%2) {order = array<i64: 2, 1, 0>} : (tensor<3x2x4xf32>) -> tensor<4x2x3xf32>
  %4 = "top.reshape"(%arg2) {shape = array<i64: 5>} : (tensor<5xf32>) -> tensor<5xf32>
  return %1, %3, %4 : tensor<6x4xf32>, tensor<4x2x3xf32>, tensor<5xf32>
}

// -----
// x * hard_sigmoid(x, 1/6, 1/2) is hard_swish(x).
// CHECK-LABEL: func @hard_swish
// CHECK-NEXT: %[[H:.*]] = "top.hard_swish"(%arg0)
// CHECK-NEXT: return %[[H]]
func.func @hard_swish(%arg0: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %0 = "top.hard_sigmoid"(%arg0) {alpha = 0.16666666666666666 : f64, beta = 0.5 : f64} : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %1 = "top.mul"(%arg0, %0) : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  return %1 : tensor<1x8xf32>
}

// -----
// No fusion when the conv result has another user, when the clip does not
// start at 0, or when the pad is not zero.
// CHECK-LABEL: func @no_fusion
// CHECK: "top.conv"(%arg0{{.*}}do_relu = false
// CHECK: "top.relu"
// CHECK: "top.conv"(%arg0{{.*}}do_relu = false
// CHECK: "top.clip"
// CHECK: "top.pad"
// CHECK: "top.conv"
func.func @no_fusion(%arg0: tensor<1x3x8x8xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x8x8xf32>) {
  %w = top.weight "conv_w" : tensor<4x3x3x3xf32>
  %n = top.none
  %1 = "top.conv"(%arg0, %w, %n) {kernel_shape = array<i64: 3,3>, strides = array<i64: 1,1>, pads = array<i64: 0,0,0,0>, dilations = array<i64: 1,1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x6x6xf32>
  %2 = "top.relu"(%1) : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %3 = "top.conv"(%arg0, %w, %n) {kernel_shape = array<i64: 3,3>, strides = array<i64: 1,1>, pads = array<i64: 0,0,0,0>, dilations = array<i64: 1,1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x6x6xf32>
  %4 = "top.clip"(%3) {min = -1.0 : f64, max = 6.0 : f64} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %p = "top.pad"(%arg0) {pads = array<i64: 0,0,1,1,0,0,1,1>, value = 1.0 : f64} : (tensor<1x3x8x8xf32>) -> tensor<1x3x10x10xf32>
  %5 = "top.conv"(%p, %w, %n) {kernel_shape = array<i64: 3,3>, strides = array<i64: 1,1>, pads = array<i64: 0,0,0,0>, dilations = array<i64: 1,1>} : (tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x8x8xf32>
  return %1, %2, %4, %5 : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x8x8xf32>
}

// -----
// A ReLU behind single-use reshapes and slices of a conv (a 3-D conv imported
// as a 2-D one ends so) fuses into the conv: the last move takes the ReLU's
// name, the conv and the other moves "_relu" names. A move with a second
// reader keeps its ReLU.
// CHECK-LABEL: func @conv_moves_relu
// CHECK: "top.conv"{{.*}}do_relu = true
// CHECK-NEXT: "top.reshape"
// CHECK-NEXT: "top.slice"
// CHECK-NOT: top.relu
// LOC-LABEL: func @conv_moves_relu
// LOC: "top.conv"{{.*}} loc("conv_relu")
// LOC-NEXT: "top.reshape"{{.*}} loc("planes_relu")
// LOC-NEXT: "top.slice"{{.*}} loc("relu")
// CHECK-LABEL: func @shared_move_keeps_relu
// CHECK: "top.conv"
// CHECK-NOT: do_relu = true
// CHECK: "top.relu"
module attributes {top.weight_file = "w.npz"} {
  func.func @conv_moves_relu(%arg0: tensor<1x3x8x8xf32>) -> tensor<1x4x2x2x6xf32> {
    %w = top.weight "conv_w" : tensor<4x3x3x3xf32>
    %n = top.none
    %1 = "top.conv"(%arg0, %w, %n) {kernel_shape = array<i64: 3,3>, strides = array<i64: 1,1>, pads = array<i64: 0,0,0,0>, dilations = array<i64: 1,1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x6x6xf32> loc("conv")
    %2 = "top.reshape"(%1) {shape = array<i64: 1, 4, 2, 3, 6>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x2x3x6xf32> loc("planes")
    %3 = "top.slice"(%2) {starts = array<i64: 0, 0, 0, 0, 0>, ends = array<i64: 1, 4, 2, 2, 6>, steps = array<i64: 1, 1, 1, 1, 1>} : (tensor<1x4x2x3x6xf32>) -> tensor<1x4x2x2x6xf32> loc("conv_out")
    %4 = "top.relu"(%3) : (tensor<1x4x2x2x6xf32>) -> tensor<1x4x2x2x6xf32> loc("relu")
    return %4 : tensor<1x4x2x2x6xf32>
  }
  func.func @shared_move_keeps_relu(%arg0: tensor<1x3x8x8xf32>) -> (tensor<1x4x36xf32>, tensor<1x4x36xf32>) {
    %w = top.weight "conv_w" : tensor<4x3x3x3xf32>
    %n = top.none
    %1 = "top.conv"(%arg0, %w, %n) {kernel_shape = array<i64: 3,3>, strides = array<i64: 1,1>, pads = array<i64: 0,0,0,0>, dilations = array<i64: 1,1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x6x6xf32>
    %2 = "top.reshape"(%1) {shape = array<i64: 1, 4, 36>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x36xf32>
    %3 = "top.relu"(%2) : (tensor<1x4x36xf32>) -> tensor<1x4x36xf32>
    return %3, %2 : tensor<1x4x36xf32>, tensor<1x4x36xf32>
  }
}

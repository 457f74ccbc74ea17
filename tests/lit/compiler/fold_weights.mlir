// RUN: rm -rf %t && mkdir -p %t && cp %s %t/m.mlir && /usr/bin/python3 %S/Inputs/fold_weights.py make %t
// RUN: tpuc-opt %t/m.mlir --top-fold-weights --top-dce | FileCheck %s
// RUN: /usr/bin/python3 %S/Inputs/fold_weights.py check %t | FileCheck %s --check-prefix=VALUES
// The original weight file is left as it was.
// RUN: /usr/bin/python3 -c "import numpy as np; print(sorted(np.load('%t/w.npz').keys()))" | FileCheck %s --check-prefix=OLD

// VALUES: folded weights OK: b2_folded, g2_folded, k_reciprocal, m2, v2, w2_folded_bias_folded, w2_folded_folded, w3_bias_folded, w3_folded, w_bias_folded, w_folded
// OLD: ['b', 'b2', 'b3', 'bias', 'c', 'e', 'g', 'g2', 'g3', 'k', 'm', 'm2', 'm3', 's', 'v', 'v2', 'v3', 'w', 'w2', 'w3']

// CHECK: module attributes {top.weight_file = "w_folded.npz"}
module attributes {top.weight_file = "w.npz"} {
  // CHECK-LABEL: func.func @bn_into_conv
  // CHECK-DAG: %[[W:.*]] = top.weight "w_folded" : tensor<4x3x3x3xf32>
  // CHECK-DAG: %[[B:.*]] = top.weight "w_bias_folded" : tensor<4xf32>
  // CHECK: %[[C:.*]] = "top.conv"(%arg0, %[[W]], %[[B]])
  // CHECK-NOT: top.batch_norm
  // CHECK: return %[[C]]
  func.func @bn_into_conv(%arg0: tensor<1x3x8x8xf32>) -> tensor<1x4x6x6xf32> {
    %w = top.weight "w" : tensor<4x3x3x3xf32>
    %n = top.none
    %c = "top.conv"(%arg0, %w, %n) {kernel_shape = array<i64: 3,3>, strides = array<i64: 1,1>, pads = array<i64: 0,0,0,0>, dilations = array<i64: 1,1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x6x6xf32>
    %g = top.weight "g" : tensor<4xf32>
    %b = top.weight "b" : tensor<4xf32>
    %m = top.weight "m" : tensor<4xf32>
    %v = top.weight "v" : tensor<4xf32>
    %bn = "top.batch_norm"(%c, %g, %b, %m, %v) {epsilon = 1.0e-5 : f64} : (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
    return %bn : tensor<1x4x6x6xf32>
  }

  // CHECK-LABEL: func.func @mul_add_into_conv
  // CHECK: "top.conv"
  // CHECK-NOT: top.mul
  // CHECK-NOT: top.add
  // CHECK: return
  func.func @mul_add_into_conv(%arg0: tensor<1x3x8x8xf32>) -> tensor<1x4x6x6xf32> {
    %w = top.weight "w2" : tensor<4x3x3x3xf32>
    %bias = top.weight "bias" : tensor<4xf32>
    %c = "top.conv"(%arg0, %w, %bias) {kernel_shape = array<i64: 3,3>, strides = array<i64: 1,1>, pads = array<i64: 0,0,0,0>, dilations = array<i64: 1,1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
    %k = top.weight "c" : tensor<1x4x1x1xf32>
    %mul = "top.mul"(%c, %k) : (tensor<1x4x6x6xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x6x6xf32>
    %e = top.weight "e" : tensor<4x1x1xf32>
    %add = "top.add"(%e, %mul) : (tensor<4x1x1xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
    return %add : tensor<1x4x6x6xf32>
  }

  // CHECK-LABEL: func.func @div_by_constant
  // CHECK: %[[R:.*]] = top.weight "k_reciprocal" : tensor<f32>
  // CHECK: "top.mul"(%arg0, %[[R]])
  func.func @div_by_constant(%arg0: tensor<2x5xf32>) -> tensor<2x5xf32> {
    %k = top.weight "k" : tensor<f32>
    %d = "top.div"(%arg0, %k) : (tensor<2x5xf32>, tensor<f32>) -> tensor<2x5xf32>
    return %d : tensor<2x5xf32>
  }

  // CHECK-LABEL: func.func @mul_into_batch_norm
  // CHECK-DAG: %[[G:.*]] = top.weight "g2_folded"
  // CHECK-DAG: %[[B:.*]] = top.weight "b2_folded"
  // CHECK: "top.batch_norm"(%arg0, %[[G]], %[[B]],
  // CHECK-NOT: top.mul
  func.func @mul_into_batch_norm(%arg0: tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> {
    %g = top.weight "g2" : tensor<4xf32>
    %b = top.weight "b2" : tensor<4xf32>
    %m = top.weight "m2" : tensor<4xf32>
    %v = top.weight "v2" : tensor<4xf32>
    %bn = "top.batch_norm"(%arg0, %g, %b, %m, %v) : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
    %s = top.weight "s" : tensor<f32>
    %mul = "top.mul"(%bn, %s) : (tensor<1x4x2x2xf32>, tensor<f32>) -> tensor<1x4x2x2xf32>
    return %mul : tensor<1x4x2x2xf32>
  }

  // CHECK-LABEL: func.func @bn_into_grouped_conv_transpose
  // CHECK: "top.conv_transpose"(%arg0, %{{.*}}, %{{.*}})
  // CHECK-NOT: top.batch_norm
  func.func @bn_into_grouped_conv_transpose(%arg0: tensor<1x4x3x3xf32>) -> tensor<1x2x6x6xf32> {
    %w = top.weight "w3" : tensor<4x1x2x2xf32>
    %n = top.none
    %c = "top.conv_transpose"(%arg0, %w, %n) {kernel_shape = array<i64: 2,2>, strides = array<i64: 2,2>, pads = array<i64: 0,0,0,0>, dilations = array<i64: 1,1>, output_padding = array<i64: 0,0>, group = 2 : i64} : (tensor<1x4x3x3xf32>, tensor<4x1x2x2xf32>, none) -> tensor<1x2x6x6xf32>
    %g = top.weight "g3" : tensor<2xf32>
    %b = top.weight "b3" : tensor<2xf32>
    %m = top.weight "m3" : tensor<2xf32>
    %v = top.weight "v3" : tensor<2xf32>
    %bn = "top.batch_norm"(%c, %g, %b, %m, %v) {epsilon = 1.0e-5 : f64} : (tensor<1x2x6x6xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x6x6xf32>
    return %bn : tensor<1x2x6x6xf32>
  }
}

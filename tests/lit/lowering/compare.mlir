// --convert-top-to-tpu, comparisons and where (compiler/Lowering/Ops/Elementwise.cpp):
// greater/less/equal give fp32 1.0 / 0.0 (tpu.greater ...), where selects
// with NumPy broadcasting; constant operands become fp32 weights of the
// result's rank. In INT8 they are fp32 islands between casts.
// RUN: rm -rf %t && split-file %s %t
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/ok.mlir
// RUN: tpuc-opt %t/ok.mlir --verify-each --convert-top-to-tpu="mode=F32" | FileCheck %s

// CHECK: %[[A:.*]] = top.weight "above_rhs" : tensor<1x1x1x1xf32>
// CHECK: %[[G:.*]] = "tpu.greater"(%{{.*}}, %[[A]]) {{.*}} : (tensor<1x2x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK: %[[L:.*]] = "tpu.less"(%{{.*}}, %{{.*}}) {{.*}} : (tensor<1x2x4x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK: %[[Z:.*]] = top.weight "picked_y" : tensor<1x1x1x1xf32>
// CHECK: "tpu.where"(%[[G]], %{{.*}}, %[[Z]]) {{.*}} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK: "tpu.equal"
// CHECK: "tpu.where"(%{{.*}}, %{{.*}}, %{{.*}}) {{.*}} : (tensor<1x2x4x4xf32>, tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>

//--- ok.mlir
module attributes {top.weight_file = "ok_weights.npz"} {
func.func @main(%arg0: tensor<1x2x4x4xf32>, %arg1: tensor<1x2x1x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) attributes {top.input_names = ["input", "row"], top.output_names = ["picked", "mixed"]} {
  %0 = top.input %arg0 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("input")
  %1 = top.input %arg1 : (tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32> loc("row")
  %a = top.weight "alpha" : tensor<f32>
  %2 = "top.greater"(%0, %a) : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xi1> loc("above")
  %3 = "top.less"(%0, %1) : (tensor<1x2x4x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xi1> loc("below")
  %z = top.weight "zero" : tensor<f32>
  %4 = "top.where"(%2, %0, %z) : (tensor<1x2x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32> loc("picked")
  %5 = "top.equal"(%4, %0) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xi1> loc("same")
  %6 = "top.where"(%3, %1, %4) : (tensor<1x2x4x4xi1>, tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("mixed")
  return %4, %6 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
}

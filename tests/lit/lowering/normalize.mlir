// --convert-top-to-tpu, normalize family (compiler/Lowering/Ops/Normalize.cpp):
// batch_norm -> one per-channel tpu.affine (int16 scale, int32 bias), a relu
// after it fused; a batch norm whose statistics are not one value per
// channel has no lowering.
// RUN: rm -rf %t && split-file %s %t
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/ok.mlir
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/bad.mlir
// RUN: grep '^// CALI ' %s | cut -c9- > %t/t.cali
// RUN: tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali" | FileCheck %s
// RUN: not tpuc-opt %t/bad.mlir --convert-top-to-tpu="mode=F32" 2>&1 | FileCheck %s --check-prefix=BAD

// CALI input 2 -2 2
// CALI bn 4 -4 4
// CALI relu 4 0 4

// scale[c] = gamma / sqrt(variance + 1) = -0.53, -0.72, -0.95, times
// (2/127) / (4/255): 0.952 * 2^15 = 31209 <= 32767.
// CHECK: "tpu.affine"({{.*}}do_relu = true{{.*}}rshift = 15 : i64{{.*}} : (tensor<1x3x4x4xi8, 0.0157480314 : f32>, tensor<3xi16>, tensor<3xi32>) -> tensor<1x3x4x4xui8, 0.0156862754 : f32>
// CHECK-NOT: tpu.relu
// BAD: error: no lowering for top.batch_norm 'bn' at loc("bn"): the scale needs one value per channel

//--- ok.mlir
module attributes {top.weight_file = "ok_weights.npz"} {
func.func @main(%arg0: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> attributes {top.input_names = ["input"], top.output_names = ["relu"]} {
  %0 = top.input %arg0 : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> loc("input")
  %g = top.weight "gamma" : tensor<3xf32>
  %b = top.weight "beta" : tensor<3xf32>
  %m = top.weight "mean" : tensor<3xf32>
  %v = top.weight "variance" : tensor<3xf32>
  %2 = "top.batch_norm"(%0, %g, %b, %m, %v) <{epsilon = 1.0 : f64}> : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32> loc("bn")
  %3 = "top.relu"(%2) : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> loc("relu")
  return %3 : tensor<1x3x4x4xf32>
}
}

//--- bad.mlir
module attributes {top.weight_file = "bad_weights.npz"} {
func.func @main(%arg0: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> attributes {top.input_names = ["input"], top.output_names = ["bn"]} {
  %0 = top.input %arg0 : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> loc("input")
  %g = top.weight "gamma" : tensor<2xf32>
  %b = top.weight "beta" : tensor<3xf32>
  %m = top.weight "mean" : tensor<3xf32>
  %v = top.weight "variance" : tensor<3xf32>
  %1 = "top.batch_norm"(%0, %g, %b, %m, %v) : (tensor<1x3x4x4xf32>, tensor<2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32> loc("bn")
  return %1 : tensor<1x3x4x4xf32>
}
}

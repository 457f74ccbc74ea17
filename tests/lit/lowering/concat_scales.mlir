// --convert-top-to-tpu INT8, shared concat scales (compiler/Lowering/Lowering.cpp,
// shareConcatScales): a concat and the inputs that feed only concats share
// one scale, the largest threshold of the class (DenseNet: every layer's
// output feeds all later concats of its block). The convs a and b write at
// cat2's 6/127 directly; the input, which the convs read too, keeps its own
// 2/127 and is requantized once for both concats.
// RUN: rm -rf %t && split-file %s %t
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/ok.mlir
// RUN: grep '^// CALI ' %s | cut -c9- > %t/t.cali
// RUN: tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali" | FileCheck %s

// CALI input 2 -2 2
// CALI a 3 -3 3
// CALI b 5 -5 5
// CALI cat1 3 -3 3
// CALI cat2 6 -6 6

// CHECK: %[[IN:[0-9]+]] = "tpu.cast"(%0) {{.*}} -> tensor<1x2x4x4xi8, 0.0157480314 : f32>
// CHECK: %[[A:[0-9]+]] = "tpu.conv"({{.*}}) {{.*}} -> tensor<1x2x4x4xi8, 0.0472440943 : f32>
// CHECK: %[[B:[0-9]+]] = "tpu.conv"({{.*}}) {{.*}} -> tensor<1x2x4x4xi8, 0.0472440943 : f32>
// 2/127 -> 6/127: 10923 / 2^15 = 1/3.
// CHECK: %[[R:[0-9]+]] = "tpu.requant"(%[[IN]]) <{do_relu = false, multipliers = array<i64: 10923>, rshift = 15 : i64}>
// CHECK-NOT: tpu.requant
// CHECK: "tpu.concat"(%[[R]], %[[A]]) {{.*}} -> tensor<1x4x4x4xi8, 0.0472440943 : f32>
// CHECK: "tpu.concat"(%[[R]], %[[A]], %[[B]]) {{.*}} -> tensor<1x6x4x4xi8, 0.0472440943 : f32>

//--- ok.mlir
module attributes {top.weight_file = "ok_weights.npz"} {
func.func @main(%arg0: tensor<1x2x4x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x6x4x4xf32>) attributes {top.input_names = ["input"], top.output_names = ["cat1", "cat2"]} {
  %0 = top.input %arg0 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("input")
  %wa = top.weight "wa" : tensor<2x2x1x1xf32>
  %wb = top.weight "wb" : tensor<2x2x1x1xf32>
  %n = top.none
  %1 = "top.conv"(%0, %wa, %n) <{kernel_shape = array<i64: 1, 1>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64}> : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x4x4xf32> loc("a")
  %2 = "top.conv"(%0, %wb, %n) <{kernel_shape = array<i64: 1, 1>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64}> : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x4x4xf32> loc("b")
  %3 = "top.concat"(%0, %1) <{axis = 1 : i64}> : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> loc("cat1")
  %4 = "top.concat"(%0, %1, %2) <{axis = 1 : i64}> : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x6x4x4xf32> loc("cat2")
  return %3, %4 : tensor<1x4x4x4xf32>, tensor<1x6x4x4xf32>
}
}

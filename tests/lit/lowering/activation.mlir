// --convert-top-to-tpu, activation family (compiler/Lowering/Ops/Activation.cpp):
// relu, clip (integer bounds in int8), leaky_relu (max(x, x*m0 >> rshift)),
// and the table functions (sigmoid -> tpu.lut with a 256-entry table); in
// F32, a leaky_relu slope above 1 has no lowering (unary.mlir: the fp32 functions).
// RUN: rm -rf %t && split-file %s %t
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/ok.mlir
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/bad.mlir
// RUN: grep '^// CALI ' %s | cut -c9- > %t/t.cali
// RUN: tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali" | FileCheck %s
// RUN: not tpuc-opt %t/bad.mlir --convert-top-to-tpu="mode=F32 cpu-subnets=false" 2>&1 | FileCheck %s --check-prefix=BAD

// CALI input 2 -2 2
// CALI relu 2 0 2
// CALI clip 2 0 2
// CALI leaky 2 -2 2
// CALI sig 1 0 1

// alpha 0.1 * 2^10 = 102.4 -> 102 <= 127.
// CHECK: "tpu.leaky_relu"({{.*}}) <{alpha = 1.000000e-01 : f64, do_relu = false, multipliers = array<i64: 102>, rshift = 10 : i64}> : (tensor<1x2x4x4xi8, 0.0157480314 : f32>) -> tensor<1x2x4x4xi8, 0.0157480314 : f32>
// CHECK: "tpu.relu"({{.*}} : (tensor<1x2x4x4xi8, 0.0157480314 : f32>) -> tensor<1x2x4x4xi8, 0.0157480314 : f32>
// max 1.0 / (2/127) = 63.5 -> 64.
// CHECK: "tpu.clip"({{.*}}max = 6.400000e+01 : f64, min = 0.000000e+00 : f64
// CHECK: %[[T:.*]] = top.weight "sig_table" : tensor<256xui8>
// CHECK: "tpu.lut"({{.*}}, %[[T]]) {{.*}} : (tensor<1x2x4x4xi8, 0.0157480314 : f32>, tensor<256xui8>) -> tensor<1x2x4x4xui8, 0.00392156886 : f32>
// BAD: error: no lowering for top.leaky_relu 't' at loc("t"): a slope outside [0, 1]

//--- ok.mlir
module attributes {top.weight_file = "ok_weights.npz"} {
func.func @main(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> attributes {top.input_names = ["input"], top.output_names = ["sig"]} {
  %0 = top.input %arg0 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("input")
  %1 = "top.leaky_relu"(%0) <{alpha = 0.1 : f64}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("leaky")
  %2 = "top.relu"(%1) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("relu")
  %3 = "top.clip"(%2) <{min = 0.0 : f64, max = 1.0 : f64}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("clip")
  %4 = "top.sigmoid"(%3) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("sig")
  return %4 : tensor<1x2x4x4xf32>
}
}

//--- bad.mlir
module attributes {top.weight_file = "bad_weights.npz"} {
func.func @main(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> attributes {top.input_names = ["input"], top.output_names = ["t"]} {
  %0 = top.input %arg0 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("input")
  %1 = "top.leaky_relu"(%0) <{alpha = 1.5 : f64}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("t")
  return %1 : tensor<1x2x4x4xf32>
}
}

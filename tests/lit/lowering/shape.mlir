// --convert-top-to-tpu, shape family (compiler/Lowering/Ops/Shape.cpp):
// reshape keeps the scale, resize (nearest, integer factors) -> tpu.upsample,
// concat along channels with an input of another scale requantized to the
// output's (x*m0 >> rshift); a concat along H is a tpu.move of two boxes
// (each input's (c, h*w) at its offset of the output), and so is one with a
// constant operand, which stays a weight of the move (one repeated value
// would be its fill instead).
// RUN: rm -rf %t && split-file %s %t
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/ok.mlir
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/along_h.mlir
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/with_constant.mlir
// RUN: grep '^// CALI ' %s | cut -c9- > %t/t.cali
// RUN: tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali" | FileCheck %s
// RUN: tpuc-opt %t/along_h.mlir --convert-top-to-tpu="mode=F32" | FileCheck %s --check-prefix=ALONG-H
// RUN: tpuc-opt %t/with_constant.mlir --convert-top-to-tpu="mode=F32" | FileCheck %s --check-prefix=CONST

// CALI input 2 -2 2
// CALI other 1 -1 1
// CALI up 1 -1 1
// CALI big 2 -2 2
// CALI cat 2 -2 2
// CALI flat 2 -2 2

// CHECK: "tpu.upsample"({{.*}}scale_h = 1 : i64, scale_w = 1 : i64}> : (tensor<1x1x4x4xi8, 0.00787401571 : f32>) -> tensor<1x1x4x4xi8, 0.00787401571 : f32>
// CHECK: "tpu.upsample"({{.*}}scale_h = 2 : i64, scale_w = 2 : i64}> : (tensor<1x2x2x2xi8, 0.0157480314 : f32>) -> tensor<1x2x4x4xi8, 0.0157480314 : f32>
// 'up' (scale 1/127) into the concat's 2/127: 0.5 * 2^14 = 8192 <= 16383.
// CHECK: "tpu.requant"({{.*}}) <{do_relu = false, multipliers = array<i64: 8192>, rshift = 14 : i64}> : (tensor<1x1x4x4xi8, 0.00787401571 : f32>) -> tensor<1x1x4x4xi8, 0.0157480314 : f32>
// CHECK: "tpu.concat"({{.*}} : (tensor<1x2x4x4xi8, 0.0157480314 : f32>, tensor<1x1x4x4xi8, 0.0157480314 : f32>) -> tensor<1x3x4x4xi8, 0.0157480314 : f32>
// CHECK: "tpu.reshape"({{.*}} : (tensor<1x3x4x4xi8, 0.0157480314 : f32>) -> tensor<1x48xi8, 0.0157480314 : f32>
// ALONG-H: "tpu.move"(%0, %0) <{{{.*}}pieces = array<i64: 0, 1, 1, 2, 4, 0, 0, 0, 4, 1, 0, 0, 0, 8, 1, 1, 1, 1, 2, 4, 0, 0, 0, 4, 1, 4, 0, 0, 8, 1>{{.*}} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x4x2xf32>
// CONST: %[[W:[0-9]+]] = top.weight "w" : tensor<1x2x2x2xf32>
// CONST: "tpu.move"(%0, %[[W]]) <{{{.*}}pieces = array<i64: 0, 1, 1, 2, 4, 0, 0, 0, 4, 1, 0, 0, 0, 8, 1, 1, 1, 1, 2, 4, 0, 0, 0, 4, 1, 4, 0, 0, 8, 1>

//--- ok.mlir
module attributes {top.weight_file = "ok_weights.npz"} {
func.func @main(%arg0: tensor<1x2x2x2xf32>, %arg1: tensor<1x1x4x4xf32>) -> tensor<1x48xf32> attributes {top.input_names = ["input", "other"], top.output_names = ["flat"]} {
  %0 = top.input %arg0 : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> loc("input")
  %1 = top.input %arg1 : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> loc("other")
  %2 = "top.resize"(%1) <{mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", scales = array<f64: 1.0, 1.0, 1.0, 1.0>, sizes = array<i64>}> : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> loc("up")
  %3 = "top.resize"(%0) <{mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", scales = array<f64: 1.0, 1.0, 2.0, 2.0>, sizes = array<i64>}> : (tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32> loc("big")
  %4 = "top.concat"(%3, %2) <{axis = 1 : i64}> : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x3x4x4xf32> loc("cat")
  %5 = "top.reshape"(%4) <{shape = array<i64: 1, 48>}> : (tensor<1x3x4x4xf32>) -> tensor<1x48xf32> loc("flat")
  return %5 : tensor<1x48xf32>
}
}

//--- along_h.mlir
module attributes {top.weight_file = "along_h_weights.npz"} {
func.func @main(%arg0: tensor<1x2x2x2xf32>) -> tensor<1x2x4x2xf32> attributes {top.input_names = ["input"], top.output_names = ["cat"]} {
  %0 = top.input %arg0 : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> loc("input")
  %1 = "top.concat"(%0, %0) <{axis = 2 : i64}> : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x4x2xf32> loc("cat")
  return %1 : tensor<1x2x4x2xf32>
}
}

//--- with_constant.mlir
module attributes {top.weight_file = "with_constant_weights.npz"} {
func.func @main(%arg0: tensor<1x2x2x2xf32>) -> tensor<1x2x4x2xf32> attributes {top.input_names = ["input"], top.output_names = ["cat"]} {
  %0 = top.input %arg0 : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> loc("input")
  %1 = top.weight "w" : tensor<1x2x2x2xf32> loc("w")
  %2 = "top.concat"(%0, %1) <{axis = 2 : i64}> : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x4x2xf32> loc("cat")
  return %2 : tensor<1x2x4x2xf32>
}
}

// --convert-top-to-tpu, resize (compiler/Lowering/Ops/Shape.cpp): nearest by
// a non-integer factor -> tpu.resize, int8 with the input's scale (copies);
// bilinear -> an fp32 tpu.resize, in INT8 between casts (an fp32 island);
// nearest by integer factors stays tpu.upsample; a resize of C has no
// lowering.
// RUN: rm -rf %t && split-file %s %t
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/ok.mlir
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/bad.mlir
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/up.mlir
// RUN: grep '^// CALI ' %s | cut -c9- > %t/t.cali
// RUN: tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali" | FileCheck %s
// RUN: not tpuc-opt %t/bad.mlir --convert-top-to-tpu="mode=F32" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: tpuc-opt %t/up.mlir --convert-top-to-tpu="mode=F32" 2>&1 | FileCheck %s --check-prefix=UP

// CALI input 2 -2 2
// CALI near 2 -2 2
// CALI lin 2 -2 2
// CALI relu 2 0 2

// CHECK: "tpu.resize"({{.*}}coordinate_transformation_mode = "asymmetric"{{.*}}mode = "nearest"{{.*}}nearest_mode = "floor"{{.*}}scales = array<f64: 2.500000e+00, 1.500000e+00>}> : (tensor<1x2x4x4xi8, 0.0157480314 : f32>) -> tensor<1x2x10x6xi8, 0.0157480314 : f32>
// CHECK: "tpu.cast"({{.*}} -> tensor<1x2x10x6xf32>
// CHECK: "tpu.resize"({{.*}}coordinate_transformation_mode = "half_pixel"{{.*}}mode = "linear"{{.*}}scales = array<f64: 5.000000e-01, 5.000000e-01>}> : (tensor<1x2x10x6xf32>) -> tensor<1x2x5x3xf32>
// CHECK: "tpu.cast"({{.*}} -> tensor<1x2x5x3xi8, 0.0157480314 : f32>
// CHECK: "tpu.relu"
// BAD: error: no lowering for top.resize 'ch' at loc("ch"): only resizes of H and W (NCHW)
// UP: "tpu.upsample"({{.*}}scale_h = 2 : i64, scale_w = 3 : i64

//--- ok.mlir
module attributes {top.weight_file = "ok_weights.npz"} {
func.func @main(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x2x5x3xf32> attributes {top.input_names = ["input"], top.output_names = ["relu"]} {
  %0 = top.input %arg0 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("input")
  %1 = "top.resize"(%0) <{mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", scales = array<f64: 1.0, 1.0, 2.5, 1.5>, sizes = array<i64>}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x10x6xf32> loc("near")
  %2 = "top.resize"(%1) <{mode = "linear", coordinate_transformation_mode = "half_pixel", nearest_mode = "round_prefer_floor", scales = array<f64: 1.0, 1.0, 0.5, 0.5>, sizes = array<i64>}> : (tensor<1x2x10x6xf32>) -> tensor<1x2x5x3xf32> loc("lin")
  %3 = "top.relu"(%2) : (tensor<1x2x5x3xf32>) -> tensor<1x2x5x3xf32> loc("relu")
  return %3 : tensor<1x2x5x3xf32>
}
}

//--- bad.mlir
module attributes {top.weight_file = "bad_weights.npz"} {
func.func @main(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> attributes {top.input_names = ["input"], top.output_names = ["ch"]} {
  %0 = top.input %arg0 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("input")
  %1 = "top.resize"(%0) <{mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", scales = array<f64: 1.0, 2.0, 1.0, 1.0>, sizes = array<i64>}> : (tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> loc("ch")
  return %1 : tensor<1x4x4x4xf32>
}
}

//--- up.mlir
module attributes {top.weight_file = "up_weights.npz"} {
func.func @main(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x2x8x12xf32> attributes {top.input_names = ["input"], top.output_names = ["up"]} {
  %0 = top.input %arg0 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("input")
  %1 = "top.resize"(%0) <{mode = "nearest", coordinate_transformation_mode = "half_pixel", nearest_mode = "round_prefer_ceil", scales = array<f64: 1.0, 1.0, 2.0, 3.0>, sizes = array<i64>}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x8x12xf32> loc("up")
  return %1 : tensor<1x2x8x12xf32>
}
}

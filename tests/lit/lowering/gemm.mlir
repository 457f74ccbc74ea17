// --convert-top-to-tpu, gemm family (compiler/Lowering/Ops/Gemm.cpp): gemm
// (alpha, beta, transB folded into an [n, k] weight) and matmul -> tpu.fc;
// transposed A is an fc reading its input transposed; a bias (C) whose rows
// differ is an fp32 add behind the fc; a batched weight is one fc per batch
// matrix between tpu.moves (one shift for the whole weight); a batched weight
// whose batch dims differ from the activation's has no lowering.
// RUN: rm -rf %t && split-file %s %t
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/ok.mlir
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/bad.mlir
// RUN: grep '^// CALI ' %s | cut -c9- > %t/t.cali
// RUN: tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali" | FileCheck %s
// RUN: not tpuc-opt %t/bad.mlir --convert-top-to-tpu="mode=F32" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/ta.mlir
// RUN: tpuc-opt %t/ta.mlir --convert-top-to-tpu="mode=F32" | FileCheck %s --check-prefix=F32TA
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/mb.mlir
// RUN: tpuc-opt %t/mb.mlir --verify-each --convert-top-to-tpu="mode=F32" | FileCheck %s --check-prefix=MB
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/batched.mlir
// RUN: tpuc-opt %t/batched.mlir --verify-each --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali" | FileCheck %s --check-prefix=BATCHED

// CALI input 2 -2 2
// CALI fc1 4 -4 4
// CALI fc2 4 -4 4
// CALI bm 8 -8 8

// fc1: scale_in 2/127, scale_out 4/127; alpha 0.5 folds into the weight:
// 9/8 * 0.5 * 0.5 * 2^8 = 72 <= 127; beta 2 into the int16 bias.
// CHECK: "tpu.fc"({{.*}}rshift = 8 : i64{{.*}} : (tensor<1x8xi8, 0.0157480314 : f32>, tensor<4x8xi8>, tensor<4xi16>) -> tensor<1x4xi8, 0.0314960629 : f32>
// fc2 (matmul, weight [k, n] transposed to [n, k]): 9/8 * 2^6 = 72.
// CHECK: "tpu.fc"({{.*}}rshift = 6 : i64{{.*}} : (tensor<1x4xi8, 0.0314960629 : f32>, tensor<3x4xi8>, none) -> tensor<1x3xi8, 0.0314960629 : f32>
// BAD: error: no lowering for top.matmul 'bc' at loc("bc"): a batched weight whose batch dims differ from the activation's
// MB: %[[FC:.*]] = "tpu.fc"({{.*}} : (tensor<2x8xf32>, tensor<4x8xf32>, none) -> tensor<2x4xf32>
// MB: %[[C:.*]] = top.weight "mb_c" : tensor<2x4xf32>
// MB: "tpu.add"(%[[FC]], %[[C]]) {{.*}} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// One shift for both batch matrices (the largest weight, 9/8, bounds it):
// 9/8 * (2/127) / (8/127) * 2^8 = 72.
// BATCHED: "tpu.move"({{.*}} -> tensor<3x4xi8, 0.0157480314 : f32>
// BATCHED: "tpu.fc"({{.*}}rshift = 8 : i64{{.*}} : (tensor<3x4xi8, 0.0157480314 : f32>, tensor<5x4xi8>, none) -> tensor<3x5xi8, 0.0629921257 : f32>
// BATCHED: "tpu.move"({{.*}} -> tensor<3x4xi8, 0.0157480314 : f32>
// BATCHED: "tpu.fc"({{.*}}rshift = 8 : i64{{.*}} -> tensor<3x5xi8, 0.0629921257 : f32>
// BATCHED: "tpu.move"({{.*}} : (tensor<3x5xi8, 0.0629921257 : f32>, tensor<3x5xi8, 0.0629921257 : f32>) -> tensor<2x3x5xi8, 0.0629921257 : f32>
// F32TA: "tpu.fc"({{.*}}transposed_input = true{{.*}} : (tensor<8x1xf32>, tensor<4x8xf32>, none) -> tensor<1x4xf32>

//--- ok.mlir
module attributes {top.weight_file = "ok_weights.npz"} {
func.func @main(%arg0: tensor<1x8xf32>) -> tensor<1x3xf32> attributes {top.input_names = ["input"], top.output_names = ["fc2"]} {
  %0 = top.input %arg0 : (tensor<1x8xf32>) -> tensor<1x8xf32> loc("input")
  %w = top.weight "w" : tensor<4x8xf32>
  %b = top.weight "b" : tensor<4xf32>
  %1 = "top.gemm"(%0, %w, %b) <{alpha = 0.5 : f64, beta = 2.0 : f64, transB = true}> : (tensor<1x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<1x4xf32> loc("fc1")
  %m = top.weight "m" : tensor<4x3xf32>
  %2 = "top.matmul"(%1, %m) : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32> loc("fc2")
  return %2 : tensor<1x3xf32>
}
}

//--- bad.mlir
module attributes {top.weight_file = "bad_weights.npz"} {
func.func @main(%arg0: tensor<2x3x4xf32>) -> tensor<2x3x5xf32> attributes {top.input_names = ["input"], top.output_names = ["bc"]} {
  %0 = top.input %arg0 : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("input")
  %w = top.weight "w" : tensor<1x4x5xf32>
  %1 = "top.matmul"(%0, %w) : (tensor<2x3x4xf32>, tensor<1x4x5xf32>) -> tensor<2x3x5xf32> loc("bc")
  return %1 : tensor<2x3x5xf32>
}
}

//--- ta.mlir
module attributes {top.weight_file = "ta_weights.npz"} {
func.func @main(%arg0: tensor<8x1xf32>) -> tensor<1x4xf32> attributes {top.input_names = ["input"], top.output_names = ["ta"]} {
  %0 = top.input %arg0 : (tensor<8x1xf32>) -> tensor<8x1xf32> loc("input")
  %w = top.weight "w" : tensor<8x4xf32>
  %none = top.none
  %1 = "top.gemm"(%0, %w, %none) <{transA = true}> : (tensor<8x1xf32>, tensor<8x4xf32>, none) -> tensor<1x4xf32>
  return %1 : tensor<1x4xf32>
}
}

//--- mb.mlir
module attributes {top.weight_file = "mb_weights.npz"} {
func.func @main(%arg0: tensor<2x8xf32>) -> tensor<2x4xf32> attributes {top.input_names = ["input"], top.output_names = ["mb"]} {
  %0 = top.input %arg0 : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("input")
  %w = top.weight "w" : tensor<8x4xf32>
  %c = top.weight "c" : tensor<2x4xf32>
  %1 = "top.gemm"(%0, %w, %c) : (tensor<2x8xf32>, tensor<8x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32> loc("mb")
  return %1 : tensor<2x4xf32>
}
}

//--- batched.mlir
module attributes {top.weight_file = "batched_weights.npz"} {
func.func @main(%arg0: tensor<2x3x4xf32>) -> tensor<2x3x5xf32> attributes {top.input_names = ["input"], top.output_names = ["bm"]} {
  %0 = top.input %arg0 : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("input")
  %w = top.weight "w" : tensor<2x4x5xf32>
  %1 = "top.matmul"(%0, %w) : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32> loc("bm")
  return %1 : tensor<2x3x5xf32>
}
}

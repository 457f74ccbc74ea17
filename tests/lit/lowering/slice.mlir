// --convert-top-to-tpu, top.slice (compiler/Lowering/Ops/Shape.cpp): a
// strided slice on any axis becomes tpu.slice with the starts and steps of
// the Top op (the ends are the result's shape); int8 keeps the input's
// scale, so no requant. A 3-d slice keeps its rank. A negative step and a
// rank-5 input become a tpu.move (Ops/DataMovement.cpp): one box whose
// source strides carry the steps (w reversed: start 3, stride -1; the rank-5
// box merges to 32 elements read with stride 2).
// RUN: rm -rf %t && split-file %s %t
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/ok.mlir
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/reversed.mlir
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/rank5.mlir
// RUN: grep '^// CALI ' %s | cut -c9- > %t/t.cali
// RUN: tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali" | FileCheck %s
// RUN: tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=F32" | FileCheck %s --check-prefix=F32
// RUN: tpuc-opt %t/reversed.mlir --convert-top-to-tpu="mode=F32" | FileCheck %s --check-prefix=REV
// RUN: tpuc-opt %t/rank5.mlir --convert-top-to-tpu="mode=F32" | FileCheck %s --check-prefix=RANK

// CALI input 2 -2 2
// CALI odd_rows 1 -1 1
// CALI half 1 -1 1
// CALI seq 2 -2 2
// CALI rows 1 -1 1

// CHECK: "tpu.cast"({{.*}} -> tensor<1x6x8x8xi8, 0.0157480314 : f32>
// CHECK: "tpu.slice"({{.*}}) <{do_relu = false, multipliers = array<i64>, rshift = 0 : i64, starts = array<i64: 0, 1, 1, 0>, steps = array<i64: 1, 2, 2, 3>}> : (tensor<1x6x8x8xi8, 0.0157480314 : f32>) -> tensor<1x3x4x3xi8, 0.0157480314 : f32>
// CHECK-NOT: tpu.requant
// CHECK: "tpu.slice"({{.*}}) <{do_relu = false, multipliers = array<i64>, rshift = 0 : i64, starts = array<i64: 0, 0, 4, 0>, steps = array<i64: 1, 1, 1, 1>}> : (tensor<1x6x8x8xi8, 0.0157480314 : f32>) -> tensor<1x6x4x8xi8, 0.0157480314 : f32>
// CHECK: "tpu.slice"({{.*}}) <{do_relu = false, multipliers = array<i64>, rshift = 0 : i64, starts = array<i64: 2, 0, 1>, steps = array<i64: 1, 1, 2>}> : (tensor<6x8x8xi8, 0.0157480314 : f32>) -> tensor<4x8x4xi8, 0.0157480314 : f32>
// F32: "tpu.slice"({{.*}}) <{{{.*}}starts = array<i64: 0, 1, 1, 0>, steps = array<i64: 1, 2, 2, 3>}> : (tensor<1x6x8x8xf32>) -> tensor<1x3x4x3xf32>
// REV: "tpu.move"(%0) <{{{.*}}pieces = array<i64: 0, 1, 1, 8, 4, 3, 0, 0, 4, -1, 0, 0, 0, 4, 1>{{.*}}(tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// RANK: "tpu.move"(%0) <{{{.*}}pieces = array<i64: 0, 1, 1, 1, 32, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1>{{.*}}(tensor<1x2x2x4x4xf32>) -> tensor<1x2x2x4x2xf32>

//--- ok.mlir
module attributes {top.weight_file = "ok_weights.npz"} {
func.func @main(%arg0: tensor<1x6x8x8xf32>, %arg1: tensor<6x8x8xf32>) -> (tensor<1x3x4x3xf32>, tensor<1x6x4x8xf32>, tensor<4x8x4xf32>) attributes {top.input_names = ["input", "seq"], top.output_names = ["odd_rows", "half", "rows"]} {
  %0 = top.input %arg0 : (tensor<1x6x8x8xf32>) -> tensor<1x6x8x8xf32> loc("input")
  %1 = "top.slice"(%0) <{starts = array<i64: 0, 1, 1, 0>, ends = array<i64: 1, 6, 8, 8>, steps = array<i64: 1, 2, 2, 3>}> : (tensor<1x6x8x8xf32>) -> tensor<1x3x4x3xf32> loc("odd_rows")
  %2 = "top.slice"(%0) <{starts = array<i64: 0, 0, 4, 0>, ends = array<i64: 1, 6, 8, 8>, steps = array<i64: 1, 1, 1, 1>}> : (tensor<1x6x8x8xf32>) -> tensor<1x6x4x8xf32> loc("half")
  %3 = top.input %arg1 : (tensor<6x8x8xf32>) -> tensor<6x8x8xf32> loc("seq")
  %4 = "top.slice"(%3) <{starts = array<i64: 2, 0, 1>, ends = array<i64: 6, 8, 8>, steps = array<i64: 1, 1, 2>}> : (tensor<6x8x8xf32>) -> tensor<4x8x4xf32> loc("rows")
  return %1, %2, %4 : tensor<1x3x4x3xf32>, tensor<1x6x4x8xf32>, tensor<4x8x4xf32>
}
}

//--- reversed.mlir
module attributes {top.weight_file = "reversed_weights.npz"} {
func.func @main(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> attributes {top.input_names = ["input"], top.output_names = ["reversed"]} {
  %0 = top.input %arg0 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("input")
  %1 = "top.slice"(%0) <{starts = array<i64: 0, 0, 0, 3>, ends = array<i64: 1, 2, 4, -1>, steps = array<i64: 1, 1, 1, -1>}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("reversed")
  return %1 : tensor<1x2x4x4xf32>
}
}

//--- rank5.mlir
module attributes {top.weight_file = "rank5_weights.npz"} {
func.func @main(%arg0: tensor<1x2x2x4x4xf32>) -> tensor<1x2x2x4x2xf32> attributes {top.input_names = ["input"], top.output_names = ["deep"]} {
  %0 = top.input %arg0 : (tensor<1x2x2x4x4xf32>) -> tensor<1x2x2x4x4xf32> loc("input")
  %1 = "top.slice"(%0) <{starts = array<i64: 0, 0, 0, 0, 0>, ends = array<i64: 1, 2, 2, 4, 4>, steps = array<i64: 1, 1, 1, 1, 2>}> : (tensor<1x2x2x4x4xf32>) -> tensor<1x2x2x4x2xf32> loc("deep")
  return %1 : tensor<1x2x2x4x2xf32>
}
}

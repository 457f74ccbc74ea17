// --convert-top-to-tpu, reduce family (compiler/Lowering/Ops/Reduce.cpp):
// every top.reduce_* and top.global_max_pool becomes one tpu.reduce with its
// mode and the input dims it reduces (keepdims is the result's shape). INT8:
// max and min keep the input's scale; sum and mean requantize with one
// multiplier in [1, 255] (m = s_x / (s_y * count) * 2^rshift); prod and l2
// stay fp32 with a "kept in F32" warning. A rank-0 result is a back-end
// scalar (one element); a rank-5 input has no lowering.
// RUN: rm -rf %t && split-file %s %t
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/ok.mlir
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/scalar.mlir
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/rank5.mlir
// RUN: grep '^// CALI ' %s | cut -c9- > %t/t.cali
// RUN: tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali" 2>%t/warn.txt | FileCheck %s
// RUN: FileCheck %s --check-prefix=WARN < %t/warn.txt
// RUN: tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=F32" | FileCheck %s --check-prefix=FP32
// RUN: tpuc-opt %t/scalar.mlir --verify-each --convert-top-to-tpu="mode=F32" | FileCheck %s --check-prefix=SCALAR
// RUN: not tpuc-opt %t/rank5.mlir --convert-top-to-tpu="mode=F32 cpu-subnets=false" 2>&1 | FileCheck %s --check-prefix=RANK
// RUN: tpuc-opt %t/rank5.mlir --convert-top-to-tpu="mode=F32" | FileCheck %s --check-prefix=RANKHOST

// CALI input 2 -2 2
// CALI mean 1 -1 1
// CALI max 2 -2 2
// CALI sum 8 -8 8
// CALI prod 1 -1 1
// CALI gmax 2 -2 2

// (2/127) / (1/127) / 20 * 2^11 = 204.8 -> 205 <= 255.
// CHECK: "tpu.reduce"({{.*}}) <{axes = array<i64: 2, 3>, do_relu = false, mode = "mean", multipliers = array<i64: 205>, rshift = 11 : i64}> : (tensor<2x6x4x5xi8, 0.0157480314 : f32>) -> tensor<2x6xi8, 0.00787401571 : f32>
// CHECK: "tpu.reduce"({{.*}}) <{axes = array<i64: 1>, do_relu = false, mode = "min", multipliers = array<i64>, rshift = 0 : i64}> : (tensor<2x6x4x5xi8, 0.0157480314 : f32>) -> tensor<2x1x4x5xi8, 0.0157480314 : f32>
// (2/127) / (8/127) * 2^9 = 128 (2^10 gives 256).
// CHECK: "tpu.reduce"({{.*}}) <{axes = array<i64: 0, 2>, do_relu = false, mode = "sum", multipliers = array<i64: 128>, rshift = 9 : i64}> : (tensor<2x6x4x5xi8, 0.0157480314 : f32>) -> tensor<1x6x1x5xi8, 0.0629921257 : f32>
// CHECK: "tpu.reduce"({{.*}}) <{axes = array<i64: 3>, do_relu = false, mode = "prod", multipliers = array<i64>, rshift = 0 : i64}> : (tensor<2x6x4x5xf32>) -> tensor<2x6x4x1xf32>
// CHECK: "tpu.reduce"({{.*}}) <{axes = array<i64: 2, 3>, do_relu = false, mode = "max", multipliers = array<i64>, rshift = 0 : i64}> : (tensor<2x6x4x5xi8, 0.0157480314 : f32>) -> tensor<2x6x1x1xi8, 0.0157480314 : f32>
// WARN: warning: kept in F32: prod: the BM1684 has no int8 prod
// FP32: "tpu.reduce"({{.*}}) <{axes = array<i64: 2, 3>, do_relu = false, mode = "mean", multipliers = array<i64>, rshift = 0 : i64}> : (tensor<2x6x4x5xf32>) -> tensor<2x6xf32>
// FP32: "tpu.reduce"({{.*}}mode = "min"{{.*}} -> tensor<2x1x4x5xf32>
// FP32: "tpu.reduce"({{.*}}mode = "sum"{{.*}} -> tensor<1x6x1x5xf32>
// FP32: "tpu.reduce"({{.*}}mode = "prod"{{.*}} -> tensor<2x6x4x1xf32>
// FP32: "tpu.reduce"({{.*}}mode = "max"{{.*}} -> tensor<2x6x1x1xf32>
// SCALAR: "tpu.reduce"({{.*}}axes = array<i64: 0, 1>{{.*}}mode = "sum"{{.*}} : (tensor<2x3xf32>) -> tensor<f32>
// RANK: error: no lowering for top.reduce_max 'deep' at loc("deep"): an input of more than 4 dims (the back end holds 1 to 4)
// The chip refuses it, the host runs it (a CPU sub-net):
// RANKHOST: "tpu.cpu"({{.*}}) <{op_name = "top.reduce_max"

//--- ok.mlir
module attributes {top.weight_file = "ok_weights.npz"} {
func.func @main(%arg0: tensor<2x6x4x5xf32>) -> (tensor<2x6xf32>, tensor<2x1x4x5xf32>, tensor<1x6x1x5xf32>, tensor<2x6x4x1xf32>, tensor<2x6x1x1xf32>) attributes {top.input_names = ["input"], top.output_names = ["mean", "max", "sum", "prod", "gmax"]} {
  %0 = top.input %arg0 : (tensor<2x6x4x5xf32>) -> tensor<2x6x4x5xf32> loc("input")
  %1 = "top.reduce_mean"(%0) <{axes = array<i64: 2, 3>, keepdims = false}> : (tensor<2x6x4x5xf32>) -> tensor<2x6xf32> loc("mean")
  %2 = "top.reduce_min"(%0) <{axes = array<i64: 1>, keepdims = true}> : (tensor<2x6x4x5xf32>) -> tensor<2x1x4x5xf32> loc("max")
  %3 = "top.reduce_sum"(%0) <{axes = array<i64: 0, 2>, keepdims = true}> : (tensor<2x6x4x5xf32>) -> tensor<1x6x1x5xf32> loc("sum")
  %4 = "top.reduce_prod"(%0) <{axes = array<i64: 3>, keepdims = true}> : (tensor<2x6x4x5xf32>) -> tensor<2x6x4x1xf32> loc("prod")
  %5 = "top.global_max_pool"(%0) : (tensor<2x6x4x5xf32>) -> tensor<2x6x1x1xf32> loc("gmax")
  return %1, %2, %3, %4, %5 : tensor<2x6xf32>, tensor<2x1x4x5xf32>, tensor<1x6x1x5xf32>, tensor<2x6x4x1xf32>, tensor<2x6x1x1xf32>
}
}

//--- scalar.mlir
module attributes {top.weight_file = "scalar_weights.npz"} {
func.func @main(%arg0: tensor<2x3xf32>) -> tensor<f32> attributes {top.input_names = ["input"], top.output_names = ["total"]} {
  %0 = top.input %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("input")
  %1 = "top.reduce_sum"(%0) <{axes = array<i64: 0, 1>, keepdims = false}> : (tensor<2x3xf32>) -> tensor<f32> loc("total")
  return %1 : tensor<f32>
}
}

//--- rank5.mlir
module attributes {top.weight_file = "rank5_weights.npz"} {
func.func @main(%arg0: tensor<1x2x2x4x4xf32>) -> tensor<1x2x2x4xf32> attributes {top.input_names = ["input"], top.output_names = ["deep"]} {
  %0 = top.input %arg0 : (tensor<1x2x2x4x4xf32>) -> tensor<1x2x2x4x4xf32> loc("input")
  %1 = "top.reduce_max"(%0) <{axes = array<i64: 4>, keepdims = false}> : (tensor<1x2x2x4x4xf32>) -> tensor<1x2x2x4xf32> loc("deep")
  return %1 : tensor<1x2x2x4xf32>
}
}

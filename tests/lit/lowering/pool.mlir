// --convert-top-to-tpu, pool family (compiler/Lowering/Ops/Pool.cpp): int8 max
// pool keeps the scale; average pools get sum * multiplier >> rshift with
// the multiplier in [1, 255]; windows covering different tap counts
// (uncounted padding, ceil mode) get one multiplier per count.
// RUN: rm -rf %t && split-file %s %t
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/ok.mlir
// RUN: grep '^// CALI ' %s | cut -c9- > %t/t.cali
// RUN: tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali" | FileCheck %s
// One window over the whole input is a global pool, whatever its stride
// (the chip's window strides stop at 15).
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/whole.mlir
// RUN: tpuc-opt %t/whole.mlir --convert-top-to-tpu="mode=F32" | FileCheck %s --check-prefix=WHOLE
// WHOLE: "tpu.global_avg_pool"({{.*}} : (tensor<1x2x32x32xf32>) -> tensor<1x2x1x1xf32>
// WHOLE-NOT: tpu.avg_pool

// CALI input 2 -2 2
// CALI mp 2 -2 2
// CALI ap 1 -1 1
// CALI ap2 1 -1 1
// CALI gap 0.5 -0.5 0.5

// CHECK: "tpu.max_pool"({{.*}} : (tensor<1x2x8x8xi8, 0.0157480314 : f32>) -> tensor<1x2x4x4xi8, 0.0157480314 : f32>
// (2/127) / (1/127) / 9 * 2^10 = 227.6 -> 228 <= 255.
// CHECK: "tpu.avg_pool"({{.*}}multipliers = array<i64: 228>{{.*}}rshift = 10 : i64{{.*}} -> tensor<1x2x4x4xi8, 0.00787401571 : f32>
// Uncounted padding, 3x3 over 4x4 with pad 1: windows cover 4, 6 or 9 taps;
// the fewest bound the shift: 1 / 4 * 2^9 = 128, 1 / 6 * 2^9 = 85.3, 1 / 9 * 2^9 = 56.9.
// CHECK: "tpu.avg_pool"({{.*}}count_include_pad = false{{.*}}multipliers = array<i64: 0, 0, 0, 128, 0, 85, 0, 0, 57>{{.*}}rshift = 9 : i64
// (1/127) / (0.5/127) / 16 * 2^10 = 128.
// CHECK: "tpu.global_avg_pool"({{.*}}multipliers = array<i64: 128>, rshift = 10 : i64{{.*}} -> tensor<1x2x1x1xi8, 0.00393700786 : f32>

//--- ok.mlir
module attributes {top.weight_file = "ok_weights.npz"} {
func.func @main(%arg0: tensor<1x2x8x8xf32>) -> tensor<1x2x1x1xf32> attributes {top.input_names = ["input"], top.output_names = ["gap"]} {
  %0 = top.input %arg0 : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32> loc("input")
  %1 = "top.max_pool"(%0) <{dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}> : (tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32> loc("mp")
  %2 = "top.avg_pool"(%1) <{dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, count_include_pad = true}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("ap")
  %3 = "top.avg_pool"(%2) <{dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("ap2")
  %4 = "top.global_avg_pool"(%3) : (tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32> loc("gap")
  return %4 : tensor<1x2x1x1xf32>
}
}

//--- whole.mlir
module attributes {top.weight_file = "whole_weights.npz"} {
func.func @main(%arg0: tensor<1x2x32x32xf32>) -> tensor<1x2x1x1xf32> attributes {top.input_names = ["input"], top.output_names = ["pool"]} {
  %0 = top.input %arg0 : (tensor<1x2x32x32xf32>) -> tensor<1x2x32x32xf32> loc("input")
  %1 = "top.avg_pool"(%0) <{dilations = array<i64: 1, 1>, kernel_shape = array<i64: 32, 32>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 32, 32>, count_include_pad = false}> : (tensor<1x2x32x32xf32>) -> tensor<1x2x1x1xf32> loc("pool")
  return %1 : tensor<1x2x1x1xf32>
}
}

// --convert-top-to-tpu, conv family (compiler/Lowering/Ops/Conv.cpp): an int8
// conv with its relu fused, an int8 transposed conv with the per-channel add
// behind it folded into its bias, a depthwise transposed conv; 1-D conv and
// transposed conv as the 2-D ones over (N, C, L, 1); a transposed conv whose
// stride the chip's zero-insertion field cannot hold has no lowering.
// Weights: Inputs/make_weights.py; scales: the CALI lines below.
// RUN: rm -rf %t && split-file %s %t
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/ok.mlir
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/bad.mlir
// RUN: grep '^// CALI ' %s | cut -c9- > %t/t.cali
// RUN: tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali" | FileCheck %s
// RUN: not tpuc-opt %t/bad.mlir --convert-top-to-tpu="mode=F32" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/oned.mlir
// RUN: tpuc-opt %t/oned.mlir --convert-top-to-tpu="mode=F32" | FileCheck %s --check-prefix=ONED
// A tensor in the quantize table stays fp32; its user gets a tpu.cast.
// RUN: printf 'conv\n' > %t/q.txt
// RUN: tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali quantize-table=%t/q.txt weight-file=q.npz" | FileCheck %s --check-prefix=QTABLE
// Pass options: a mode that is not F32/INT8, INT8 without a calibration table.
// RUN: not tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=INT4" 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=INT8" 2>&1 | FileCheck %s --check-prefix=NOCALI

// CALI input 2 -2 2
// CALI conv 8 -8 8
// CALI relu 8 0 8
// CALI deconv 4 -4 4
// CALI shifted 4 -4 4
// CALI up 8 -8 8

// scale_in 2/127, scale_out 8/255 (uint8: relu), weights up to 9/8:
// 9/8 * (2/127) / (8/255) * 2^7 = 72.3 <= 127, * 2^8 would not fit.
// CHECK: "tpu.conv"({{.*}}do_relu = true{{.*}}rshift = 7 : i64{{.*}} : (tensor<1x2x6x6xi8, 0.0157480314 : f32>, tensor<3x2x3x3xi8>, tensor<3xi16>) -> tensor<1x3x6x6xui8, 0.0313725509 : f32>
// scale_in 8/255, scale_out 4/127: 9/8 * 0.996 * 2^6 = 71.7; the add's
// per-channel constant is the bias.
// CHECK: "tpu.conv_transpose"({{.*}}rshift = 6 : i64{{.*}} : (tensor<1x3x6x6xui8, 0.0313725509 : f32>, tensor<3x2x2x2xi8>, tensor<2xi16>) -> tensor<1x2x12x12xi8, 0.0314960629 : f32>
// CHECK-NOT: tpu.add
// Depthwise (group 3): filter [ic, oc/group, kh, kw] = [3, 1, 2, 2].
// CHECK: "tpu.conv_transpose"({{.*}}group = 3 : i64{{.*}} : (tensor<1x3x6x6xui8, 0.0313725509 : f32>, tensor<3x1x2x2xi8>, none) -> tensor<1x3x12x12xi8, 0.0629921257 : f32>

// ONED: "tpu.conv"({{.*}}dilations = array<i64: 2, 1>{{.*}}kernel_shape = array<i64: 3, 1>{{.*}}pads = array<i64: 2, 0, 1, 0>{{.*}}strides = array<i64: 1, 1>}> : (tensor<1x2x10xf32>, tensor<4x2x3x1xf32>, tensor<4xf32>) -> tensor<1x4x9xf32>
// ONED: "tpu.conv_transpose"({{.*}}kernel_shape = array<i64: 3, 1>{{.*}}pads = array<i64: 1, 0, 0, 0>{{.*}}strides = array<i64: 2, 1>}> : (tensor<1x4x9xf32>, tensor<4x2x3x1xf32>, none) -> tensor<1x2x18xf32>

// QTABLE: "tpu.conv"({{.*}} : (tensor<1x2x6x6xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x6x6xf32>
// QTABLE: "tpu.cast"({{.*}} : (tensor<1x3x6x6xf32>) -> tensor<1x3x6x6xui8, 0.0313725509 : f32>
// QTABLE: "tpu.conv_transpose"({{.*}}rshift = 6 : i64

// MODE: error: --quantize 'INT4' is not one of F32, INT8, F16, BF16
// NOCALI: error: INT8 needs a calibration table (--calibration-table)
// BAD: error: no lowering for top.conv_transpose 'wide' at loc("wide"): stride 17x17 exceeds 16 (zeros inserted between input rows: a 4-bit field)

//--- ok.mlir
module attributes {top.weight_file = "ok_weights.npz"} {
func.func @main(%arg0: tensor<1x2x6x6xf32>) -> (tensor<1x2x12x12xf32>, tensor<1x3x12x12xf32>) attributes {top.input_names = ["input"], top.output_names = ["shifted", "up"]} {
  %0 = top.input %arg0 : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32> loc("input")
  %w = top.weight "w" : tensor<3x2x3x3xf32>
  %b = top.weight "b" : tensor<3xf32>
  %1 = "top.conv"(%0, %w, %b) <{dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}> : (tensor<1x2x6x6xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x6x6xf32> loc("conv")
  %2 = "top.relu"(%1) : (tensor<1x3x6x6xf32>) -> tensor<1x3x6x6xf32> loc("relu")
  %dw = top.weight "dw" : tensor<3x2x2x2xf32>
  %none = top.none
  %3 = "top.conv_transpose"(%2, %dw, %none) <{dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}> : (tensor<1x3x6x6xf32>, tensor<3x2x2x2xf32>, none) -> tensor<1x2x12x12xf32> loc("deconv")
  %c = top.weight "c" : tensor<1x2x1x1xf32>
  %4 = "top.add"(%3, %c) : (tensor<1x2x12x12xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x12x12xf32> loc("shifted")
  %gw = top.weight "gw" : tensor<3x1x2x2xf32>
  %5 = "top.conv_transpose"(%2, %gw, %none) <{dilations = array<i64: 1, 1>, group = 3 : i64, kernel_shape = array<i64: 2, 2>, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}> : (tensor<1x3x6x6xf32>, tensor<3x1x2x2xf32>, none) -> tensor<1x3x12x12xf32> loc("up")
  return %4, %5 : tensor<1x2x12x12xf32>, tensor<1x3x12x12xf32>
}
}

//--- oned.mlir
module attributes {top.weight_file = "oned_weights.npz"} {
func.func @main(%arg0: tensor<1x2x10xf32>) -> tensor<1x2x18xf32> attributes {top.input_names = ["input"], top.output_names = ["up"]} {
  %0 = top.input %arg0 : (tensor<1x2x10xf32>) -> tensor<1x2x10xf32> loc("input")
  %w = top.weight "w" : tensor<4x2x3xf32>
  %b = top.weight "b" : tensor<4xf32>
  %1 = "top.conv"(%0, %w, %b) <{dilations = array<i64: 2>, group = 1 : i64, kernel_shape = array<i64: 3>, pads = array<i64: 2, 1>, strides = array<i64: 1>}> : (tensor<1x2x10xf32>, tensor<4x2x3xf32>, tensor<4xf32>) -> tensor<1x4x9xf32> loc("conv")
  %dw = top.weight "dw" : tensor<4x2x3xf32>
  %none = top.none
  %2 = "top.conv_transpose"(%1, %dw, %none) <{dilations = array<i64: 1>, kernel_shape = array<i64: 3>, output_padding = array<i64: 0>, pads = array<i64: 1, 0>, strides = array<i64: 2>}> : (tensor<1x4x9xf32>, tensor<4x2x3xf32>, none) -> tensor<1x2x18xf32> loc("up")
  return %2 : tensor<1x2x18xf32>
}
}

//--- bad.mlir
module attributes {top.weight_file = "bad_weights.npz"} {
func.func @main(%arg0: tensor<1x2x6x6xf32>) -> tensor<1x1x103x103xf32> attributes {top.input_names = ["input"], top.output_names = ["wide"]} {
  %0 = top.input %arg0 : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32> loc("input")
  %gw = top.weight "gw" : tensor<2x1x18x18xf32>
  %none = top.none
  %1 = "top.conv_transpose"(%0, %gw, %none) <{dilations = array<i64: 1, 1>, kernel_shape = array<i64: 18, 18>, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 17, 17>}> : (tensor<1x2x6x6xf32>, tensor<2x1x18x18xf32>, none) -> tensor<1x1x103x103xf32> loc("wide")
  return %1 : tensor<1x1x103x103xf32>
}
}

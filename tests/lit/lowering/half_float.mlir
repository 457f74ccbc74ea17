// --convert-top-to-tpu mode=F16 and mode=BF16 (compiler/Lowering/HalfFloat.cpp): the F32 lowering with
// every chip tensor in the 16-bit type. The graph input is cast to it where the conv reads it; the conv's
// filter is a 16-bit weight, its bias stays fp32; a host op (top.topk) reads an fp32 cast of the 16-bit
// value; each output is an fp32 cast under the output's name, its 16-bit producer renamed with the suffix.
// RUN: rm -rf %t && split-file %s %t
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/m.mlir
// RUN: tpuc-opt %t/m.mlir --convert-top-to-tpu="mode=F16" -mlir-print-debuginfo | FileCheck %s
// RUN: tpuc-opt %t/m.mlir --convert-top-to-tpu="mode=BF16" | FileCheck %s --check-prefix=BF16

// CHECK: %[[IN:.*]] = top.input %arg0 {{.*}}-> tensor<1x2x6x6xf32>
// CHECK: %[[X:.*]] = "tpu.cast"(%[[IN]]) {{.*}}: (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf16> loc(#[[XLOC:.*]])
// CHECK: %[[W:.*]] = top.weight "conv_filter_f16" : tensor<3x2x3x3xf16>
// CHECK: %[[B:.*]] = top.weight "conv_bias" : tensor<3xf32>
// CHECK: %[[C:.*]] = "tpu.conv"(%[[X]], %[[W]], %[[B]]) {{.*}}: (tensor<1x2x6x6xf16>, tensor<3x2x3x3xf16>, tensor<3xf32>) -> tensor<1x3x6x6xf16> loc(#[[CLOC:.*]])
// CHECK-DAG: %[[OUT:.*]] = "tpu.cast"(%[[C]]) {{.*}}-> tensor<1x3x6x6xf32> loc(#[[OLOC:.*]])
// CHECK-DAG: %[[HOST:.*]] = "tpu.cast"(%[[C]]) {{.*}}-> tensor<1x3x6x6xf32> loc(#[[HLOC:.*]])
// CHECK: "tpu.cpu"(%[[HOST]])
// CHECK: return %[[OUT]],
// CHECK-DAG: #[[XLOC]] = loc("input_f16")
// CHECK-DAG: #[[CLOC]] = loc("conv_f16")
// CHECK-DAG: #[[HLOC]] = loc("conv_f32")
// CHECK-DAG: #[[OLOC]] = loc("conv")

// BF16: "tpu.conv"({{.*}}: (tensor<1x2x6x6xbf16>, tensor<3x2x3x3xbf16>, tensor<3xf32>) -> tensor<1x3x6x6xbf16>

//--- m.mlir
module attributes {top.weight_file = "m_weights.npz"} {
func.func @main(%arg0: tensor<1x2x6x6xf32>) -> (tensor<1x3x6x6xf32>, tensor<1x3x6x2xf32>) attributes {top.input_names = ["input"], top.output_names = ["conv", "top_values"]} {
  %0 = top.input %arg0 : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32> loc("input")
  %w = top.weight "w" : tensor<3x2x3x3xf32>
  %b = top.weight "b" : tensor<3xf32>
  %1 = "top.conv"(%0, %w, %b) <{dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}> : (tensor<1x2x6x6xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x6x6xf32> loc("conv")
  %values, %indices = "top.topk"(%1) <{axis = 3 : i64, k = 2 : i64}> : (tensor<1x3x6x6xf32>) -> (tensor<1x3x6x2xf32>, tensor<1x3x6x2xi64>) loc(fused["top_values", "top_indices"])
  return %1, %values : tensor<1x3x6x6xf32>, tensor<1x3x6x2xf32>
}
}

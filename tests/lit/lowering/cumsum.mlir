// --convert-top-to-tpu, top.cumsum (compiler/Lowering/Ops/Reduce.cpp): x
// viewed as (1, outer, L, inner) is moved into a zero-filled
// (1, outer, 2L - 1, inner) tensor (after L - 1 zero rows; before them when
// reversed), a depthwise tpu.conv with an (L, 1) filter of ones sums each
// row's window (exclusive: the row's own tap is 0), and a tpu.move gives the
// result its shape back. INT8 keeps it fp32 between casts, with a warning.
// RUN: rm -rf %t && split-file %s %t
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/ok.mlir
// RUN: grep '^// CALI ' %s | cut -c9- > %t/t.cali
// RUN: tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=F32" | FileCheck %s
// RUN: tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali" 2>%t/warn.txt | FileCheck %s --check-prefix=INT8
// RUN: FileCheck %s --check-prefix=WARN < %t/warn.txt

// CALI input 4 -4 4
// CALI sums 12 -12 12
// CALI back 12 -12 12

// sums: axis 1 of 2x3x4 is (1, 2, 3, 4); after 2 zero rows of 4 (offset 8) in a (1, 2, 5, 4) tensor.
// CHECK: %[[P:.*]] = "tpu.move"(%0) <{{{.*}}fill = 0.000000e+00 : f64{{.*}}pieces = array<i64: 0, 1, 1, 2, 12, 0, 0, 0, 12, 1, 8, 0, 0, 20, 1>{{.*}} : (tensor<2x3x4xf32>) -> tensor<1x2x5x4xf32>
// CHECK: %[[W:.*]] = top.weight "sums_taps" : tensor<2x1x3x1xf32>
// CHECK: %[[S:.*]] = "tpu.conv"(%[[P]], %[[W]], %{{.*}}) <{dilations = array<i64: 1, 1>, do_relu = false, group = 2 : i64, kernel_shape = array<i64: 3, 1>, {{.*}}pads = array<i64: 0, 0, 0, 0>{{.*}}strides = array<i64: 1, 1>}> : (tensor<1x2x5x4xf32>, tensor<2x1x3x1xf32>, none) -> tensor<1x2x3x4xf32>
// CHECK: "tpu.move"(%[[S]]) {{.*}} : (tensor<1x2x3x4xf32>) -> tensor<2x3x4xf32>
// back: axis 2 reversed is (1, 6, 4, 1), its rows first (offset 0) in a (1, 6, 7, 1) tensor.
// CHECK: "tpu.move"(%0) <{{{.*}}pieces = array<i64: 0, 1, 1, 6, 4, 0, 0, 0, 4, 1, 0, 0, 0, 7, 1>{{.*}} -> tensor<1x6x7x1xf32>
// CHECK: "tpu.conv"({{.*}}group = 6 : i64, kernel_shape = array<i64: 4, 1>{{.*}} -> tensor<1x6x4x1xf32>
// CHECK: "tpu.move"({{.*}} : (tensor<1x6x4x1xf32>) -> tensor<2x3x4xf32>
// INT8: "tpu.move"(%0) {{.*}} : (tensor<2x3x4xf32>) -> tensor<1x2x5x4xf32>
// INT8: "tpu.conv"({{.*}} : (tensor<1x2x5x4xf32>, tensor<2x1x3x1xf32>, none) -> tensor<1x2x3x4xf32>
// WARN: warning: kept in F32: sums: cumsum runs in fp32 on the BM1684
// WARN: warning: kept in F32: back: cumsum runs in fp32 on the BM1684

//--- ok.mlir
module attributes {top.weight_file = "ok_weights.npz"} {
func.func @main(%arg0: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>) attributes {top.input_names = ["input"], top.output_names = ["sums", "back"]} {
  %0 = top.input %arg0 : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("input")
  %1 = "top.cumsum"(%0) <{axis = 1 : i64}> : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %2 = "top.cumsum"(%0) <{axis = 2 : i64, exclusive = true, reverse = true}> : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %1, %2 : tensor<2x3x4xf32>, tensor<2x3x4xf32>
}
}

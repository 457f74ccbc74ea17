// --convert-top-to-tpu, element-wise family (compiler/Lowering/Ops/Elementwise.cpp):
// add (relu fused; lhs*m0 + rhs*m1 >> rshift, int16 multipliers), mul of
// two activations (lhs*rhs*m0 >> rshift), max, and a mul by a per-channel
// constant followed by an add of a scalar -> one tpu.affine (int16 scale,
// int32 bias weights), sub and min (lhs*m0 - rhs*m1, min(lhs*m0, rhs*m1));
// max by a per-channel constant in F32 (a weight operand); a 0-d activation
// operand is a one-element tensor that broadcasts.
// RUN: rm -rf %t && split-file %s %t
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/ok.mlir
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/scalar.mlir
// RUN: grep '^// CALI ' %s | cut -c9- > %t/t.cali
// RUN: tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali" | FileCheck %s
// RUN: tpuc-opt %t/ok.mlir --verify-each --convert-top-to-tpu="mode=F32" | FileCheck %s --check-prefix=F32
// RUN: tpuc-opt %t/scalar.mlir --verify-each --convert-top-to-tpu="mode=F32" | FileCheck %s --check-prefix=SCALAR

// CALI input 2 -2 2
// CALI other 1 -1 1
// CALI add 3 -3 3
// CALI sum 3 0 3
// CALI prod 2 -2 2
// CALI big 2 -2 2
// CALI scaled 4 -4 4
// CALI shifted 4 -4 4
// CALI diff 5 -5 5
// CALI low 5 -5 5
// CALI top 5 -5 5

// add: (2/127) / (3/255) = 1.339 and (1/127) / (3/255) = 0.669 with the
// largest shift keeping both <= 16383: 2^13.
// CHECK: "tpu.add"({{.*}}) <{do_relu = true, multipliers = array<i64: 10966, 5483>, rshift = 13 : i64}> : (tensor<1x2x4x4xi8, 0.0157480314 : f32>, tensor<1x2x4x4xi8, 0.00787401571 : f32>) -> tensor<1x2x4x4xui8, 0.0117647061 : f32>
// mul: (3/255) * (1/127) / (2/127) * 2^21 = 12336.
// CHECK: "tpu.mul"({{.*}}) <{do_relu = false, multipliers = array<i64: 12336>, rshift = 21 : i64}>
// CHECK: "tpu.max"({{.*}}) <{do_relu = false, multipliers = array<i64: 8192, 8192>, rshift = 13 : i64}>
// mul by [-1, -1.125] per channel, add -1: one affine; scale 1.125 * 0.5 * 2^15 = 18432 <= 32767.
// CHECK: "tpu.affine"({{.*}}rshift = 15 : i64{{.*}} : (tensor<1x2x4x4xi8, 0.0157480314 : f32>, tensor<2xi16>, tensor<2xi32>) -> tensor<1x2x4x4xi8, 0.0314960629 : f32>
// sub: (4/127) / (5/127) = 0.8 and 0.2 at 2^14; min: 1 and 0.4 at 2^13.
// CHECK: "tpu.sub"({{.*}}) <{do_relu = false, multipliers = array<i64: 13107, 3277>, rshift = 14 : i64}>
// CHECK: "tpu.min"({{.*}}) <{do_relu = false, multipliers = array<i64: 8192, 3277>, rshift = 13 : i64}>
// INT8 max by a per-channel constant: an fp32 island.
// CHECK: "tpu.max"({{.*}} : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NOT: tpu.add
// F32: "tpu.sub"({{.*}} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// F32: "tpu.min"
// F32: %[[C:.*]] = top.weight "top_rhs" : tensor<1x2x1x1xf32>
// F32: "tpu.max"({{.*}}, %[[C]]) {{.*}} : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
// SCALAR: "tpu.add"({{.*}} : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>

//--- ok.mlir
module attributes {top.weight_file = "ok_weights.npz"} {
func.func @main(%arg0: tensor<1x2x4x4xf32>, %arg1: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> attributes {top.input_names = ["input", "other"], top.output_names = ["top"]} {
  %0 = top.input %arg0 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("input")
  %1 = top.input %arg1 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("other")
  %2 = "top.add"(%0, %1) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("add")
  %3 = "top.relu"(%2) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("sum")
  %4 = "top.mul"(%3, %1) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("prod")
  %5 = "top.max"(%4, %0) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("big")
  %k = top.weight "k" : tensor<1x2x1x1xf32>
  %6 = "top.mul"(%5, %k) : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32> loc("scaled")
  %s = top.weight "s" : tensor<f32>
  %7 = "top.add"(%6, %s) : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32> loc("shifted")
  %8 = "top.sub"(%7, %1) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("diff")
  %9 = "top.min"(%8, %0) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("low")
  %c = top.weight "c" : tensor<1x2x1x1xf32>
  %10 = "top.max"(%9, %c) : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32> loc("top")
  return %10 : tensor<1x2x4x4xf32>
}
}

//--- scalar.mlir
module attributes {top.weight_file = "scalar_weights.npz"} {
func.func @main(%arg0: tensor<1x2x4x4xf32>, %arg1: tensor<f32>) -> tensor<1x2x4x4xf32> attributes {top.input_names = ["input", "s"], top.output_names = ["sum"]} {
  %0 = top.input %arg0 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("input")
  %s = top.input %arg1 : (tensor<f32>) -> tensor<f32> loc("s")
  %1 = "top.add"(%0, %s) : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32> loc("sum")
  return %1 : tensor<1x2x4x4xf32>
}
}

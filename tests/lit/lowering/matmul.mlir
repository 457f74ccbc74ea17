// --convert-top-to-tpu, top.matmul of two activations (compiler/Lowering/Ops/Gemm.cpp):
// one tpu.matmul over the leading (batch) dims, fp32; INT8 keeps it fp32
// between casts, with a warning (BM1684 has no int8 form, TPU-MLIR's choice
// too). Leading dims that differ (broadcasting), a 1-D operand and a constant
// left operand have no lowering.
// RUN: rm -rf %t && split-file %s %t
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/ok.mlir
// RUN: grep '^// CALI ' %s | cut -c9- > %t/t.cali
// RUN: tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=F32" | FileCheck %s
// RUN: tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali" 2>%t/warn.txt | FileCheck %s --check-prefix=INT8
// RUN: FileCheck %s --check-prefix=WARN < %t/warn.txt
// RUN: not tpuc-opt %t/bcast.mlir --convert-top-to-tpu="mode=F32" 2>&1 | FileCheck %s --check-prefix=BCAST
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/lconst.mlir
// RUN: not tpuc-opt %t/lconst.mlir --convert-top-to-tpu="mode=F32" 2>&1 | FileCheck %s --check-prefix=LCONST

// CALI q 4 -4 4
// CALI k 4 -4 4
// CALI kt 4 -4 4
// CALI scores 9 -9 9
// CALI relu 9 0 9

// CHECK: "tpu.matmul"(%{{.*}}, %{{.*}}) {{.*}}: (tensor<1x3x5x4xf32>, tensor<1x3x4x5xf32>) -> tensor<1x3x5x5xf32>
// CHECK-NEXT: "tpu.relu"
// INT8: "tpu.move"({{.*}}) {{.*}}: (tensor<1x3x5x4xi8, 0.0314960629 : f32>) -> tensor<1x3x4x5xi8, 0.0314960629 : f32>
// INT8-NEXT: "tpu.cast"({{.*}}) {{.*}}: (tensor<1x3x4x5xi8, 0.0314960629 : f32>) -> tensor<1x3x4x5xf32>
// INT8-NEXT: "tpu.matmul"({{.*}}) {{.*}}: (tensor<1x3x5x4xf32>, tensor<1x3x4x5xf32>) -> tensor<1x3x5x5xf32>
// INT8-NEXT: "tpu.cast"({{.*}}) {{.*}}: (tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xi8, 0.0708661452 : f32>
// INT8-NEXT: "tpu.relu"({{.*}}) {{.*}}-> tensor<1x3x5x5xi8, 0.0708661452 : f32>
// WARN: warning: kept in F32: scores: a matmul of two activations runs in fp32 on the BM1684
// BCAST: error: no lowering for top.matmul 'b' at loc("b"): operands whose leading (batch) dims differ (no broadcasting of two activations)
// LCONST: error: no lowering for top.matmul 'c' at loc("c"): a constant left operand times an activation

//--- ok.mlir
module attributes {top.weight_file = "ok_weights.npz"} {
func.func @main(%arg0: tensor<1x3x5x4xf32>, %arg1: tensor<1x3x5x4xf32>) -> tensor<1x3x5x5xf32> attributes {top.input_names = ["q", "k"], top.output_names = ["relu"]} {
  %0 = top.input %arg0 : (tensor<1x3x5x4xf32>) -> tensor<1x3x5x4xf32> loc("q")
  %1 = top.input %arg1 : (tensor<1x3x5x4xf32>) -> tensor<1x3x5x4xf32> loc("k")
  %2 = "top.permute"(%1) <{order = array<i64: 0, 1, 3, 2>}> : (tensor<1x3x5x4xf32>) -> tensor<1x3x4x5xf32> loc("kt")
  %3 = "top.matmul"(%0, %2) : (tensor<1x3x5x4xf32>, tensor<1x3x4x5xf32>) -> tensor<1x3x5x5xf32> loc("scores")
  %4 = "top.relu"(%3) : (tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32> loc("relu")
  return %4 : tensor<1x3x5x5xf32>
}
}

//--- bcast.mlir
module attributes {top.weight_file = "ok_weights.npz"} {
func.func @main(%arg0: tensor<2x5x4xf32>, %arg1: tensor<1x4x3xf32>) -> tensor<2x5x3xf32> attributes {top.input_names = ["a", "x"], top.output_names = ["b"]} {
  %0 = top.input %arg0 : (tensor<2x5x4xf32>) -> tensor<2x5x4xf32> loc("a")
  %1 = top.input %arg1 : (tensor<1x4x3xf32>) -> tensor<1x4x3xf32> loc("x")
  %2 = "top.matmul"(%0, %1) : (tensor<2x5x4xf32>, tensor<1x4x3xf32>) -> tensor<2x5x3xf32> loc("b")
  return %2 : tensor<2x5x3xf32>
}
}

//--- lconst.mlir
module attributes {top.weight_file = "lconst_weights.npz"} {
func.func @main(%arg0: tensor<4x3xf32>) -> tensor<5x3xf32> attributes {top.input_names = ["x"], top.output_names = ["c"]} {
  %0 = top.input %arg0 : (tensor<4x3xf32>) -> tensor<4x3xf32> loc("x")
  %w = top.weight "w" : tensor<5x4xf32>
  %1 = "top.matmul"(%w, %0) : (tensor<5x4xf32>, tensor<4x3xf32>) -> tensor<5x3xf32> loc("c")
  return %1 : tensor<5x3xf32>
}
}

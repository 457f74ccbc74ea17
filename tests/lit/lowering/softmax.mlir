// --convert-top-to-tpu, top.softmax and top.log_softmax
// (compiler/Lowering/Ops/Reduce.cpp): one tpu.softmax / tpu.log_softmax over
// the op's axis, any axis; INT8 keeps them fp32 between casts, with a
// warning.
// RUN: rm -rf %t && split-file %s %t
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/ok.mlir
// RUN: grep '^// CALI ' %s | cut -c9- > %t/t.cali
// RUN: tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=F32" | FileCheck %s
// RUN: tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali" 2>%t/warn.txt | FileCheck %s --check-prefix=INT8
// RUN: FileCheck %s --check-prefix=WARN < %t/warn.txt

// CALI input 4 -4 4
// CALI relu 4 0 4
// CALI probs 1 0 1
// CALI logp 9 -9 0

// CHECK: "tpu.softmax"(%{{.*}}) <{axes = array<i64: 1>, {{.*}}}> : (tensor<2x5x3x4xf32>) -> tensor<2x5x3x4xf32>
// CHECK: "tpu.log_softmax"(%{{.*}}) <{axes = array<i64: 3>, {{.*}}}> : (tensor<2x5x3x4xf32>) -> tensor<2x5x3x4xf32>
// INT8: "tpu.relu"({{.*}} -> tensor<2x5x3x4xi8, 0.0314960629 : f32>
// INT8-NEXT: "tpu.cast"({{.*}} -> tensor<2x5x3x4xf32>
// INT8-NEXT: "tpu.softmax"({{.*}} : (tensor<2x5x3x4xf32>) -> tensor<2x5x3x4xf32>
// WARN: warning: kept in F32: probs: softmax runs in fp32 on the BM1684
// WARN: warning: kept in F32: logp: log_softmax runs in fp32 on the BM1684

//--- ok.mlir
module attributes {top.weight_file = "ok_weights.npz"} {
func.func @main(%arg0: tensor<2x5x3x4xf32>) -> (tensor<2x5x3x4xf32>, tensor<2x5x3x4xf32>) attributes {top.input_names = ["input"], top.output_names = ["probs", "logp"]} {
  %0 = top.input %arg0 : (tensor<2x5x3x4xf32>) -> tensor<2x5x3x4xf32> loc("input")
  %1 = "top.relu"(%0) : (tensor<2x5x3x4xf32>) -> tensor<2x5x3x4xf32> loc("relu")
  %2 = "top.softmax"(%1) <{axis = 1 : i64}> : (tensor<2x5x3x4xf32>) -> tensor<2x5x3x4xf32> loc("probs")
  %3 = "top.log_softmax"(%0) <{axis = 3 : i64}> : (tensor<2x5x3x4xf32>) -> tensor<2x5x3x4xf32> loc("logp")
  return %2, %3 : tensor<2x5x3x4xf32>, tensor<2x5x3x4xf32>
}
}

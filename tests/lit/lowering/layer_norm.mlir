// --convert-top-to-tpu, top.layer_norm (compiler/Lowering/Ops/Normalize.cpp):
// tpu.layer_norm over the dims from `axis` on, its scale and bias broadcast
// to the normalized elements as fp32 weights (a bias alone gets a scale of
// ones, none gets neither); INT8 keeps it fp32 between casts, with a
// warning. An axis outside the input has no lowering.
// RUN: rm -rf %t && split-file %s %t
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/ok.mlir
// RUN: grep '^// CALI ' %s | cut -c9- > %t/t.cali
// RUN: tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=F32 weight-file=%t/f32.npz" | FileCheck %s
// RUN: /usr/bin/python3 -c "import numpy as np; w = np.load('%t/f32.npz'); print(sorted((k, w[k].shape) for k in w))" | FileCheck %s --check-prefix=WEIGHTS
// RUN: tpuc-opt %t/ok.mlir --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali" 2>%t/warn.txt | FileCheck %s --check-prefix=INT8
// RUN: FileCheck %s --check-prefix=WARN < %t/warn.txt

// CALI input 2 -2 2
// CALI image 2 -2 2
// CALI tokens 3 -3 3
// CALI inorm 3 -3 3

// CHECK: "tpu.layer_norm"(%{{.*}}, %{{.*}}, %{{.*}}) <{axes = array<i64: 2>, do_relu = false, epsilon = 9.9999999999999995E-7 : f64, multipliers = array<i64>, rshift = 0 : i64}> : (tensor<1x5x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x5x8xf32>
// CHECK: "tpu.layer_norm"(%{{.*}}, %{{.*}}, %{{.*}}) <{axes = array<i64: 2, 3>, {{.*}}epsilon = 1.000000e-05 : f64{{.*}} : (tensor<2x3x4x4xf32>, none, none) -> tensor<2x3x4x4xf32>
// WEIGHTS: [('tokens_bias', (8,)), ('tokens_scale', (8,))]
// INT8: "tpu.layer_norm"({{.*}} : (tensor<1x5x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x5x8xf32>
// WARN: warning: kept in F32: tokens: layer_norm runs in fp32 on the BM1684

//--- ok.mlir
module attributes {top.weight_file = "ok_weights.npz"} {
func.func @main(%arg0: tensor<1x5x8xf32>, %arg1: tensor<2x3x4x4xf32>) -> (tensor<1x5x8xf32>, tensor<2x3x4x4xf32>) attributes {top.input_names = ["input", "image"], top.output_names = ["tokens", "inorm"]} {
  %0 = top.input %arg0 : (tensor<1x5x8xf32>) -> tensor<1x5x8xf32> loc("input")
  %g = top.weight "gamma" : tensor<8xf32> loc("gamma")
  %b = top.weight "beta" : tensor<1xf32> loc("beta")
  %1 = "top.layer_norm"(%0, %g, %b) <{axis = 2 : i64, epsilon = 1.0e-6 : f64}> : (tensor<1x5x8xf32>, tensor<8xf32>, tensor<1xf32>) -> tensor<1x5x8xf32> loc("tokens")
  %2 = top.input %arg1 : (tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32> loc("image")
  %n = top.none loc("none")
  %3 = "top.layer_norm"(%2, %n, %n) <{axis = 2 : i64}> : (tensor<2x3x4x4xf32>, none, none) -> tensor<2x3x4x4xf32> loc("inorm")
  return %1, %3 : tensor<1x5x8xf32>, tensor<2x3x4x4xf32>
}
}

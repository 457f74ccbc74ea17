// --convert-top-to-tpu, the element-wise functions (compiler/Lowering/Ops/Activation.cpp):
// in F32 each becomes tpu.unary, the program of TIU commands of
// compiler/Backend/FloatKernels.h named by `function` (parameters alpha,
// beta); in INT8 a tpu.lut with its 256-entry table. tpuc-opt --verify-each
// runs the back end's checks on every op.
// RUN: rm -rf %t && split-file %s %t
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/ok.mlir
// RUN: grep '^// CALI ' %s | cut -c9- > %t/t.cali
// RUN: tpuc-opt %t/ok.mlir --verify-each --convert-top-to-tpu="mode=F32" | FileCheck %s --check-prefix=F32
// RUN: tpuc-opt %t/ok.mlir --verify-each --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali" | FileCheck %s --check-prefix=INT8

// CALI input 4 -4 4
// CALI e 50 0 50
// CALI l 4 -4 4
// CALI t 1 -1 1
// CALI er 1 -1 1
// CALI fl 4 -4 4
// CALI s 1 -1 1
// CALI el 4 -1 4
// CALI sp 4 0 4
// CALI mi 4 -0.4 4

// F32: "tpu.unary"(%{{.*}}) <{{.*}}function = "exp"{{.*}}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// F32: "tpu.unary"(%{{.*}}) <{{.*}}function = "log"{{.*}}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// F32: "tpu.unary"(%{{.*}}) <{{.*}}function = "tanh"{{.*}}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// F32: "tpu.unary"(%{{.*}}) <{{.*}}function = "erf"{{.*}}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// F32: "tpu.unary"(%{{.*}}) <{{.*}}function = "floor"{{.*}}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// F32: "tpu.unary"(%{{.*}}) <{{.*}}function = "sin"{{.*}}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// F32: "tpu.unary"(%{{.*}}) <{alpha = 5.000000e-01 : f64, beta = 0.000000e+00 : f64, do_relu = false, function = "elu", multipliers = array<i64>, rshift = 0 : i64}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// F32: "tpu.unary"(%{{.*}}) <{{.*}}function = "softplus"{{.*}}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// F32: "tpu.unary"(%{{.*}}) <{{.*}}function = "mish"{{.*}}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// INT8: top.weight "e_table" : tensor<256xui8>
// INT8: "tpu.lut"({{.*}}> : (tensor<1x2x4x4xi8, 0.0314960629 : f32>, tensor<256xui8>) -> tensor<1x2x4x4xui8, 0.196078435 : f32>
// INT8: top.weight "fl_table" : tensor<256xi8>
// INT8: "tpu.lut"({{.*}}> : (tensor<1x2x4x4xi8, 0.00787401571 : f32>, tensor<256xi8>) -> tensor<1x2x4x4xi8, 0.0314960629 : f32>
// INT8: top.weight "s_table" : tensor<256xi8>
// INT8: "tpu.lut"({{.*}}) -> tensor<1x2x4x4xi8, 0.00787401571 : f32>
// INT8: top.weight "sp_table" : tensor<256xui8>
// INT8: top.weight "mi_table" : tensor<256xi8>
// INT8-NOT: tpu.unary

//--- ok.mlir
module attributes {top.weight_file = "ok_weights.npz"} {
func.func @main(%arg0: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) attributes {top.input_names = ["input"], top.output_names = ["s", "el", "sp", "mi"]} {
  %0 = top.input %arg0 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("input")
  %1 = "top.exp"(%0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("e")
  %2 = "top.log"(%1) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("l")
  %3 = "top.tanh"(%2) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("t")
  %4 = "top.erf"(%3) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("er")
  %5 = "top.floor"(%4) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("fl")
  %6 = "top.sin"(%5) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("s")
  %7 = "top.elu"(%0) <{alpha = 0.5 : f64}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("el")
  %8 = "top.softplus"(%0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("sp")
  %9 = "top.mish"(%0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("mi")
  return %6, %7, %8, %9 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
}

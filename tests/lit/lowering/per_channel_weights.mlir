// --convert-top-to-tpu="per-channel-weights=true" (Int8Levers::perChannelWeights,
// compiler/Lowering/Ops/Conv.cpp): an int8 conv whose output channels' weights
// are 1, 1/8 and 1/64 of each other gets one int8 step per channel. The conv
// writes its int16 accumulator (no bias, no relu); a per-channel tpu.affine
// requantizes it to the relu's uint8 type, adds the bias and applies the relu.
// Without the lever the same conv has one step for all channels.
// RUN: rm -rf %t && split-file %s %t
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/pc.mlir
// RUN: /usr/bin/python3 -c "import numpy as np; d = dict(np.load('%t/pc_weights.npz')); d['w'] = (d['w'] * np.float32([1, 1 / 8, 1 / 64]).reshape(3, 1, 1, 1)).astype(np.float32); np.savez('%t/pc_weights.npz', **d)"
// RUN: grep '^// CALI ' %s | cut -c9- > %t/t.cali
// RUN: tpuc-opt %t/pc.mlir --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali per-channel-weights=true weight-file=pc.npz" | FileCheck %s
// RUN: /usr/bin/python3 -c "import numpy as np; d = np.load('%t/pc.npz'); w = d['conv_filter_i8'].reshape(3, -1); print('filter max', *abs(w.astype(int)).max(1)); print('scale', *d['relu_scale_i16']); print('bias', *d['relu_bias_i32'])" | FileCheck %s --check-prefix=INTS
// RUN: tpuc-opt %t/pc.mlir --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali weight-file=one.npz" | FileCheck %s --check-prefix=ONE
// RUN: /usr/bin/python3 -c "import numpy as np; w = np.load('%t/one.npz')['conv_filter_i8'].reshape(3, -1); print('filter max', *abs(w.astype(int)).max(1))" | FileCheck %s --check-prefix=ONEINTS
// An all-zero filter has no channel step: the conv is lowered with one step.
// RUN: /usr/bin/python3 -c "import numpy as np; d = dict(np.load('%t/pc_weights.npz')); d['w'] = d['w'] * 0; np.savez('%t/pc_weights.npz', **d)"
// RUN: tpuc-opt %t/pc.mlir --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali per-channel-weights=true weight-file=zero.npz" | FileCheck %s --check-prefix=ZERO
// int16-pointwise: the depthwise conv and the per-channel mul behind it, read
// only by a 1x1 conv, hand it their int16 accumulator (no affine, no int8
// tensor between); the 1x1 conv reads i16 and writes its own. A 1x1 conv
// that cannot take it (all-zero filter) gets the int8 tensor from a
// per-channel affine made on demand.
// RUN: /usr/bin/python3 %S/Inputs/make_weights.py %t/pw.mlir
// RUN: tpuc-opt %t/pw.mlir --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali int16-pointwise=true weight-file=pw.npz" | FileCheck %s --check-prefix=PW
// The hand-off deployed: the bmodel (func backend: deploy --test-input; sim
// backend: tpuc run) gives the Tpu interpreter's bytes.
// RUN: /usr/bin/python3 -c "import numpy as np; np.savez('%t/in.npz', input=np.random.default_rng(1).uniform(-2, 2, (1, 2, 6, 6)).astype(np.float32))"
// RUN: tpuc deploy %t/pw.mlir --quantize INT8 --calibration-table %t/t.cali --int16-pointwise -o %t/pw.bmodel --test-input %t/in.npz 2> %t/pw.log
// RUN: FileCheck %s --check-prefix=PWLOG < %t/pw.log
// RUN: tpuc run %t/pw.tpu.mlir --input %t/in.npz -o %t/pw_tpu.npz
// RUN: tpuc run %t/pw.bmodel --input %t/in.npz --backend sim -o %t/pw_sim.npz
// RUN: cmp %t/pw_tpu.npz %t/pw_sim.npz
// A chain factor of 1e6 leaves the hand-off's affine no integers that fit:
// the depthwise conv keeps its int8 lowering, its int16 filter dropped.
// RUN: cp %t/pw_weights.npz %t/pw_orig.npz
// RUN: /usr/bin/python3 -c "import numpy as np; d = dict(np.load('%t/pw_weights.npz')); d['k'] = np.float32([1, 1e6]).reshape(d['k'].shape); np.savez('%t/pw_weights.npz', **d)"
// RUN: tpuc-opt %t/pw.mlir --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali int16-pointwise=true weight-file=pwbig.npz" | FileCheck %s --check-prefix=PWBIG
// RUN: cp %t/pw_orig.npz %t/pw_weights.npz
// RUN: /usr/bin/python3 -c "import numpy as np; d = dict(np.load('%t/pw_weights.npz')); d['wp'] = d['wp'] * 0; np.savez('%t/pw_weights.npz', **d)"
// RUN: tpuc-opt %t/pw.mlir --convert-top-to-tpu="mode=INT8 calibration-table=%t/t.cali int16-pointwise=true weight-file=pwzero.npz" | FileCheck %s --check-prefix=PWZERO

// CALI input 2 -2 2
// CALI conv 8 -8 8
// CALI relu 8 0 8
// CALI dw 6 -6 6
// CALI scaled 3 -3 3
// CALI pw 8 -8 8
// CALI out 8 0 8

// scale_in 2/127, scale_out 8/255 (uint8: relu). The largest channel's
// (max |w| 9/8) int16 step (9/8)/127 * (2/127) * 2^r stays within an eighth
// of the output step (8/255)/8 up to r = 4 (2^r <= 28.1).
// CHECK: "tpu.conv"({{.*}}do_relu = false{{.*}}rshift = 4 : i64{{.*}} : (tensor<1x2x6x6xi8, 0.0157480314 : f32>, tensor<3x2x3x3xi8>, none) -> tensor<1x3x6x6xi16>
// CHECK: "tpu.affine"({{.*}}do_relu = true{{.*}}rshift = 18 : i64{{.*}} : (tensor<1x3x6x6xi16>, tensor<3xi16>, tensor<3xi32>) -> tensor<1x3x6x6xui8, 0.0313725509 : f32>
// Every channel spans the int8 range; the multipliers are the channels'
// steps (1, 1/8, 1/64 of channel 0's) / the output scale * 2^18, channel 0:
// (9/8)/127 * (2/127) * 2^4 / (8/255) * 2^18 = 18650 (2 x 18650 would not
// fit int16 at 2^19); the offsets the biases (-1, -9/8, 9/8) / (8/255) * 2^18.
// INTS: filter max 127 127 127
// INTS: scale 18650 2331 291
// INTS: bias -8355840 -9400319 9400319
// ONE: "tpu.conv"({{.*}}do_relu = true{{.*}}rshift = 7 : i64{{.*}} -> tensor<1x3x6x6xui8, 0.0313725509 : f32>
// ONE-NOT: tpu.affine
// ONEINTS: filter max 72 9 1
// ZERO: "tpu.conv"({{.*}} -> tensor<1x3x6x6xui8, 0.0313725509 : f32>
// ZERO-NOT: xi16
// PW: "tpu.conv"({{.*}}group = 2 : i64{{.*}} : (tensor<1x2x6x6xi8, 0.0157480314 : f32>, tensor<2x1x3x3xi8>, none) -> tensor<1x2x6x6xi16>
// PW-NOT: tpu.affine
// PW: "tpu.conv"({{.*}} : (tensor<1x2x6x6xi16>, tensor<3x2x1x1xi8>, none) -> tensor<1x3x6x6xi16>
// PW: "tpu.affine"({{.*}}do_relu = true{{.*}} : (tensor<1x3x6x6xi16>, tensor<3xi16>, tensor<3xi32>) -> tensor<1x3x6x6xui8, 0.0313725509 : f32>
// PWLOG: deploy: bmodel outputs equal the Tpu interpreter's bit for bit
// PWBIG-NOT: 6x6xi16
// PWBIG: top.weight "dw_filter_i8" :
// PWBIG-NOT: 6x6xi16
// PWBIG: "tpu.conv"({{.*}} -> tensor<1x2x6x6xi8
// PWBIG-NOT: 6x6xi16
// PWZERO: "tpu.conv"({{.*}} -> tensor<1x2x6x6xi16>
// PWZERO: "tpu.affine"({{.*}} : (tensor<1x2x6x6xi16>, tensor<2xi16>, tensor<2xi32>) -> tensor<1x2x6x6xi8, 0.0236220472 : f32>
// PWZERO: "tpu.conv"({{.*}} : (tensor<1x2x6x6xi8, 0.0236220472 : f32>, tensor<3x2x1x1xi8>, tensor<3xi16>) -> tensor<1x3x6x6xui8

//--- pc.mlir
module attributes {top.weight_file = "pc_weights.npz"} {
func.func @main(%arg0: tensor<1x2x6x6xf32>) -> tensor<1x3x6x6xf32> attributes {top.input_names = ["input"], top.output_names = ["relu"]} {
  %0 = top.input %arg0 : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32> loc("input")
  %w = top.weight "w" : tensor<3x2x3x3xf32>
  %b = top.weight "b" : tensor<3xf32>
  %1 = "top.conv"(%0, %w, %b) <{dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}> : (tensor<1x2x6x6xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x6x6xf32> loc("conv")
  %2 = "top.relu"(%1) : (tensor<1x3x6x6xf32>) -> tensor<1x3x6x6xf32>
  return %2 : tensor<1x3x6x6xf32>
}
}

//--- pw.mlir
module attributes {top.weight_file = "pw_weights.npz"} {
func.func @main(%arg0: tensor<1x2x6x6xf32>) -> tensor<1x3x6x6xf32> attributes {top.input_names = ["input"], top.output_names = ["out"]} {
  %0 = top.input %arg0 : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32> loc("input")
  %wd = top.weight "wd" : tensor<2x1x3x3xf32>
  %bd = top.weight "bd" : tensor<2xf32>
  %1 = "top.conv"(%0, %wd, %bd) <{dilations = array<i64: 1, 1>, group = 2 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}> : (tensor<1x2x6x6xf32>, tensor<2x1x3x3xf32>, tensor<2xf32>) -> tensor<1x2x6x6xf32> loc("dw")
  %k = top.weight "k" : tensor<1x2x1x1xf32>
  %2 = "top.mul"(%1, %k) : (tensor<1x2x6x6xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x6x6xf32> loc("scaled")
  %wp = top.weight "wp" : tensor<3x2x1x1xf32>
  %bp = top.weight "bp" : tensor<3xf32>
  %3 = "top.conv"(%2, %wp, %bp) <{dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}> : (tensor<1x2x6x6xf32>, tensor<3x2x1x1xf32>, tensor<3xf32>) -> tensor<1x3x6x6xf32> loc("pw")
  %4 = "top.relu"(%3) : (tensor<1x3x6x6xf32>) -> tensor<1x3x6x6xf32> loc("out")
  return %4 : tensor<1x3x6x6xf32>
}
}

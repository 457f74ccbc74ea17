// The Tpu ops' verifiers (TpuOps.td): a malformed module is rejected with the
// op, its location and what is wrong; a well-formed one passes (the modules
// tpuc deploy writes are verified in deploy_f32.test and deploy_int8.test).
// RUN: tpuc-opt %s --split-input-file --verify-each --verify-diagnostics

// A well-formed int8 conv + add + cast chain.
func.func @ok(%arg0: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %0 = top.input %arg0 : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  %1 = "tpu.cast"(%0) : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xi8, 0.25 : f32>
  %w = top.weight "w" : tensor<4x3x3x3xi8>
  %b = top.weight "b" : tensor<4xi16>
  %2 = "tpu.conv"(%1, %w, %b) <{dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, rshift = 7 : i64, strides = array<i64: 1, 1>}> : (tensor<1x3x8x8xi8, 0.25 : f32>, tensor<4x3x3x3xi8>, tensor<4xi16>) -> tensor<1x4x8x8xi8, 0.5 : f32>
  %3 = "tpu.add"(%2, %2) <{do_relu = true, multipliers = array<i64: 3, 5>, rshift = 2 : i64}> : (tensor<1x4x8x8xi8, 0.5 : f32>, tensor<1x4x8x8xi8, 0.5 : f32>) -> tensor<1x4x8x8xui8, 0.5 : f32>
  %4 = "tpu.cast"(%3) : (tensor<1x4x8x8xui8, 0.5 : f32>) -> tensor<1x4x8x8xf32>
  return %4 : tensor<1x4x8x8xf32>
}

// -----

func.func @rshift_too_large(%x: tensor<1x3x8x8xi8, 0.25 : f32>) -> tensor<1x4x8x8xi8, 0.5 : f32> {
  %w = top.weight "w" : tensor<4x3x3x3xi8>
  %b = top.weight "b" : tensor<4xi16>
  // expected-error @+1 {{'tpu.conv' op rshift 40 is outside [0, 31]}}
  %0 = "tpu.conv"(%x, %w, %b) <{dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, rshift = 40 : i64, strides = array<i64: 1, 1>}> : (tensor<1x3x8x8xi8, 0.25 : f32>, tensor<4x3x3x3xi8>, tensor<4xi16>) -> tensor<1x4x8x8xi8, 0.5 : f32>
  return %0 : tensor<1x4x8x8xi8, 0.5 : f32>
}

// -----

func.func @rshift_negative(%x: tensor<1x4x8x8xi8, 0.5 : f32>) -> tensor<1x4x8x8xi8, 0.25 : f32> {
  // expected-error @+1 {{'tpu.requant' op rshift -1 is outside [0, 31]}}
  %0 = "tpu.requant"(%x) <{multipliers = array<i64: 1>, rshift = -1 : i64}> : (tensor<1x4x8x8xi8, 0.5 : f32>) -> tensor<1x4x8x8xi8, 0.25 : f32>
  return %0 : tensor<1x4x8x8xi8, 0.25 : f32>
}

// -----

// An operand dtype the op does not take: the type constraint of TpuOps.td.
func.func @filter_f64(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = top.weight "w" : tensor<4x3x3x3xf64>
  %b = top.none
  // expected-error @+1 {{'tpu.conv' op operand #1 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 8-bit signless integer values, but got 'tensor<4x3x3x3xf64>'}}
  %0 = "tpu.conv"(%x, %w, %b) <{dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}> : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf64>, none) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

// A 16-bit float operand of an fp32 op: only tpu.cast changes a tensor's float type (Graph.h).
func.func @filter_f16(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = top.weight "w" : tensor<4x3x3x3xf16>
  %b = top.none
  // expected-error @+1 {{'tpu.conv' op Conv 'result': output 'result' is float32 but inputs are 16-bit floats: only a Cast changes a tensor's float type}}
  %0 = "tpu.conv"(%x, %w, %b) <{dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}> : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf16>, none) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

// An fp32 filter on an int8 conv: the back end's dtype rule.
func.func @filter_f32_in_int8_conv(%x: tensor<1x3x8x8xi8, 0.25 : f32>) -> tensor<1x4x8x8xi8, 0.5 : f32> {
  %w = top.weight "w" : tensor<4x3x3x3xf32>
  %b = top.none
  // expected-error @+1 {{'tpu.conv' op Conv 'result': weight 'w' dtype float32 does not fit a int8 conv}}
  %0 = "tpu.conv"(%x, %w, %b) <{dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}> : (tensor<1x3x8x8xi8, 0.25 : f32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x8x8xi8, 0.5 : f32>
  return %0 : tensor<1x4x8x8xi8, 0.5 : f32>
}

// -----

// An int8 activation without its scale (the type's encoding).
func.func @missing_scale(%x: tensor<1x4x8x8xi8>) -> tensor<1x4x8x8xi8, 0.5 : f32> {
  // expected-error @+1 {{'tpu.relu' op operand 0: int8 activation without a scale (tensor<...xi8, SCALE : f32>)}}
  %0 = "tpu.relu"(%x) : (tensor<1x4x8x8xi8>) -> tensor<1x4x8x8xi8, 0.5 : f32>
  return %0 : tensor<1x4x8x8xi8, 0.5 : f32>
}

// -----

func.func @add_one_multiplier(%a: tensor<1x4x8x8xi8, 0.5 : f32>) -> tensor<1x4x8x8xi8, 0.5 : f32> {
  // expected-error @+1 {{'tpu.add' op Add 'result': int8 needs 2 multiplier(s), has 1}}
  %0 = "tpu.add"(%a, %a) <{multipliers = array<i64: 3>, rshift = 2 : i64}> : (tensor<1x4x8x8xi8, 0.5 : f32>, tensor<1x4x8x8xi8, 0.5 : f32>) -> tensor<1x4x8x8xi8, 0.5 : f32>
  return %0 : tensor<1x4x8x8xi8, 0.5 : f32>
}

// -----

func.func @multiplier_not_int32(%a: tensor<1x4x8x8xi8, 0.5 : f32>) -> tensor<1x4x8x8xi8, 0.5 : f32> {
  // expected-error @+1 {{'tpu.add' op multiplier 4294967296 does not fit int32}}
  %0 = "tpu.add"(%a, %a) <{multipliers = array<i64: 4294967296, 1>, rshift = 2 : i64}> : (tensor<1x4x8x8xi8, 0.5 : f32>, tensor<1x4x8x8xi8, 0.5 : f32>) -> tensor<1x4x8x8xi8, 0.5 : f32>
  return %0 : tensor<1x4x8x8xi8, 0.5 : f32>
}

// -----

func.func @avg_multiplier_range(%x: tensor<1x4x8x8xi8, 0.5 : f32>) -> tensor<1x4x4x4xi8, 0.5 : f32> {
  // expected-error @+1 {{'tpu.avg_pool' op Pool 'result': average multiplier 300 is outside [0, 255]}}
  %0 = "tpu.avg_pool"(%x) <{dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, multipliers = array<i64: 300>, pads = array<i64: 0, 0, 0, 0>, rshift = 2 : i64, strides = array<i64: 2, 2>}> : (tensor<1x4x8x8xi8, 0.5 : f32>) -> tensor<1x4x4x4xi8, 0.5 : f32>
  return %0 : tensor<1x4x4x4xi8, 0.5 : f32>
}

// -----

func.func @avg_without_multiplier(%x: tensor<1x4x8x8xi8, 0.5 : f32>) -> tensor<1x4x1x1xi8, 0.5 : f32> {
  // expected-error @+1 {{'tpu.global_avg_pool' op GlobalAvgPool 'result': int8 needs 1 multiplier(s), has 0}}
  %0 = "tpu.global_avg_pool"(%x) <{rshift = 2 : i64}> : (tensor<1x4x8x8xi8, 0.5 : f32>) -> tensor<1x4x1x1xi8, 0.5 : f32>
  return %0 : tensor<1x4x1x1xi8, 0.5 : f32>
}

// -----

// The chip's stride field holds at most 15.
func.func @stride_limit(%x: tensor<1x4x64x64xf32>) -> tensor<1x4x4x4xf32> {
  // expected-error @+1 {{'tpu.max_pool' op Pool 'result': stride 16x16 exceeds the hardware's 15}}
  %0 = "tpu.max_pool"(%x) <{dilations = array<i64: 1, 1>, kernel_shape = array<i64: 16, 16>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 16, 16>}> : (tensor<1x4x64x64xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

func.func @window_output_shape(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{'tpu.max_pool' op Pool 'result': output height 8 does not match the window (4)}}
  %0 = "tpu.max_pool"(%x) <{dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}> : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

func.func @kernel_rank(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> {
  // expected-error @+1 {{'tpu.max_pool' op kernel_shape needs 2 values}}
  %0 = "tpu.max_pool"(%x) <{dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}> : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

func.func @missing_kernel(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> {
  // expected-error @+1 {{'tpu.max_pool' op requires attribute 'kernel_shape'}}
  %0 = "tpu.max_pool"(%x) <{dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}> : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

func.func @lut_table_size(%x: tensor<1x4x8x8xi8, 0.5 : f32>) -> tensor<1x4x8x8xi8, 0.25 : f32> {
  %t = top.weight "table" : tensor<100xi8>
  // expected-error @+1 {{'tpu.lut' op Lut 'result': table 'table' must be a weight of 256 int8}}
  %0 = "tpu.lut"(%x, %t) : (tensor<1x4x8x8xi8, 0.5 : f32>, tensor<100xi8>) -> tensor<1x4x8x8xi8, 0.25 : f32>
  return %0 : tensor<1x4x8x8xi8, 0.25 : f32>
}

// -----

func.func @int8_sigmoid(%x: tensor<1x4x8x8xi8, 0.5 : f32>) -> tensor<1x4x8x8xi8, 0.25 : f32> {
  // expected-error @+1 {{'tpu.sigmoid' op Sigmoid 'result': int8 sigmoid is a Lut op}}
  %0 = "tpu.sigmoid"(%x) : (tensor<1x4x8x8xi8, 0.5 : f32>) -> tensor<1x4x8x8xi8, 0.25 : f32>
  return %0 : tensor<1x4x8x8xi8, 0.25 : f32>
}

// -----

func.func @cast_f32_to_f32(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  // expected-error @+1 {{'tpu.cast' op Cast 'result': casts fp32 <-> int8 only}}
  %0 = "tpu.cast"(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

func.func @concat_channels(%a: tensor<1x4x8x8xf32>, %b: tensor<1x2x8x8xf32>) -> tensor<1x7x8x8xf32> {
  // expected-error @+1 {{'tpu.concat' op Concat 'result': input channels sum to 6, output has 7}}
  %0 = "tpu.concat"(%a, %b) : (tensor<1x4x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x7x8x8xf32>
  return %0 : tensor<1x7x8x8xf32>
}

// -----

func.func @slice_past_the_end(%x: tensor<1x4x8x8xi8, 0.5 : f32>) -> tensor<1x4x4x8xi8, 0.5 : f32> {
  // expected-error @+1 {{'tpu.slice' op Slice 'result': output h = 4 from start 2 step 2 reads past the input's 8}}
  %0 = "tpu.slice"(%x) <{starts = array<i64: 0, 0, 2, 0>, steps = array<i64: 1, 1, 2, 1>}> : (tensor<1x4x8x8xi8, 0.5 : f32>) -> tensor<1x4x4x8xi8, 0.5 : f32>
  return %0 : tensor<1x4x4x8xi8, 0.5 : f32>
}

// -----

func.func @slice_keeps_the_scale(%x: tensor<1x4x8x8xi8, 0.5 : f32>) -> tensor<1x2x8x8xi8, 0.25 : f32> {
  // expected-error @+1 {{'tpu.slice' op Slice 'result': a slice keeps the input's dtype and scale}}
  %0 = "tpu.slice"(%x) <{starts = array<i64: 0, 1, 0, 0>, steps = array<i64: 1, 2, 1, 1>}> : (tensor<1x4x8x8xi8, 0.5 : f32>) -> tensor<1x2x8x8xi8, 0.25 : f32>
  return %0 : tensor<1x2x8x8xi8, 0.25 : f32>
}

// -----

func.func @slice_starts_per_dim(%x: tensor<1x4x8x8xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{'tpu.slice' op starts and steps need one value per input dim (rank <= 4)}}
  %0 = "tpu.slice"(%x) <{starts = array<i64: 0, 1>, steps = array<i64: 1, 2>}> : (tensor<1x4x8x8xf32>) -> tensor<1x2x8x8xf32>
  return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @move_pieces_of_15(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  // expected-error @+1 {{'tpu.move' op pieces needs 15 values per box}}
  %0 = "tpu.move"(%x) <{pieces = array<i64: 0, 1, 1, 1, 4>}> : (tensor<1x4xf32>) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

func.func @move_past_the_input(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  // expected-error @+1 {{'tpu.move' op Move 'result': piece 0 reads elements [1, 4] of 4}}
  %0 = "tpu.move"(%x) <{pieces = array<i64: 0, 1, 1, 1, 4, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1>}> : (tensor<1x4xf32>) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

func.func @move_int8_fill_is_an_integer(%x: tensor<1x2xi8, 0.5 : f32>) -> tensor<1x4xi8, 0.5 : f32> {
  // expected-error @+1 {{'tpu.move' op Move 'result': int8 fill value 0.5 is not an integer of the output type}}
  %0 = "tpu.move"(%x) <{fill = 0.5 : f64, pieces = array<i64: 0, 1, 1, 1, 2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1>}> : (tensor<1x2xi8, 0.5 : f32>) -> tensor<1x4xi8, 0.5 : f32>
  return %0 : tensor<1x4xi8, 0.5 : f32>
}

// -----

func.func @unary_unknown_function(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{'tpu.unary' op unknown function 'expp'}}
  %0 = "tpu.unary"(%x) <{function = "expp"}> : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

func.func @unary_int8(%x: tensor<1x4x8x8xi8, 0.5 : f32>) -> tensor<1x4x8x8xi8, 0.25 : f32> {
  // expected-error @+1 {{'tpu.unary' op Unary 'result': int8 exp is a Lut op}}
  %0 = "tpu.unary"(%x) <{function = "exp"}> : (tensor<1x4x8x8xi8, 0.5 : f32>) -> tensor<1x4x8x8xi8, 0.25 : f32>
  return %0 : tensor<1x4x8x8xi8, 0.25 : f32>
}

// -----

func.func @reduce_unknown_mode(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x1x1xf32> {
  // expected-error @+1 {{'tpu.reduce' op mode 'median' is not sum, mean, max, min, prod or l2}}
  %0 = "tpu.reduce"(%x) <{mode = "median", axes = array<i64: 2, 3>}> : (tensor<1x4x8x8xf32>) -> tensor<1x4x1x1xf32>
  return %0 : tensor<1x4x1x1xf32>
}

// -----

func.func @reduce_result_count(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x1xf32> {
  // expected-error @+1 {{'tpu.reduce' op Reduce 'result': output has 32 elements, the kept dims 4}}
  %0 = "tpu.reduce"(%x) <{mode = "sum", axes = array<i64: 2, 3>}> : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x1xf32>
  return %0 : tensor<1x4x8x1xf32>
}

// -----

func.func @reduce_int8_max_keeps_the_scale(%x: tensor<1x4x8x8xi8, 0.5 : f32>) -> tensor<1x4x1x1xi8, 0.25 : f32> {
  // expected-error @+1 {{'tpu.reduce' op Reduce 'result': an int8 max or min keeps the input's dtype and scale}}
  %0 = "tpu.reduce"(%x) <{mode = "max", axes = array<i64: 2, 3>}> : (tensor<1x4x8x8xi8, 0.5 : f32>) -> tensor<1x4x1x1xi8, 0.25 : f32>
  return %0 : tensor<1x4x1x1xi8, 0.25 : f32>
}

// -----

func.func @layer_norm_bias_without_scale(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %n = top.none
  %b = top.weight "b" : tensor<8xf32>
  // expected-error @+1 {{'tpu.layer_norm' op a bias without a scale (give a scale of ones)}}
  %0 = "tpu.layer_norm"(%x, %n, %b) <{axes = array<i64: 2>, epsilon = 1.0e-5 : f64}> : (tensor<1x4x8xf32>, none, tensor<8xf32>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}

// -----

func.func @layer_norm_int8(%x: tensor<1x4x8xi8, 0.5 : f32>) -> tensor<1x4x8xi8, 0.5 : f32> {
  %n = top.none
  // expected-error @+1 {{'tpu.layer_norm' op LayerNorm 'result': fp32 only (int8 models run it as an fp32 island)}}
  %0 = "tpu.layer_norm"(%x, %n, %n) <{axes = array<i64: 2>, epsilon = 1.0e-5 : f64}> : (tensor<1x4x8xi8, 0.5 : f32>, none, none) -> tensor<1x4x8xi8, 0.5 : f32>
  return %0 : tensor<1x4x8xi8, 0.5 : f32>
}

// -----

// Well-formed: a conv whose dilation and pads exceed the command fields (it
// runs as groups of kernel taps), a depthwise transposed conv, an fc over
// the leading dims of an N-D input, a 0-d operand.
func.func @ok_windows(%x: tensor<1x4x9x9xf32>, %s: tensor<f32>) -> (tensor<1x4x9x9xf32>, tensor<1x4x18x18xf32>, tensor<1x4x9x6xf32>, tensor<1x4x9x9xf32>) {
  %w = top.weight "w" : tensor<4x4x3x3xf32>
  %n = top.none
  %0 = "tpu.conv"(%x, %w, %n) <{dilations = array<i64: 24, 24>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 24, 24, 24, 24>, strides = array<i64: 1, 1>}> : (tensor<1x4x9x9xf32>, tensor<4x4x3x3xf32>, none) -> tensor<1x4x9x9xf32>
  %dw = top.weight "dw" : tensor<4x1x2x2xf32>
  %1 = "tpu.conv_transpose"(%x, %dw, %n) <{dilations = array<i64: 1, 1>, group = 4 : i64, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}> : (tensor<1x4x9x9xf32>, tensor<4x1x2x2xf32>, none) -> tensor<1x4x18x18xf32>
  %fw = top.weight "fw" : tensor<6x9xf32>
  %2 = "tpu.fc"(%x, %fw, %n) : (tensor<1x4x9x9xf32>, tensor<6x9xf32>, none) -> tensor<1x4x9x6xf32>
  %3 = "tpu.add"(%x, %s) : (tensor<1x4x9x9xf32>, tensor<f32>) -> tensor<1x4x9x9xf32>
  return %0, %1, %2, %3 : tensor<1x4x9x9xf32>, tensor<1x4x18x18xf32>, tensor<1x4x9x6xf32>, tensor<1x4x9x9xf32>
}

// -----

func.func @conv_transpose_groups(%x: tensor<1x4x9x9xf32>) -> tensor<1x4x18x18xf32> {
  %w = top.weight "w" : tensor<4x4x2x2xf32>
  %n = top.none
  // expected-error @+1 {{'tpu.conv_transpose' op ConvTranspose 'result': weight 'w' shape does not match [ic, oc/groups, kh, kw]}}
  %0 = "tpu.conv_transpose"(%x, %w, %n) <{dilations = array<i64: 1, 1>, group = 2 : i64, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}> : (tensor<1x4x9x9xf32>, tensor<4x4x2x2xf32>, none) -> tensor<1x4x18x18xf32>
  return %0 : tensor<1x4x18x18xf32>
}

// -----

func.func @conv_transpose_stride(%x: tensor<1x4x2x2xf32>) -> tensor<1x4x35x35xf32> {
  %w = top.weight "w" : tensor<4x4x18x18xf32>
  %n = top.none
  // expected-error @+1 {{'tpu.conv_transpose' op ConvTranspose 'result': stride 17x17 exceeds 16 (zeros inserted between input rows: a 4-bit field)}}
  %0 = "tpu.conv_transpose"(%x, %w, %n) <{dilations = array<i64: 1, 1>, kernel_shape = array<i64: 18, 18>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 17, 17>}> : (tensor<1x4x2x2xf32>, tensor<4x4x18x18xf32>, none) -> tensor<1x4x35x35xf32>
  return %0 : tensor<1x4x35x35xf32>
}

// -----

func.func @fc_rows(%x: tensor<1x4x9x9xf32>) -> tensor<1x36x6xf32> {
  %w = top.weight "w" : tensor<6x9xf32>
  %n = top.none
  // expected-error @+1 {{'tpu.fc' op Fc 'result': output must be (N, n_out), or (d..., n_out) for an input (d..., K)}}
  %0 = "tpu.fc"(%x, %w, %n) : (tensor<1x4x9x9xf32>, tensor<6x9xf32>, none) -> tensor<1x36x6xf32>
  return %0 : tensor<1x36x6xf32>
}

// -----

func.func @matmul_inner_dims_differ(%a: tensor<2x3x4xf32>, %b: tensor<2x5x6xf32>) -> tensor<2x3x6xf32> {
  // expected-error @+1 {{'tpu.matmul' op MatMul 'result': lhs has K = 4 columns but rhs K = 5 rows}}
  %0 = "tpu.matmul"(%a, %b) : (tensor<2x3x4xf32>, tensor<2x5x6xf32>) -> tensor<2x3x6xf32>
  return %0 : tensor<2x3x6xf32>
}

// -----

func.func @matmul_int8(%a: tensor<2x3x4xi8, 0.5 : f32>, %b: tensor<2x4x6xi8, 0.5 : f32>) -> tensor<2x3x6xi8, 0.5 : f32> {
  // expected-error @+1 {{'tpu.matmul' op MatMul 'result': fp32 only (int8 models run it as an fp32 island)}}
  %0 = "tpu.matmul"(%a, %b) : (tensor<2x3x4xi8, 0.5 : f32>, tensor<2x4x6xi8, 0.5 : f32>) -> tensor<2x3x6xi8, 0.5 : f32>
  return %0 : tensor<2x3x6xi8, 0.5 : f32>
}

module attributes {top.weight_file = "ct_weights.npz"} {
func.func @main(%arg0: tensor<1x2x5x5xf32>) -> tensor<1x2x2x2xf32> attributes {top.input_names = ["x"], top.output_names = ["y"]} {
  %0 = top.input %arg0 : (tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32> loc("x")
  %1 = "top.avg_pool"(%0) <{ceil_mode = true, count_include_pad = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}> : (tensor<1x2x5x5xf32>) -> tensor<1x2x2x2xf32> loc("y")
  return %1 : tensor<1x2x2x2xf32>
}
}

module attributes {top.weight_file = "ct_weights.npz"} {
func.func @main(%arg0: tensor<1x1x3x3xf32>) -> tensor<1x2x8x8xf32> attributes {top.input_names = ["x"], top.output_names = ["y"]} {
  %0 = top.input %arg0 : (tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> loc("x")
  %w = top.weight "w" : tensor<1x2x3x3xf32> loc("w")
  %none = top.none loc("none")
  %1 = "top.conv_transpose"(%0, %w, %none) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>} : (tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32>, none) -> tensor<1x2x8x8xf32> loc("y")
  return %1 : tensor<1x2x8x8xf32>
}
}

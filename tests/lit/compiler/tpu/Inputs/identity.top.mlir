module attributes {top.weight_file = "ct_weights.npz"} {
func.func @main(%arg0: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> attributes {top.input_names = ["x"], top.output_names = ["y"]} {
  %0 = top.input %arg0 : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> loc("x")
  return %0 : tensor<1x2x3x4xf32>
}
}

module attributes {top.weight_file = "ct_weights.npz"} {
func.func @main(%arg0: tensor<1x2x3x4xf32>) -> tensor<1x2x1x3x1x2x1x2x1xf32> attributes {top.input_names = ["x"], top.output_names = ["y"]} {
  %0 = top.input %arg0 : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> loc("x")
  %1 = "top.reshape"(%0) {shape = array<i64: 1, 2, 1, 3, 1, 2, 1, 2, 1>} : (tensor<1x2x3x4xf32>) -> tensor<1x2x1x3x1x2x1x2x1xf32> loc("y")
  return %1 : tensor<1x2x1x3x1x2x1x2x1xf32>
}
}

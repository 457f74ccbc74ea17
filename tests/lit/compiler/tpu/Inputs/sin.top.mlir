module attributes {top.weight_file = "net_weights.npz"} {
func.func @main(%arg0: tensor<1x3x16x16xf32>) -> tensor<1x3x16x16xf32> attributes {top.input_names = ["input"], top.output_names = ["sine"]} {
  %0 = top.input %arg0 : (tensor<1x3x16x16xf32>) -> tensor<1x3x16x16xf32> loc("input")
  %1 = "top.sin"(%0) : (tensor<1x3x16x16xf32>) -> tensor<1x3x16x16xf32> loc("sine")
  return %1 : tensor<1x3x16x16xf32>
}
}

module attributes {top.weight_file = "net_weights.npz"} {
func.func @main(%arg0: tensor<1x3x16x16xf32>) -> tensor<1x1x16x16xi64> attributes {top.input_names = ["input"], top.output_names = ["index"]} {
  %0 = top.input %arg0 : (tensor<1x3x16x16xf32>) -> tensor<1x3x16x16xf32> loc("input")
  %1 = "top.arg_max"(%0) <{axis = 1 : i64}> : (tensor<1x3x16x16xf32>) -> tensor<1x1x16x16xi64> loc("index")
  return %1 : tensor<1x1x16x16xi64>
}
}

// conv 3x3 pad 1 (+bias) -> relu -> avg_pool 2x2 -> reshape -> matmul -> softmax
module attributes {top.weight_file = "small_weights.npz"} {
  func.func @main(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x5xf32> attributes {top.input_names = ["image"], top.output_names = ["prob"]} {
    %0 = top.input %arg0 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("image")
    %w = top.weight "conv_w" : tensor<3x2x3x3xf32> loc("conv_w")
    %b = top.weight "conv_b" : tensor<3xf32> loc("conv_b")
    %1 = "top.conv"(%0, %w, %b) {kernel_shape = array<i64: 3,3>, strides = array<i64: 1,1>, pads = array<i64: 1,1,1,1>, dilations = array<i64: 1,1>} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32> loc("conv")
    %2 = "top.relu"(%1) : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> loc("relu")
    %3 = "top.avg_pool"(%2) {kernel_shape = array<i64: 2,2>, strides = array<i64: 2,2>, pads = array<i64: 0,0,0,0>, dilations = array<i64: 1,1>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x2x2xf32> loc("pool")
    %4 = "top.reshape"(%3) {shape = array<i64: 1, 12>} : (tensor<1x3x2x2xf32>) -> tensor<1x12xf32> loc("flat")
    %fw = top.weight "fc_w" : tensor<12x5xf32> loc("fc_w")
    %5 = "top.matmul"(%4, %fw) : (tensor<1x12xf32>, tensor<12x5xf32>) -> tensor<1x5xf32> loc("logits")
    %6 = "top.softmax"(%5) {axis = 1 : i64} : (tensor<1x5xf32>) -> tensor<1x5xf32> loc("prob")
    return %6 : tensor<1x5xf32>
  }
}

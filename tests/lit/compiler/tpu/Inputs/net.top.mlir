module attributes {top.weight_file = "net_weights.npz"} {
func.func @main(%arg0: tensor<1x3x16x16xf32>) -> tensor<1x5xf32> attributes {top.input_names = ["input"], top.output_names = ["output"]} {
  %0 = top.input %arg0 : (tensor<1x3x16x16xf32>) -> tensor<1x3x16x16xf32> loc("input")
  %w1 = top.weight "w1" : tensor<8x3x3x3xf32> loc("w1")
  %b1 = top.weight "b1" : tensor<8xf32> loc("b1")
  %w2 = top.weight "w2" : tensor<8x8x1x1xf32> loc("w2")
  %b2 = top.weight "b2" : tensor<8xf32> loc("b2")
  %fw = top.weight "fw" : tensor<5x8xf32> loc("fw")
  %fb = top.weight "fb" : tensor<5xf32> loc("fb")
  %c1 = "top.conv"(%0, %w1, %b1) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x3x16x16xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32> loc("conv1")
  %r1 = "top.relu"(%c1) : (tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> loc("relu1")
  %p1 = "top.max_pool"(%r1) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x8x16x16xf32>) -> tensor<1x8x8x8xf32> loc("pool1")
  %c2 = "top.conv"(%p1, %w2, %b2) {kernel_shape = array<i64: 1, 1>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x8x8x8xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32> loc("conv2")
  %a = "top.add"(%c2, %p1) : (tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> loc("add")
  %r2 = "top.relu"(%a) : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> loc("relu2")
  %p2 = "top.avg_pool"(%r2) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x8x8x8xf32>) -> tensor<1x8x4x4xf32> loc("pool2")
  %g = "top.global_avg_pool"(%p2) : (tensor<1x8x4x4xf32>) -> tensor<1x8x1x1xf32> loc("gap")
  %f = "top.reshape"(%g) {shape = array<i64: 1, 8>} : (tensor<1x8x1x1xf32>) -> tensor<1x8xf32> loc("flatten")
  %o = "top.gemm"(%f, %fw, %fb) {transB = true} : (tensor<1x8xf32>, tensor<5x8xf32>, tensor<5xf32>) -> tensor<1x5xf32> loc("output")
  return %o : tensor<1x5xf32>
}
}

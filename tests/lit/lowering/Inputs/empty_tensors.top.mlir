// An empty slice (a dim of 0) as a graph output, through a relu, and
// concatenated with its source (the concat's result is not empty); a relu of
// the input beside them runs on the chip.
module attributes {top.weight_file = "none.npz"} {
  func.func @main(%arg0: tensor<2x6x4xf32>) -> (tensor<2x0x4xf32>, tensor<2x0x4xf32>, tensor<2x6x4xf32>, tensor<2x6x4xf32>) {
    %0 = top.input %arg0 : (tensor<2x6x4xf32>) -> tensor<2x6x4xf32> loc("x")
    %1 = "top.slice"(%0) <{ends = array<i64: 2, 6, 4>, starts = array<i64: 0, 6, 0>, steps = array<i64: 1, 1, 1>}> : (tensor<2x6x4xf32>) -> tensor<2x0x4xf32> loc("e")
    %2 = "top.relu"(%1) : (tensor<2x0x4xf32>) -> tensor<2x0x4xf32> loc("er")
    %3 = "top.concat"(%0, %2) <{axis = 1 : i64}> : (tensor<2x6x4xf32>, tensor<2x0x4xf32>) -> tensor<2x6x4xf32> loc("c")
    %4 = "top.relu"(%0) : (tensor<2x6x4xf32>) -> tensor<2x6x4xf32> loc("r")
    return %1, %2, %3, %4 : tensor<2x0x4xf32>, tensor<2x0x4xf32>, tensor<2x6x4xf32>, tensor<2x6x4xf32>
  }
}

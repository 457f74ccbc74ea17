module attributes {top.weight_file = "move_chains_top_weights.npz"} {
  func.func @main(%arg0: tensor<1x2x3x4x5xf32>) -> tensor<1x2x9x4x5xf32> {
    %0 = "top.input"(%arg0) : (tensor<1x2x3x4x5xf32>) -> tensor<1x2x3x4x5xf32> loc("x")
    %1 = "top.pad"(%0) <{mode = "constant", pads = array<i64: 0, 0, 1, 0, 0, 0, 0, 1, 0, 0>, value = 0.000000e+00 : f64}> : (tensor<1x2x3x4x5xf32>) -> tensor<1x2x5x4x5xf32> loc("pad")
    %2 = "top.slice"(%1) <{starts = array<i64: 0, 0, 0, 0, 0>, ends = array<i64: 1, 2, 3, 4, 5>, steps = array<i64: 1, 1, 1, 1, 1>}> : (tensor<1x2x5x4x5xf32>) -> tensor<1x2x3x4x5xf32> loc("tap0")
    %3 = "top.slice"(%1) <{starts = array<i64: 0, 0, 1, 0, 0>, ends = array<i64: 1, 2, 4, 4, 5>, steps = array<i64: 1, 1, 1, 1, 1>}> : (tensor<1x2x5x4x5xf32>) -> tensor<1x2x3x4x5xf32> loc("tap1")
    %4 = "top.slice"(%1) <{starts = array<i64: 0, 0, 2, 0, 0>, ends = array<i64: 1, 2, 5, 4, 5>, steps = array<i64: 1, 1, 1, 1, 1>}> : (tensor<1x2x5x4x5xf32>) -> tensor<1x2x3x4x5xf32> loc("tap2")
    %5 = "top.concat"(%2, %3, %4) <{axis = 2 : i64}> : (tensor<1x2x3x4x5xf32>, tensor<1x2x3x4x5xf32>, tensor<1x2x3x4x5xf32>) -> tensor<1x2x9x4x5xf32> loc("y")
    return %5 : tensor<1x2x9x4x5xf32>
  }
}

// A top.reshape of a constant (w.npz beside it: w = [0, 1, 2, 3]).
module attributes {top.weight_file = "w.npz"} {
  func.func @main(%arg0: tensor<4x1xf32>) -> tensor<4x1xf32> {
    %0 = top.input %arg0 : (tensor<4x1xf32>) -> tensor<4x1xf32> loc("x")
    %1 = "top.weight"() <{name = "w"}> : () -> tensor<4xf32> loc("w")
    %2 = "top.reshape"(%1) <{shape = array<i64: 4, 1>}> : (tensor<4xf32>) -> tensor<4x1xf32> loc("r")
    %3 = "top.add"(%0, %2) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32> loc("y")
    return %3 : tensor<4x1xf32>
  }
}

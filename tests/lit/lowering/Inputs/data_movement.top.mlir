module attributes {top.weight_file = "data_movement_weights.npz"} {
func.func @main(%arg0: tensor<2x4x3x5xf32>, %arg1: tensor<2x1x3x1xf32>) -> (tensor<2x3x6x6xf32>, tensor<2x4x5x9xf32>, tensor<2x4x4x6xf32>, tensor<2x4x6x5xf32>, tensor<2x4x3x5xf32>, tensor<2x1x6x10xf32>, tensor<2x4x3x4xf32>, tensor<2x1x3x5xf32>, tensor<2x3x3x5xf32>, tensor<4x4x3x5xf32>, tensor<8x3x5x1xf32>, tensor<8x3x5xf32>, tensor<2x4x3x5xf32>, tensor<2x6x3x5xf32>, tensor<2x5x3x5xf32>) attributes {top.input_names = ["x", "z"], top.output_names = ["padded", "reflected", "edged", "tiled", "expanded", "d2s", "gathered", "part0", "part1", "stacked", "rows", "rows3", "reversed", "chpad", "tokens"]} {
  %0 = top.input %arg0 : (tensor<2x4x3x5xf32>) -> tensor<2x4x3x5xf32> loc("x")
  %1 = top.input %arg1 : (tensor<2x1x3x1xf32>) -> tensor<2x1x3x1xf32> loc("z")
  %idx = top.weight "idx" : tensor<4xi64> loc("idx")
  %zeros = top.weight "zeros" : tensor<2x2x3x5xf32> loc("zeros")
  %cls = top.weight "cls" : tensor<2x1x3x5xf32> loc("cls")
  %2 = "top.permute"(%0) <{order = array<i64: 0, 2, 3, 1>}> : (tensor<2x4x3x5xf32>) -> tensor<2x3x5x4xf32> loc("nhwc")
  %3 = "top.pad"(%2) <{pads = array<i64: 0, 0, 1, 0, 0, 0, 0, 2>, mode = "constant", value = 5.000000e-01 : f64}> : (tensor<2x3x5x4xf32>) -> tensor<2x3x6x6xf32> loc("padded")
  %4 = "top.pad"(%0) <{pads = array<i64: 0, 0, 1, 2, 0, 0, 1, 2>, mode = "reflect", value = 0.000000e+00 : f64}> : (tensor<2x4x3x5xf32>) -> tensor<2x4x5x9xf32> loc("reflected")
  %5 = "top.pad"(%0) <{pads = array<i64: 0, 0, 0, 1, 0, 0, 1, 0>, mode = "edge", value = 0.000000e+00 : f64}> : (tensor<2x4x3x5xf32>) -> tensor<2x4x4x6xf32> loc("edged")
  %6 = "top.tile"(%0) <{repeats = array<i64: 1, 1, 2, 1>}> : (tensor<2x4x3x5xf32>) -> tensor<2x4x6x5xf32> loc("tiled")
  %7 = "top.expand"(%1) <{shape = array<i64: 2, 4, 3, 5>}> : (tensor<2x1x3x1xf32>) -> tensor<2x4x3x5xf32> loc("expanded")
  %8 = "top.depth_to_space"(%0) <{blocksize = 2 : i64, mode = "DCR"}> : (tensor<2x4x3x5xf32>) -> tensor<2x1x6x10xf32> loc("d2s")
  %9 = "top.gather"(%0, %idx) <{axis = 3 : i64}> : (tensor<2x4x3x5xf32>, tensor<4xi64>) -> tensor<2x4x3x4xf32> loc("gathered")
  %10:2 = "top.split"(%0) <{axis = 1 : i64, split = array<i64: 1, 3>}> : (tensor<2x4x3x5xf32>) -> (tensor<2x1x3x5xf32>, tensor<2x3x3x5xf32>) loc(fused["part0", "part1"])
  %11 = "top.concat"(%0, %7) <{axis = 0 : i64}> : (tensor<2x4x3x5xf32>, tensor<2x4x3x5xf32>) -> tensor<4x4x3x5xf32> loc("stacked")
  %12 = "top.reshape"(%0) <{shape = array<i64: 8, 3, 5, 1>}> : (tensor<2x4x3x5xf32>) -> tensor<8x3x5x1xf32> loc("rows")
  %rows3 = "top.reshape"(%0) <{shape = array<i64: 8, 3, 5>}> : (tensor<2x4x3x5xf32>) -> tensor<8x3x5xf32> loc("rows3")
  %13 = "top.slice"(%0) <{starts = array<i64: 0, 3, 2, 0>, ends = array<i64: 2, -1, -1, 5>, steps = array<i64: 1, -1, -1, 1>}> : (tensor<2x4x3x5xf32>) -> tensor<2x4x3x5xf32> loc("reversed")
  %14 = "top.concat"(%0, %zeros) <{axis = 1 : i64}> : (tensor<2x4x3x5xf32>, tensor<2x2x3x5xf32>) -> tensor<2x6x3x5xf32> loc("chpad")
  %15 = "top.concat"(%cls, %0) <{axis = 1 : i64}> : (tensor<2x1x3x5xf32>, tensor<2x4x3x5xf32>) -> tensor<2x5x3x5xf32> loc("tokens")
  return %3, %4, %5, %6, %7, %8, %9, %10#0, %10#1, %11, %12, %rows3, %13, %14, %15 : tensor<2x3x6x6xf32>, tensor<2x4x5x9xf32>, tensor<2x4x4x6xf32>, tensor<2x4x6x5xf32>, tensor<2x4x3x5xf32>, tensor<2x1x6x10xf32>, tensor<2x4x3x4xf32>, tensor<2x1x3x5xf32>, tensor<2x3x3x5xf32>, tensor<4x4x3x5xf32>, tensor<8x3x5x1xf32>, tensor<8x3x5xf32>, tensor<2x4x3x5xf32>, tensor<2x6x3x5xf32>, tensor<2x5x3x5xf32>
}
}

// RUN: rm -rf %t && mkdir -p %t && cp %s %t/m.mlir
// RUN: /usr/bin/python3 -c "import numpy as np; np.savez('%t/w.npz', two=np.float32(2), eps=np.float32(1e-6), g=np.ones(4, np.float32), r=np.float32(0.70710677), one=np.float32(1), half=np.float32(0.5), three=np.float32(3), six=np.float32(6))"
// RUN: tpuc-opt %t/m.mlir --top-fuse-patterns --top-dce | FileCheck %s

module attributes {top.weight_file = "w.npz"} {
  // x * x as the square, scale without bias.
  // CHECK-LABEL: func.func @layer_norm
  // CHECK: %[[LN:.*]] = "top.layer_norm"(%arg0, %{{.*}}, %{{.*}}) <{axis = 1 : i64, epsilon = 9.99999997{{[0-9]*}}E-7 : f64}>
  // CHECK-NEXT: return %[[LN]]
  func.func @layer_norm(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
    %m = "top.reduce_mean"(%x) {axes = array<i64: 1>, keepdims = true} : (tensor<3x4xf32>) -> tensor<3x1xf32>
    %d = "top.sub"(%x, %m) : (tensor<3x4xf32>, tensor<3x1xf32>) -> tensor<3x4xf32>
    %sq = "top.mul"(%d, %d) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %v = "top.reduce_mean"(%sq) {axes = array<i64: 1>, keepdims = true} : (tensor<3x4xf32>) -> tensor<3x1xf32>
    %eps = top.weight "eps" : tensor<f32>
    %ve = "top.add"(%v, %eps) : (tensor<3x1xf32>, tensor<f32>) -> tensor<3x1xf32>
    %s = "top.sqrt"(%ve) : (tensor<3x1xf32>) -> tensor<3x1xf32>
    %n = "top.div"(%d, %s) : (tensor<3x4xf32>, tensor<3x1xf32>) -> tensor<3x4xf32>
    %g = top.weight "g" : tensor<4xf32>
    %y = "top.mul"(%n, %g) : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
    return %y : tensor<3x4xf32>
  }

  // Not a LayerNorm: the mean is taken over a leading axis.
  // CHECK-LABEL: func.func @not_trailing
  // CHECK-NOT: top.layer_norm
  func.func @not_trailing(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
    %m = "top.reduce_mean"(%x) {axes = array<i64: 0>, keepdims = true} : (tensor<3x4xf32>) -> tensor<1x4xf32>
    %d = "top.sub"(%x, %m) : (tensor<3x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
    %two = top.weight "two" : tensor<f32>
    %sq = "top.pow"(%d, %two) : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
    %v = "top.reduce_mean"(%sq) {axes = array<i64: 0>, keepdims = true} : (tensor<3x4xf32>) -> tensor<1x4xf32>
    %eps = top.weight "eps" : tensor<f32>
    %ve = "top.add"(%v, %eps) : (tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xf32>
    %s = "top.sqrt"(%ve) : (tensor<1x4xf32>) -> tensor<1x4xf32>
    %n = "top.div"(%d, %s) : (tensor<3x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
    return %n : tensor<3x4xf32>
  }

  // GELU written as (x * 0.5) * (erf(x * 0.7071) + 1).
  // CHECK-LABEL: func.func @gelu
  // CHECK-NEXT: %[[G:.*]] = "top.gelu"(%arg0)
  // CHECK-NEXT: return %[[G]]
  func.func @gelu(%x: tensor<6xf32>) -> tensor<6xf32> {
    %r = top.weight "r" : tensor<f32>
    %a = "top.mul"(%x, %r) : (tensor<6xf32>, tensor<f32>) -> tensor<6xf32>
    %e = "top.erf"(%a) : (tensor<6xf32>) -> tensor<6xf32>
    %one = top.weight "one" : tensor<f32>
    %p = "top.add"(%one, %e) : (tensor<f32>, tensor<6xf32>) -> tensor<6xf32>
    %half = top.weight "half" : tensor<f32>
    %hx = "top.mul"(%x, %half) : (tensor<6xf32>, tensor<f32>) -> tensor<6xf32>
    %y = "top.mul"(%hx, %p) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    return %y : tensor<6xf32>
  }

  // Not GELU: the constant is 3, not 1.
  // CHECK-LABEL: func.func @not_gelu
  // CHECK: top.erf
  func.func @not_gelu(%x: tensor<6xf32>) -> tensor<6xf32> {
    %r = top.weight "r" : tensor<f32>
    %a = "top.mul"(%x, %r) : (tensor<6xf32>, tensor<f32>) -> tensor<6xf32>
    %e = "top.erf"(%a) : (tensor<6xf32>) -> tensor<6xf32>
    %three = top.weight "three" : tensor<f32>
    %p = "top.add"(%e, %three) : (tensor<6xf32>, tensor<f32>) -> tensor<6xf32>
    %m = "top.mul"(%x, %p) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    %half = top.weight "half" : tensor<f32>
    %y = "top.mul"(%m, %half) : (tensor<6xf32>, tensor<f32>) -> tensor<6xf32>
    return %y : tensor<6xf32>
  }

  // PaddlePaddle's hard_swish: x * clip(x + 3, 0, 6) / 6.
  // CHECK-LABEL: func.func @hard_swish
  // CHECK-NEXT: %[[H:.*]] = "top.hard_swish"(%arg0)
  // CHECK-NEXT: return %[[H]]
  func.func @hard_swish(%x: tensor<6xf32>) -> tensor<6xf32> {
    %three = top.weight "three" : tensor<f32>
    %a = "top.add"(%x, %three) : (tensor<6xf32>, tensor<f32>) -> tensor<6xf32>
    %c = "top.clip"(%a) {min = 0.0 : f64, max = 6.0 : f64} : (tensor<6xf32>) -> tensor<6xf32>
    %m = "top.mul"(%x, %c) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    %six = top.weight "six" : tensor<f32>
    %y = "top.div"(%m, %six) : (tensor<6xf32>, tensor<f32>) -> tensor<6xf32>
    return %y : tensor<6xf32>
  }

  // Mish as torch exports it before opset 18, both operand orders; a tanh
  // of a softplus not multiplied by its input stays.
  // CHECK-LABEL: func.func @mish
  // CHECK: %[[A:.*]] = "top.mish"(%arg0)
  // CHECK: %[[B:.*]] = "top.mish"(%arg0)
  // CHECK: "top.softplus"
  // CHECK: "top.tanh"
  // CHECK-NOT: top.mish
  func.func @mish(%x: tensor<2x3xf32>, %z: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
    %s = "top.softplus"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %t = "top.tanh"(%s) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %a = "top.mul"(%x, %t) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %s2 = "top.softplus"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %t2 = "top.tanh"(%s2) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %b = "top.mul"(%t2, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %s3 = "top.softplus"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %t3 = "top.tanh"(%s3) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %c = "top.mul"(%t3, %z) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    return %a, %b, %c : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
  }
}

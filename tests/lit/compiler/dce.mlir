// RUN: tpuc-opt %s --top-dce | FileCheck %s

// Unused ops and weights go; inputs stay (they name the model's inputs).
// CHECK-LABEL: func.func @main
// CHECK-NEXT: top.input
// CHECK-NEXT: top.input
// CHECK-NEXT: %[[R:.*]] = "top.relu"
// CHECK-NEXT: return %[[R]]
func.func @main(%arg0: tensor<2x2xf32>, %arg1: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = "top.input"(%arg0) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %1 = "top.input"(%arg1) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %w = top.weight "unused" : tensor<2x2xf32>
  %2 = "top.add"(%0, %w) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %3 = "top.sigmoid"(%2) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %4 = "top.relu"(%0) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %4 : tensor<2x2xf32>
}

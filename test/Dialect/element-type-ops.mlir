// RUN: shardc-opt %s | FileCheck %s
// RUN: shardc-opt %s | shardc-opt | FileCheck %s
// RUN: shardc-opt -mlir-print-op-generic %s | shardc-opt | FileCheck %s
// The element-type ops (iota, compare, select, convert) and the integer and
// boolean tensors that layout ops, constants and collectives accept print
// back to what they parsed from.

shardc.mesh @mesh ["x"=2]

// CHECK-LABEL: func.func @causal_mask
func.func @causal_mask(%scores: tensor<4x4xf32>, %ids: tensor<4xi32>) -> (tensor<4x4xf32>, tensor<4xi64>) {
  // CHECK: %[[ROW:.*]] = shardc.iota dimension = 0 : tensor<4x4xi32>
  %row = shardc.iota dimension = 0 : tensor<4x4xi32>
  // CHECK: %[[COL:.*]] = shardc.iota dimension = 1 : tensor<4x4xi32>
  %col = shardc.iota dimension = 1 : tensor<4x4xi32>
  // CHECK: %[[M:.*]] = shardc.compare %[[COL]], %[[ROW]] direction = "LE" : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
  %mask = shardc.compare %col, %row direction = "LE" : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
  // CHECK: shardc.constant dense<-1.000000e+09> : tensor<4x4xf32>
  %neg = shardc.constant dense<-1.0e9> : tensor<4x4xf32>
  // CHECK: shardc.select %[[M]], %{{.*}}, %{{.*}} : (tensor<4x4xi1>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %masked = shardc.select %mask, %scores, %neg : (tensor<4x4xi1>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  // CHECK: shardc.convert %{{.*}} dtype = i64 : (tensor<4xi32>) -> tensor<4xi64>
  %wide = shardc.convert %ids dtype = i64 : (tensor<4xi32>) -> tensor<4xi64>
  return %masked, %wide : tensor<4x4xf32>, tensor<4xi64>
}

// CHECK-LABEL: func.func @integer_layouts
func.func @integer_layouts(%a: tensor<4x2xi32>, %b: tensor<4xi1>) -> (tensor<2x4xi32>, tensor<4x4xi1>, tensor<8xi32>, tensor<4xi1>, tensor<2x2xi64>) {
  // CHECK: shardc.transpose %{{.*}} permutation = [1, 0] : (tensor<4x2xi32>) -> tensor<2x4xi32>
  %t = shardc.transpose %a permutation = [1, 0] : (tensor<4x2xi32>) -> tensor<2x4xi32>
  // CHECK: shardc.broadcast_in_dim %{{.*}} dims = [1] : (tensor<4xi1>) -> tensor<4x4xi1>
  %bb = shardc.broadcast_in_dim %b dims = [1] : (tensor<4xi1>) -> tensor<4x4xi1>
  // CHECK: shardc.reshape %{{.*}} : (tensor<4x2xi32>) -> tensor<8xi32>
  %r = shardc.reshape %a : (tensor<4x2xi32>) -> tensor<8xi32>
  // CHECK: shardc.all_reduce %{{.*}} on @mesh axes = ["x"] {reduction = #shardc.reduction<max>} : tensor<4xi1>
  %any = shardc.all_reduce %b on @mesh axes = ["x"] {reduction = #shardc.reduction<max>} : tensor<4xi1>
  // CHECK: shardc.constant dense<{{\[\[}}1, -2], [3, 4]]> : tensor<2x2xi64>
  %c = shardc.constant dense<[[1, -2], [3, 4]]> : tensor<2x2xi64>
  return %t, %bb, %r, %any, %c : tensor<2x4xi32>, tensor<4x4xi1>, tensor<8xi32>, tensor<4xi1>, tensor<2x2xi64>
}

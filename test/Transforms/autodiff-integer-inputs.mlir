// Integer inputs are data: without `wrt` and without params, autodiff
// differentiates every floating-point input and skips the token ids
// (no gradient, no error). The ids' path (index arithmetic on i32, the
// gather's ids) gets no cotangent; the table's gradient is scatter_add of
// the cotangent at the ids, whose rule is the gather's transpose.
// RUN: shardc-opt --shardc-autodiff %s | FileCheck %s

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %arg0: tensor<6x4xf32> {shardc.name = "table"}
// CHECK-SAME: %arg1: tensor<3xi32> {shardc.name = "ids"}
// CHECK-SAME: %arg2: tensor<3x4xf32> {shardc.name = "output0.grad"}
// CHECK-SAME: -> (tensor<3x4xf32>, tensor<6x4xf32>)
// CHECK: %[[S:.*]] = shardc.add %arg1, %{{.*}} : tensor<3xi32>
// CHECK-NEXT: %[[E:.*]] = shardc.gather %arg0, %[[S]] axis = 0
// CHECK-NEXT: %[[Z:.*]] = shardc.constant dense<0.000000e+00> : tensor<6x4xf32>
// CHECK-NEXT: %table.grad = shardc.scatter_add %[[Z]], %[[S]], %arg2 axis = 0 : (tensor<6x4xf32>, tensor<3xi32>, tensor<3x4xf32>) -> tensor<6x4xf32>
// CHECK-NEXT: return %[[E]], %table.grad :
shardc.mesh @mesh ["x"=2]
func.func @main(%table: tensor<6x4xf32> {shardc.name = "table"},
                %ids: tensor<3xi32> {shardc.name = "ids"}) -> tensor<3x4xf32> {
  %one = shardc.constant dense<1> : tensor<3xi32>
  %shifted = shardc.add %ids, %one : tensor<3xi32>
  %e = shardc.gather %table, %shifted axis = 0 : (tensor<6x4xf32>, tensor<3xi32>) -> tensor<3x4xf32>
  return %e : tensor<3x4xf32>
}

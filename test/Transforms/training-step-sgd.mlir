// A loss function becomes one SGD step: the gradient of the loss (seeded
// with 1; the second result does not contribute), then p - lr * g, with the
// learning rate as a scalar input and the gradient and the next parameter
// as results marked with the argument they belong to.
// RUN: shardc-opt --shardc-training-step=optimizer=sgd %s | FileCheck %s

shardc.mesh @mesh ["data"=2]
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:arg0]]: tensor<4x8xf32> {shardc.name = "x"}
// CHECK-SAME: %[[W:arg1]]: tensor<8x2xf32> {shardc.name = "w", shardc.param, shardc.sharding = #shardc.sharding<@mesh, [{}, {"data"}]>}
// CHECK-SAME: %[[LR:arg2]]: tensor<f32> {shardc.name = "learning_rate"}
// CHECK-SAME: -> (tensor<f32>, tensor<4x2xf32>, tensor<8x2xf32> {shardc.gradient_of = "w", shardc.sharding = #shardc.sharding<@mesh, [{}, {"data"}]>}, tensor<8x2xf32> {shardc.next = "w", shardc.sharding = #shardc.sharding<@mesh, [{}, {"data"}]>})
func.func @main(%x: tensor<4x8xf32> {shardc.name = "x"},
                %w: tensor<8x2xf32> {shardc.name = "w", shardc.param,
                    shardc.sharding = #shardc.sharding<@mesh, [{}, {"data"}]>})
    -> (tensor<f32>, tensor<4x2xf32>) {
  %y = shardc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %loss = shardc.reduce_sum %y dims = [0, 1] : (tensor<4x2xf32>) -> tensor<f32>
  return %loss, %y : tensor<f32>, tensor<4x2xf32>
}
// CHECK-NEXT: %[[Y:.*]] = shardc.matmul %[[X]], %[[W]]
// CHECK-NEXT: %[[LOSS:.*]] = shardc.reduce_sum %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = shardc.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DY:.*]] = shardc.broadcast_in_dim %[[ONE]] dims = []
// CHECK-NEXT: %w.grad = shardc.dot_general %[[X]], %[[DY]] batch = [] x [], contract = [0] x [0]
// CHECK-NEXT: %[[LRB:.*]] = shardc.broadcast_in_dim %[[LR]] dims = [] : (tensor<f32>) -> tensor<8x2xf32>
// CHECK-NEXT: %[[STEP:.*]] = shardc.mul %[[LRB]], %w.grad
// CHECK-NEXT: %w.next = shardc.sub %[[W]], %[[STEP]]
// CHECK-NEXT: return %[[LOSS]], %[[Y]], %w.grad, %w.next

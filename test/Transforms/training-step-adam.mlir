// One Adam step: per parameter the moments m and v (state inputs, initial
// value 0, laid out like the parameter), and the two scalar powers beta^t
// (initial value 1) shared by all parameters; the results are the gradient,
// the next parameter and the next state, each naming its argument.
// RUN: shardc-opt --shardc-training-step %s | FileCheck %s
// With zero-axes the state is split over "data" too and the gradient is
// constrained to the state's layout (ZeRO-1/2).
// RUN: shardc-opt --shardc-training-step='zero-axes=data' %s | FileCheck %s --check-prefix=ZERO

shardc.mesh @mesh ["data"=2, "model"=2]
func.func @main(%x: tensor<4x8xf32> {shardc.name = "x"},
                %w: tensor<8x2xf32> {shardc.name = "w", shardc.param,
                    shardc.sharding = #shardc.sharding<@mesh, [{"model"}, {}]>})
    -> tensor<f32> {
  %y = shardc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %loss = shardc.reduce_sum %y dims = [0, 1] : (tensor<4x2xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[W:arg1]]: tensor<8x2xf32> {shardc.name = "w", shardc.param, shardc.sharding = #shardc.sharding<@mesh, [{"model"}, {}]>}
// CHECK-SAME: %[[LR:arg2]]: tensor<f32> {shardc.name = "learning_rate"}
// CHECK-SAME: %[[M:arg3]]: tensor<8x2xf32> {shardc.name = "w.adam_m", shardc.optimizer_state = 0.000000e+00 : f32, shardc.sharding = #shardc.sharding<@mesh, [{"model"}, {}]>}
// CHECK-SAME: %[[V:arg4]]: tensor<8x2xf32> {shardc.name = "w.adam_v", shardc.optimizer_state = 0.000000e+00 : f32, shardc.sharding = #shardc.sharding<@mesh, [{"model"}, {}]>}
// CHECK-SAME: %[[B1:arg5]]: tensor<f32> {shardc.name = "adam.beta1_power", shardc.optimizer_state = 1.000000e+00 : f32}
// CHECK-SAME: %[[B2:arg6]]: tensor<f32> {shardc.name = "adam.beta2_power", shardc.optimizer_state = 1.000000e+00 : f32}
// CHECK-SAME: -> (tensor<f32>, tensor<8x2xf32> {shardc.gradient_of = "w", {{.*}}}, tensor<8x2xf32> {shardc.next = "w", {{.*}}}, tensor<8x2xf32> {shardc.next = "w.adam_m", {{.*}}}, tensor<8x2xf32> {shardc.next = "w.adam_v", {{.*}}}, tensor<f32> {shardc.next = "adam.beta1_power"}, tensor<f32> {shardc.next = "adam.beta2_power"})
// CHECK: %w.grad = shardc.dot_general
// beta^t, then lr / (1 - beta1^t) and sqrt(1 - beta2^t)
// CHECK: %adam.beta1_power.next = shardc.mul %[[B1]], %{{.*}} : tensor<f32>
// CHECK: %adam.beta2_power.next = shardc.mul %[[B2]], %{{.*}} : tensor<f32>
// CHECK: %[[C1:.*]] = shardc.sub %{{.*}}, %adam.beta1_power.next
// CHECK-NEXT: %[[STEPSIZE:.*]] = shardc.div %[[LR]], %[[C1]]
// CHECK-NEXT: %[[C2:.*]] = shardc.sub %{{.*}}, %adam.beta2_power.next
// CHECK-NEXT: %[[ROOT:.*]] = shardc.sqrt %[[C2]]
// m = b1 m + (1 - b1) g
// CHECK-NEXT: %[[D1:.*]] = shardc.constant dense<0.899999976> : tensor<8x2xf32>
// CHECK-NEXT: %[[BM:.*]] = shardc.mul %[[D1]], %[[M]]
// CHECK-NEXT: %[[K1:.*]] = shardc.constant dense<1.000000e-01> : tensor<8x2xf32>
// CHECK-NEXT: %[[BG:.*]] = shardc.mul %[[K1]], %w.grad
// CHECK-NEXT: %w.adam_m.next = shardc.add %[[BM]], %[[BG]]
// v = b2 v + (1 - b2) g^2
// CHECK-NEXT: %[[D2:.*]] = shardc.constant dense<9.990000e-01> : tensor<8x2xf32>
// CHECK-NEXT: %[[BV:.*]] = shardc.mul %[[D2]], %[[V]]
// CHECK-NEXT: %[[G2:.*]] = shardc.mul %w.grad, %w.grad
// CHECK-NEXT: %[[K2:.*]] = shardc.constant dense<1.000000e-03> : tensor<8x2xf32>
// CHECK-NEXT: %[[BG2:.*]] = shardc.mul %[[K2]], %[[G2]]
// CHECK-NEXT: %w.adam_v.next = shardc.add %[[BV]], %[[BG2]]
// p - lr_t * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
// CHECK-NEXT: %[[SQ:.*]] = shardc.sqrt %w.adam_v.next
// CHECK-NEXT: %[[RB:.*]] = shardc.broadcast_in_dim %[[ROOT]]
// CHECK-NEXT: %[[Q:.*]] = shardc.div %[[SQ]], %[[RB]]
// CHECK-NEXT: %[[EPS:.*]] = shardc.constant dense<9.99999993E-9> : tensor<8x2xf32>
// CHECK-NEXT: %[[DEN:.*]] = shardc.add %[[Q]], %[[EPS]]
// CHECK-NEXT: %[[R:.*]] = shardc.div %w.adam_m.next, %[[DEN]]
// CHECK-NEXT: %[[SB:.*]] = shardc.broadcast_in_dim %[[STEPSIZE]]
// CHECK-NEXT: %[[UPD:.*]] = shardc.mul %[[SB]], %[[R]]
// CHECK-NEXT: %w.next = shardc.sub %[[W]], %[[UPD]]
// CHECK-NEXT: return %{{.*}}, %w.grad, %w.next, %w.adam_m.next, %w.adam_v.next, %adam.beta1_power.next, %adam.beta2_power.next

// "data" goes on dim 0 after "model" (8 = 2 * 2 * 2); dim 1 (2) would not
// fit after it either way.
// ZERO: shardc.name = "w.adam_m", shardc.optimizer_state = 0.000000e+00 : f32, shardc.sharding = #shardc.sharding<@mesh, [{"model", "data"}, {}]>
// ZERO-SAME: shardc.name = "w.adam_v", shardc.optimizer_state = 0.000000e+00 : f32, shardc.sharding = #shardc.sharding<@mesh, [{"model", "data"}, {}]>
// ZERO-SAME: -> (tensor<f32>, tensor<8x2xf32> {shardc.gradient_of = "w", shardc.sharding = #shardc.sharding<@mesh, [{"model", "data"}, {}]>}, tensor<8x2xf32> {shardc.next = "w", shardc.sharding = #shardc.sharding<@mesh, [{"model"}, {}]>}
// The gradient as computed and in the update's layout share the name.
// ZERO: %w.grad = shardc.dot_general
// ZERO-NEXT: %w.grad_0 = shardc.sharding_constraint %w.grad <@mesh, [{"model", "data"}, {}]>

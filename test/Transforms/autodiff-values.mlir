// How the pass names, shards and accumulates: cotangent arguments and
// gradient results carry their value's sharding; a value used twice gets
// the sum of its cotangents; an argument without a path to the results
// gets a zero gradient; a gradient that is another value (here the
// cotangent argument itself) is copied so that it can carry its own name.
// RUN: shardc-opt --shardc-autodiff %s | FileCheck %s

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %arg0: tensor<4x8xf32> {shardc.name = "a", shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: %arg1: tensor<4x8xf32> {shardc.name = "b"}
// CHECK-SAME: %arg2: tensor<4x8xf32> {shardc.name = "unused"}
// The partial sum of the result is a layout of the forward value only.
// CHECK-SAME: %arg3: tensor<4x8xf32> {shardc.name = "y.grad", shardc.sharding = #shardc.sharding<@mesh, [{}, {"x"}]>}
// CHECK-SAME: -> (tensor<4x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"x"}], partial = {"y"}>},
// CHECK-SAME: tensor<4x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {}]>},
// CHECK-SAME: tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: %s = shardc.mul %arg0, %arg0
// CHECK: %y = shardc.add %s, %arg1
// s = a*a: both uses of a contribute g*a, and they are added.
// CHECK: %[[L:.*]] = shardc.mul %arg3, %arg0
// CHECK: %[[R:.*]] = shardc.mul %arg3, %arg0
// CHECK: %a.grad = shardc.add %[[L]], %[[R]]
// CHECK: %b.grad = shardc.reshape %arg3 : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: %unused.grad = shardc.constant dense<0.000000e+00> : tensor<4x8xf32>
// CHECK: return %y, %a.grad, %b.grad, %unused.grad

shardc.mesh @mesh ["x"=2, "y"=2]
func.func @main(%a: tensor<4x8xf32> {shardc.name = "a", shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {}]>},
                %b: tensor<4x8xf32> {shardc.name = "b"},
                %unused: tensor<4x8xf32> {shardc.name = "unused"})
    -> (tensor<4x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"x"}], partial = {"y"}>}) {
  %s = shardc.mul %a, %a : tensor<4x8xf32> loc("s")
  %y = shardc.add %s, %b : tensor<4x8xf32> loc("y")
  return %y : tensor<4x8xf32>
}

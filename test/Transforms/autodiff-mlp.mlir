// The seed's MLP ReLU(x W0) W1 differentiated with respect to its
// parameters: the VJP the seed writes by hand (SingleDevice.backward), and
// nothing else: no input gradient is computed when x is not asked for.
// RUN: shardc-opt --shardc-autodiff %s | FileCheck %s
// RUN: shardc-opt --shardc-autodiff='wrt=x,w0,w1' %s | FileCheck %s --check-prefix=ALL

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:arg0]]: tensor<8x16xf32> {shardc.name = "x"}
// CHECK-SAME: %[[W0:arg1]]: tensor<16x32xf32> {shardc.name = "w0", shardc.param}
// CHECK-SAME: %[[W1:arg2]]: tensor<32x16xf32> {shardc.name = "w1", shardc.param}
// CHECK-SAME: %[[G:arg3]]: tensor<8x16xf32> {shardc.name = "z.grad"}
// CHECK-SAME: -> (tensor<8x16xf32>, tensor<16x32xf32>, tensor<32x16xf32>)
// CHECK-NEXT: %h = shardc.matmul %[[X]], %[[W0]]
// CHECK-NEXT: %u = shardc.relu %h
// CHECK-NEXT: %z = shardc.matmul %u, %[[W1]]
// dL/du = g W1^T
// CHECK-NEXT: %u.grad = shardc.dot_general %[[G]], %[[W1]] batch = [] x [], contract = [1] x [1] : (tensor<8x16xf32>, tensor<32x16xf32>) -> tensor<8x32xf32>
// dL/dW1 = u^T g
// CHECK-NEXT: %w1.grad = shardc.dot_general %u, %[[G]] batch = [] x [], contract = [0] x [0] : (tensor<8x32xf32>, tensor<8x16xf32>) -> tensor<32x16xf32>
// dL/dh = dL/du * (h > 0)
// CHECK-NEXT: %[[MASK:.*]] = shardc.step %h : tensor<8x32xf32>
// CHECK-NEXT: %h.grad = shardc.mul %u.grad, %[[MASK]] : tensor<8x32xf32>
// dL/dW0 = x^T dL/dh
// CHECK-NEXT: %w0.grad = shardc.dot_general %[[X]], %h.grad batch = [] x [], contract = [0] x [0] : (tensor<8x16xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
// CHECK-NEXT: return %z, %w0.grad, %w1.grad
// CHECK-NOT: shardc.

// ALL: -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<16x32xf32>, tensor<32x16xf32>)
// ALL: %h.grad = shardc.mul
// ALL: %x.grad = shardc.dot_general %h.grad, %arg1 batch = [] x [], contract = [1] x [1] : (tensor<8x32xf32>, tensor<16x32xf32>) -> tensor<8x16xf32>
// ALL: %w0.grad = shardc.dot_general %arg0, %h.grad
// ALL: return %z, %x.grad, %w0.grad, %w1.grad

shardc.mesh @mesh ["data"=2]
func.func @main(%x: tensor<8x16xf32> {shardc.name = "x"},
                %w0: tensor<16x32xf32> {shardc.name = "w0", shardc.param},
                %w1: tensor<32x16xf32> {shardc.name = "w1", shardc.param})
    -> tensor<8x16xf32> {
  %h = shardc.matmul %x, %w0 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32> loc("h")
  %u = shardc.relu %h : tensor<8x32xf32> loc("u")
  %z = shardc.matmul %u, %w1 : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32> loc("z")
  return %z : tensor<8x16xf32>
}

// The seed MLP's forward and hand-written backward (seed 000's SingleDevice
// with its `backward(grads)`) as one global shardc program, for
// bench/train_bench.py: batch 1024, model 1024, hidden 4096, f32.
//
//   forward:  z = x @ W0,  h = relu(z),  out = h @ W1
//   backward: dW1 = h^T @ dy,  dh = dy @ W1^T,  dz = dh * (z > 0),
//             dW0 = x^T @ dz
//
// Written by hand until the autodiff pass produces it. shardc has no compare
// or select op, so the mask (z > 0) is built from h = relu(z) alone:
// h / max(h, 2^-126) is exactly 1 where h >= 2^-126 (x / x is exact) and
// exactly 0 where h = 0; only a subnormal z in (0, 2^-126) would give a
// fraction instead of 1. The broadcast constant costs one fill per step (a
// scalar broadcast, so that each device fills only its own block).
//
// Megatron layout on the 1-D mesh (its size is set by the bench driver's
// --devices): W0 split by columns, W1 by rows, x and dy replicated. The
// partitioner then needs one all_reduce (of `out`) and no communication in
// the backward (the weight gradients stay sharded like their weights).
shardc.mesh @mesh ["model"=2]

func.func @main(
    %x: tensor<1024x1024xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>},
    %w0: tensor<1024x4096xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"}]>},
    %w1: tensor<4096x1024xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"model"}, {}]>},
    %dy: tensor<1024x1024xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>})
    -> (tensor<1024x1024xf32>, tensor<1024x4096xf32>, tensor<4096x1024xf32>) {
  // forward
  %z = shardc.matmul %x, %w0 : (tensor<1024x1024xf32>, tensor<1024x4096xf32>) -> tensor<1024x4096xf32>
  %h = shardc.relu %z : tensor<1024x4096xf32>
  %out = shardc.matmul %h, %w1 : (tensor<1024x4096xf32>, tensor<4096x1024xf32>) -> tensor<1024x1024xf32>
  // backward
  %dw1 = shardc.dot_general %h, %dy batch = [] x [], contract = [0] x [0] : (tensor<1024x4096xf32>, tensor<1024x1024xf32>) -> tensor<4096x1024xf32>
  %dh = shardc.dot_general %dy, %w1 batch = [] x [], contract = [1] x [1] : (tensor<1024x1024xf32>, tensor<4096x1024xf32>) -> tensor<1024x4096xf32>
  %tiny0 = shardc.constant dense<1.17549435e-38> : tensor<f32>
  %tiny = shardc.broadcast_in_dim %tiny0 dims = [] : (tensor<f32>) -> tensor<1024x4096xf32>
  %floor = shardc.max %h, %tiny : tensor<1024x4096xf32>
  %mask = shardc.div %h, %floor : tensor<1024x4096xf32>
  %dz = shardc.mul %dh, %mask : tensor<1024x4096xf32>
  %dw0 = shardc.dot_general %x, %dz batch = [] x [], contract = [0] x [0] : (tensor<1024x1024xf32>, tensor<1024x4096xf32>) -> tensor<1024x4096xf32>
  return %out, %dw0, %dw1 : tensor<1024x1024xf32>, tensor<1024x4096xf32>, tensor<4096x1024xf32>
}

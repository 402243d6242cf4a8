// The seed MLP (seed 000's SingleDevice): ReLU(x W0) W1, batch 1024, model
// 1024, hidden 4096, f32. bench/train_bench.py differentiates it with
// --shardc-autodiff (with respect to w0 and w1, as the seed's backward does)
// and times forward + backward on the threads backend:
//
//   forward:  z = x @ W0,  h = relu(z),  out = h @ W1
//   backward: dW1 = h^T @ dy,  dh = dy @ W1^T,  dz = dh * step(z),
//             dW0 = x^T @ dz
//
// Megatron layout on the 1-D mesh (its size is set by the bench driver's
// --devices): W0 split by columns, W1 by rows, x replicated. The partitioner
// then needs one all_reduce (of `out`) and no communication in the backward
// (the weight gradients stay sharded like their weights).
shardc.mesh @mesh ["model"=2]

func.func @main(
    %x: tensor<1024x1024xf32> {shardc.name = "x", shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>},
    %w0: tensor<1024x4096xf32> {shardc.name = "w0", shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"}]>},
    %w1: tensor<4096x1024xf32> {shardc.name = "w1", shardc.sharding = #shardc.sharding<@mesh, [{"model"}, {}]>})
    -> (tensor<1024x1024xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}) {
  %z = shardc.matmul %x, %w0 : (tensor<1024x1024xf32>, tensor<1024x4096xf32>) -> tensor<1024x4096xf32>
  %h = shardc.relu %z : tensor<1024x4096xf32>
  %out = shardc.matmul %h, %w1 : (tensor<1024x4096xf32>, tensor<4096x1024xf32>) -> tensor<1024x1024xf32>
  return %out : tensor<1024x1024xf32>
}

// RUN: shardc-opt --shardc-propagate %s | FileCheck %s
// Megatron MLP: w0 is split by columns over "model", so h and relu(h) are
// split by columns; w1 follows by rows (the contracting factor of the second
// matmul), and the output stays replicated as annotated (the partitioner
// all-reduces the partial sum into it).

shardc.mesh @mesh ["model"=4]

// CHECK-LABEL: func.func @megatron
// CHECK-SAME: %[[X:.*]]: tensor<16x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}
// CHECK-SAME: %[[W0:.*]]: tensor<64x256xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"}]>}
// CHECK-SAME: %[[W1:.*]]: tensor<256x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"model"}, {}]>}
// CHECK-SAME: -> (tensor<16x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>})
func.func @megatron(%x: tensor<16x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>},
                    %w0: tensor<64x256xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"}]>},
                    %w1: tensor<256x64xf32>)
    -> (tensor<16x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}) {
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"}]>}
  %h = shardc.matmul %x, %w0 : (tensor<16x64xf32>, tensor<64x256xf32>) -> tensor<16x256xf32>
  // CHECK: shardc.relu {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"}]>}
  %r = shardc.relu %h : tensor<16x256xf32>
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}
  %y = shardc.matmul %r, %w1 : (tensor<16x256xf32>, tensor<256x64xf32>) -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}

// The same with the bias and GELU of a transformer MLP: the bias of the
// column-split layer is split too, the bias of the row-split layer is not.
// CHECK-LABEL: func.func @megatron_bias
// CHECK-SAME: %{{.*}}: tensor<256xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"model"}]>}
// CHECK-SAME: %{{.*}}: tensor<256x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"model"}, {}]>}
// CHECK-SAME: %{{.*}}: tensor<64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}]>}
func.func @megatron_bias(%x: tensor<16x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>},
                         %w0: tensor<64x256xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"}]>},
                         %b0: tensor<256xf32>,
                         %w1: tensor<256x64xf32>,
                         %b1: tensor<64xf32>)
    -> (tensor<16x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}) {
  %h = shardc.matmul %x, %w0 : (tensor<16x64xf32>, tensor<64x256xf32>) -> tensor<16x256xf32>
  // CHECK: shardc.broadcast_in_dim {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"}]>}
  %bb0 = shardc.broadcast_in_dim %b0 dims = [1] : (tensor<256xf32>) -> tensor<16x256xf32>
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"}]>}
  %hb = shardc.add %h, %bb0 : tensor<16x256xf32>
  // CHECK: shardc.gelu {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"}]>}
  %g = shardc.gelu %hb : tensor<16x256xf32>
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}
  %y = shardc.matmul %g, %w1 : (tensor<16x256xf32>, tensor<256x64xf32>) -> tensor<16x64xf32>
  // CHECK: shardc.broadcast_in_dim {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}
  %bb1 = shardc.broadcast_in_dim %b1 dims = [1] : (tensor<64xf32>) -> tensor<16x64xf32>
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}
  %yb = shardc.add %y, %bb1 : tensor<16x64xf32>
  return %yb : tensor<16x64xf32>
}

// A two-layer Megatron MLP with a scalar loss, the program the pipeline
// tests (test/Transforms/*-pipeline.mlir) run every named pipeline on.
shardc.mesh @mesh ["model"=2]

func.func @main(%x: tensor<4x8xf32> {shardc.name = "x"},
                %w0: tensor<8x16xf32> {shardc.name = "w0", shardc.param,
                    shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"}]>},
                %w1: tensor<16x8xf32> {shardc.name = "w1", shardc.param})
    -> (tensor<f32> {shardc.sharding = #shardc.sharding<@mesh, []>}) {
  %h = shardc.matmul %x, %w0 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %r = shardc.relu %h : tensor<4x16xf32>
  %y = shardc.matmul %r, %w1 : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %loss = shardc.reduce_sum %y dims = [0, 1] : (tensor<4x8xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}

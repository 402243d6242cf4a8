shardc.mesh @a ["x"=2]
shardc.mesh @b ["x"=2]
func.func @main(%x: tensor<4x8xf32> {shardc.name = "x", shardc.sharding = #shardc.sharding<@a, [{"x"}, {}]>},
                %w: tensor<8x2xf32> {shardc.name = "w", shardc.param}) -> tensor<f32> {
  %y = shardc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %loss = shardc.reduce_sum %y dims = [0, 1] : (tensor<4x2xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}

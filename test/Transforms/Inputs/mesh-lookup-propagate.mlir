shardc.mesh @a ["x"=2]
shardc.mesh @b ["y"=2]
func.func @by_argument(%x: tensor<4x8xf32> {shardc.sharding = #shardc.sharding<@b, [{"y"}, {}]>},
                       %w: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = shardc.relu %w : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
func.func @by_constraint(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = shardc.sharding_constraint %x <@b, [{"y"}, {}]> : tensor<4x8xf32>
  %r = shardc.relu %w : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
func.func @by_module(%w: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = shardc.relu %w : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

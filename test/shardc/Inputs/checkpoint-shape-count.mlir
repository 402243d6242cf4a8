module {
  shardc.mesh @mesh ["data"=1]
  func.func @main(%w: tensor<2x4xf32> {shardc.name = "w", shardc.param, shardc.checkpoint_shape = array<i64: 3>}) -> tensor<2x4xf32> {
    %0 = shardc.relu %w : tensor<2x4xf32>
    return %0 : tensor<2x4xf32>
  }
}

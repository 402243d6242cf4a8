module {
  shardc.mesh @mesh ["data"=1]
  func.func @main(%w: tensor<2x4xf32> {shardc.name = "w", shardc.param, shardc.checkpoint_shape = array<i64: -8>}) -> tensor<2x4xf32> {
    return %w : tensor<2x4xf32>
  }
}

shardc.mesh @mesh ["d"=2]
func.func @main(%x: tensor<4xf32> {shardc.name = "x"}) -> tensor<f32> {
  %s = shardc.reduce_sum %x dims = [0] : (tensor<4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

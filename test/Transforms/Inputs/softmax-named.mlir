shardc.mesh @mesh ["model"=2]
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %p = shardc.softmax %x axis = 1 : tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}

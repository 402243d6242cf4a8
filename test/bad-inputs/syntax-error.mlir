shardc.mesh @mesh ["x"=2]
func.func @main(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = shardc.relu %a : tensor<4x4xf32
  return %0 : tensor<4x4xf32>
}

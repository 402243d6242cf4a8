func.func @main(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = shardc.add %a, %1 : tensor<4x4xf32>
  %1 = shardc.relu %0 : tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}

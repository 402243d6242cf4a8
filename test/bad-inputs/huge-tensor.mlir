func.func @main(%a: tensor<4611686018427387904x4xf32>) -> tensor<4611686018427387904x4xf32> {
  %0 = shardc.relu %a : tensor<4611686018427387904x4xf32>
  return %0 : tensor<4611686018427387904x4xf32>
}

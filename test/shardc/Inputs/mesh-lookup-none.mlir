func.func @main(%x: tensor<4x8xf32> {shardc.name = "x"}) -> tensor<4x8xf32> {
  %y = shardc.relu %x : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

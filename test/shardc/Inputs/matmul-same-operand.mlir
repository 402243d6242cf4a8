shardc.mesh @mesh ["x"=2, "y"=2]
func.func @main(%x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8x8xf32> {
  %y = shardc.matmul %x, %x : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

shardc.mesh @mesh ["a"=2]
func.func @main(%x: tensor<8x8xf32> {shardc.name = "x", shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}) -> tensor<8x8xf32> {
  %y = shardc.matmul %x, %x : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

shardc.mesh @mesh ["x"=4]
func.func @main(%a: tensor<10x4xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {}]>}) -> tensor<10x4xf32> {
  return %a : tensor<10x4xf32>
}

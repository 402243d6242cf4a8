shardc.mesh @mesh ["x"=2]
func.func @main(%a: tensor<4x4xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"q"}, {}]>}) -> tensor<4x4xf32> {
  return %a : tensor<4x4xf32>
}

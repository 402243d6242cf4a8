shardc.mesh @mesh ["x"=2, "y"=3]
func.func @main(%a: tensor<6x4xf32> {shardc.name = "a", shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {}], partial = {"x"}>})
    -> tensor<6x4xf32> {
  %r = shardc.relu %a : tensor<6x4xf32>
  return %r : tensor<6x4xf32>
}

shardc.mesh @mesh ["x"=2]
func.func @main(%a: tensor<8x4xf32> {shardc.name = "a", shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x4xf32> {
  %c = shardc.constant dense<0.5> : tensor<8x4xf32>
  %s = shardc.add %a, %c : tensor<8x4xf32>
  return %s : tensor<8x4xf32>
}

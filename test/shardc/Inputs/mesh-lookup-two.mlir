shardc.mesh @a ["x"=2]
shardc.mesh @b ["x"=2]
func.func @main(%x: tensor<4x8xf32> {shardc.name = "x", shardc.sharding = #shardc.sharding<@a, [{"x"}, {}]>}) -> tensor<4x8xf32> {
  %y = shardc.relu %x : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

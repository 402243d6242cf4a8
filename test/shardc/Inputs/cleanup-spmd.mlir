shardc.mesh @mesh ["x"=2]
func.func @main(%a: tensor<8x4xf32> {shardc.name = "a"}) -> tensor<4x4xf32> attributes {shardc.spmd} {
  %r = shardc.all_reduce %a on @mesh axes = ["x"] {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>} : tensor<8x4xf32>
  %s = shardc.all_slice %r on @mesh axes = ["x"] dim = 0 {shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {}]>} : tensor<8x4xf32> -> tensor<4x4xf32>
  %p = shardc.collective_permute %s on @mesh axes = ["x"] pairs = [[0, 0]] : tensor<4x4xf32>
  %q = shardc.collective_permute %p on @mesh axes = ["x"] pairs = [[0, 0], [1, 1]] : tensor<4x4xf32>
  return %q : tensor<4x4xf32>
}

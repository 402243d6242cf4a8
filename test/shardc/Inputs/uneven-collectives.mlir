// Collectives of a partitioned program on uneven pieces (partition-uneven.test).
shardc.mesh @mesh ["x"=4]
func.func @main(%a: tensor<4x2xf32>) -> tensor<13x2xf32> attributes {shardc.spmd} {
  %g = shardc.all_gather %a on @mesh axes = ["x"] dim = 1 : tensor<4x2xf32> -> tensor<4x7xf32>
  %r = shardc.reduce_scatter %g on @mesh axes = ["x"] dim = 1 : tensor<4x7xf32> -> tensor<4x2xf32>
  %s = shardc.all_gather %r on @mesh axes = ["x"] dim = 1 : tensor<4x2xf32> -> tensor<4x7xf32>
  %t = shardc.all_to_all %s on @mesh axes = ["x"] split_dim = 1 concat_dim = 0 : tensor<4x7xf32> -> tensor<13x2xf32>
  return %t : tensor<13x2xf32>
}

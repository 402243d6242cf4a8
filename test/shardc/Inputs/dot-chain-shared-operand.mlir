shardc.mesh @mesh ["a"=2, "b"=2]
func.func @main(%x: tensor<8x8xf32> {shardc.name = "x", shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}) -> tensor<8x8xf32> {
  %y = shardc.dot_general %x, %x batch = [] x [], contract = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %z = shardc.dot_general %x, %y batch = [] x [], contract = [0] x [1] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %w = shardc.dot_general %z, %x batch = [0] x [1], contract = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8xf32>
  %v = shardc.broadcast_in_dim %w dims = [0] : (tensor<8xf32>) -> tensor<8x8xf32>
  %u = shardc.add %v, %x : tensor<8x8xf32>
  return %u : tensor<8x8xf32>
}

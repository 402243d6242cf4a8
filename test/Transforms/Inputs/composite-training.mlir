shardc.mesh @mesh ["data"=2]
func.func @main(%x: tensor<4x8xf32> {shardc.name = "x", shardc.sharding = #shardc.sharding<@mesh, [{"data"}, {}]>}, %gamma: tensor<8xf32> {shardc.name = "gamma", shardc.param}, %beta: tensor<8xf32> {shardc.name = "beta", shardc.param}) -> tensor<4x8xf32> {
  %h = shardc.layer_norm %x, %gamma, %beta axes = [-1] epsilon = 1.0e-05 : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32> loc("h")
  %p = shardc.softmax %h axis = -1 : tensor<4x8xf32> loc("p")
  return %p : tensor<4x8xf32>
}

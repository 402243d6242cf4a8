shardc.mesh @mesh ["model"=2]
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %p = shardc.softmax %x axis = -1 {shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"}]>} : tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}
func.func @log_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %lp = shardc.log_softmax %x axis = 0 : tensor<4x8xf32>
  return %lp : tensor<4x8xf32>
}
func.func @layer_norm(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %ln = shardc.layer_norm %x, %g, %b axes = [-1] epsilon = 1.0e-05 : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  return %ln : tensor<2x4x8xf32>
}
func.func @rms_norm(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  %rn = shardc.rms_norm %x, %g axes = [1] epsilon = 1.0e-06 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %rn : tensor<4x8xf32>
}
func.func @mean(%x: tensor<2x4x8xf32>) -> tensor<4xf32> {
  %m = shardc.mean %x dims = [0, -1] : (tensor<2x4x8xf32>) -> tensor<4xf32>
  return %m : tensor<4xf32>
}
func.func @cross_entropy(%logits: tensor<2x4x16xf32>, %labels: tensor<2x4xi32>) -> tensor<f32> {
  %loss = shardc.cross_entropy %logits, %labels : (tensor<2x4x16xf32>, tensor<2x4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

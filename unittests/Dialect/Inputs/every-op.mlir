// One small instance of every shardc tensor op, one function each, for
// OpCompletenessTest: it runs each op's kernel and checks its gradient rule
// by finite differences. A tensor op registered without an instance here
// fails that test. Inputs are drawn from [0.5, 1.5] (inside every op's
// domain, away from relu's and step's kinks).
shardc.mesh @mesh ["x"=2]
func.func @relu(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.relu %x : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @gelu(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.gelu %x : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @exp(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.exp %x : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @log(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.log %x : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @neg(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.neg %x : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @tanh(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.tanh %x : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @sqrt(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.sqrt %x : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @rsqrt(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.rsqrt %x : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @sigmoid(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.sigmoid %x : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @step(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.step %x : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @add(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.add %a, %b : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @sub(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.sub %a, %b : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @mul(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.mul %a, %b : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @div(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.div %a, %b : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @max(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.max %a, %b : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @matmul(%a: tensor<2x3x4xf32>, %b: tensor<2x4x2xf32>) -> tensor<2x3x2xf32> {
  %y = shardc.matmul %a, %b : (tensor<2x3x4xf32>, tensor<2x4x2xf32>) -> tensor<2x3x2xf32>
  return %y : tensor<2x3x2xf32>
}
func.func @dot_general(%a: tensor<2x3x4xf32>, %b: tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  %y = shardc.dot_general %a, %b batch = [0] x [0], contract = [2] x [2]
      : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}
func.func @reduce_sum(%x: tensor<2x3x4xf32>) -> tensor<3xf32> {
  %y = shardc.reduce_sum %x dims = [0, 2] : (tensor<2x3x4xf32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}
func.func @reduce_max(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %y = shardc.reduce_max %x dims = [1] : (tensor<2x3xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %y = shardc.transpose %x permutation = [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %y : tensor<4x2x3xf32>
}
func.func @reshape(%x: tensor<2x6xf32>) -> tensor<3x4xf32> {
  %y = shardc.reshape %x : (tensor<2x6xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}
func.func @broadcast_in_dim(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %y = shardc.broadcast_in_dim %x dims = [1, 2] : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}
func.func @constant() -> tensor<2xf32> {
  %y = shardc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %y : tensor<2xf32>
}
func.func @sharding_constraint(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %y = shardc.sharding_constraint %x <@mesh, [{"x"}, {}]> : tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
func.func @iota() -> tensor<2x3xi32> {
  %y = shardc.iota dimension = 1 : tensor<2x3xi32>
  return %y : tensor<2x3xi32>
}
func.func @compare(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xi1> {
  %z = shardc.compare %x, %y direction = "LT" : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  return %z : tensor<2x3xi1>
}
func.func @select(%p: tensor<2x3xi1>, %x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %z = shardc.select %p, %x, %y : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %z : tensor<2x3xf32>
}
func.func @convert(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.convert %x dtype = f32 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @abs(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.abs %x : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @erf(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.erf %x : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @sin(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.sin %x : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @cos(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.cos %x : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @tan(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.tan %x : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @softplus(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.softplus %x : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @stop_gradient(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.stop_gradient %x : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @min(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.min %a, %b : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @pow(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = shardc.pow %a, %b : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @slice(%x: tensor<4x5xf32>) -> tensor<2x2xf32> {
  %y = shardc.slice %x start = [1, 0] limit = [3, 4] stride = [1, 2] : (tensor<4x5xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}
func.func @concatenate(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>) -> tensor<2x4xf32> {
  %y = shardc.concatenate %a, %b dimension = 1 : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
func.func @pad(%x: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<3x7xf32> {
  %y = shardc.pad %x, %v low = [1, 0] high = [0, 2] interior = [0, 1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x7xf32>
  return %y : tensor<3x7xf32>
}
// Composites: OpCompletenessTest expands each (DecomposableOpInterface),
// runs the expansion and compares it with a direct computation.
func.func @softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %y = shardc.softmax %x axis = -1 : tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}
func.func @log_softmax(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %y = shardc.log_softmax %x axis = 0 : tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}
func.func @layer_norm(%x: tensor<2x3x4xf32>, %g: tensor<3x4xf32>, %b: tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  %y = shardc.layer_norm %x, %g, %b axes = [-2, -1] epsilon = 1.0e-05 : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}
func.func @rms_norm(%x: tensor<2x6xf32>, %g: tensor<6xf32>) -> tensor<2x6xf32> {
  %y = shardc.rms_norm %x, %g axes = [1] epsilon = 1.0e-06 : (tensor<2x6xf32>, tensor<6xf32>) -> tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}
func.func @mean(%x: tensor<2x3x4xf32>) -> tensor<3xf32> {
  %y = shardc.mean %x dims = [0, 2] : (tensor<2x3x4xf32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}
func.func @cross_entropy(%logits: tensor<2x3x16xf32>, %labels: tensor<2x3xi32>) -> tensor<f32> {
  %y = shardc.cross_entropy %logits, %labels : (tensor<2x3x16xf32>, tensor<2x3xi32>) -> tensor<f32>
  return %y : tensor<f32>
}
// 16 rows: the test's integer inputs (ids in [0, 16)) are all in range.
func.func @gather(%t: tensor<16x3xf32>, %ids: tensor<2x2xi32>) -> tensor<2x2x3xf32> {
  %y = shardc.gather %t, %ids axis = 0 : (tensor<16x3xf32>, tensor<2x2xi32>) -> tensor<2x2x3xf32>
  return %y : tensor<2x2x3xf32>
}
func.func @scatter_add(%t: tensor<3x16xf32>, %ids: tensor<4xi64>, %u: tensor<3x4xf32>) -> tensor<3x16xf32> {
  %y = shardc.scatter_add %t, %ids, %u axis = 1 : (tensor<3x16xf32>, tensor<4xi64>, tensor<3x4xf32>) -> tensor<3x16xf32>
  return %y : tensor<3x16xf32>
}

// A parameter no dimension of which "data" divides: its state stays unsplit
// over "data", with a warning (the step is still right, only less sharded).
shardc.mesh @mesh ["data"=4]
// expected-warning @+1 {{zero-axes: the state of 'w' 'tensor<3x6xf32>' stays unsplit over 'data': no dimension divides evenly}}
func.func @uneven(%w: tensor<3x6xf32> {shardc.name = "w", shardc.param}) -> tensor<f32> {
  %0 = shardc.reduce_sum %w dims = [0, 1] : (tensor<3x6xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// The Adam update of one parameter as shardc's training step builds it
// (lib/Transforms/TrainingStep.cpp), on 4 Mi elements (16 MiB per tensor, a
// GPT block's projection weight): the input of shardc-fused-pass-bench
// (bench/README.md). %step_size is lr / (1 - beta1^t) and %root_correction
// sqrt(1 - beta2^t), scalars broadcast as in the step.
func.func @main(%p: tensor<4194304xf32>, %g: tensor<4194304xf32>,
                %m: tensor<4194304xf32>, %v: tensor<4194304xf32>,
                %step_size: tensor<f32>, %root_correction: tensor<f32>)
    -> (tensor<4194304xf32>, tensor<4194304xf32>, tensor<4194304xf32>) {
  %b1 = shardc.constant dense<0.9> : tensor<4194304xf32>
  %c1 = shardc.constant dense<0.1> : tensor<4194304xf32>
  %b2 = shardc.constant dense<0.999> : tensor<4194304xf32>
  %c2 = shardc.constant dense<0.001> : tensor<4194304xf32>
  %eps = shardc.constant dense<1.0e-8> : tensor<4194304xf32>
  %m0 = shardc.mul %b1, %m : tensor<4194304xf32>
  %m1 = shardc.mul %c1, %g : tensor<4194304xf32>
  %mn = shardc.add %m0, %m1 : tensor<4194304xf32>
  %v0 = shardc.mul %b2, %v : tensor<4194304xf32>
  %gg = shardc.mul %g, %g : tensor<4194304xf32>
  %v1 = shardc.mul %c2, %gg : tensor<4194304xf32>
  %vn = shardc.add %v0, %v1 : tensor<4194304xf32>
  %s = shardc.sqrt %vn : tensor<4194304xf32>
  %rc = shardc.broadcast_in_dim %root_correction dims = [] : (tensor<f32>) -> tensor<4194304xf32>
  %sc = shardc.div %s, %rc : tensor<4194304xf32>
  %d = shardc.add %sc, %eps : tensor<4194304xf32>
  %u = shardc.div %mn, %d : tensor<4194304xf32>
  %lr = shardc.broadcast_in_dim %step_size dims = [] : (tensor<f32>) -> tensor<4194304xf32>
  %lu = shardc.mul %lr, %u : tensor<4194304xf32>
  %pn = shardc.sub %p, %lu : tensor<4194304xf32>
  return %pn, %mn, %vn : tensor<4194304xf32>, tensor<4194304xf32>, tensor<4194304xf32>
}

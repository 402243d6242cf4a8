// Programs the training-step pass refuses, each with a diagnostic naming the
// function, the input or the axis.
// RUN: shardc-opt --shardc-training-step --split-input-file --verify-diagnostics %s
// RUN: not shardc-opt --shardc-training-step='zero-axes=nope' %S/training-step-sgd.mlir 2>&1 | FileCheck %s --check-prefix=AXIS
// RUN: not shardc-opt --shardc-training-step='optimizer=rmsprop' %S/training-step-sgd.mlir 2>&1 | FileCheck %s --check-prefix=KIND
// RUN: not shardc-opt --shardc-training-step='params=w,bias' %S/training-step-sgd.mlir 2>&1 | FileCheck %s --check-prefix=PARAMS
// RUN: shardc-opt --shardc-training-step='zero-axes=data' --split-input-file --verify-diagnostics %S/Inputs/training-step-zero-uneven.mlir

// AXIS: error: zero-axes: 'nope' is not an axis of mesh @mesh
// KIND: error: unknown optimizer 'rmsprop' (expected sgd or adam)
// PARAMS: error: autodiff: @main has no input named 'bias' (wrt); its inputs are: x, w

// expected-error @+1 {{the optimizer needs a function whose first result is the scalar loss; @vector's first result is 'tensor<4xf32>'}}
func.func @vector(%w: tensor<4xf32> {shardc.name = "w", shardc.param}) -> tensor<4xf32> {
  %0 = shardc.relu %w : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{the optimizer needs a function whose first result is the scalar loss; @nothing returns nothing}}
func.func @nothing(%w: tensor<4xf32> {shardc.name = "w", shardc.param}) {
  return
}

// -----

// expected-error @+1 {{the optimizer has no parameters to update: mark inputs of @noparams as parameters ("param": true, shardc.param) or name them (params=...)}}
func.func @noparams(%x: tensor<4xf32> {shardc.name = "x"}) -> tensor<f32> {
  %0 = shardc.reduce_sum %x dims = [0] : (tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// expected-error @+1 {{the optimizer step adds 'learning_rate', but @clash already has an input or result of that name}}
func.func @clash(%w: tensor<4xf32> {shardc.name = "w", shardc.param},
                 %lr: tensor<f32> {shardc.name = "learning_rate"}) -> tensor<f32> {
  %0 = shardc.reduce_sum %w dims = [0] : (tensor<4xf32>) -> tensor<f32>
  %1 = shardc.mul %0, %lr : tensor<f32>
  return %1 : tensor<f32>
}

// -----

// expected-error @+1 {{cannot differentiate @partitioned: it is already partitioned (shardc.spmd)}}
func.func @partitioned(%w: tensor<4xf32> {shardc.name = "w", shardc.param}) -> tensor<f32> attributes {shardc.spmd} {
  %0 = shardc.reduce_sum %w dims = [0] : (tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

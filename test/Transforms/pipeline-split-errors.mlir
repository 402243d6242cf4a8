// Programs and options --shardc-pipeline-split refuses, each with a
// diagnostic at the function or the mesh.
// RUN: shardc-opt --shardc-pipeline-split --split-input-file --verify-diagnostics %s
// RUN: not shardc-opt --shardc-pipeline-split="schedule=zigzag" %S/pipeline-split.mlir 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: not shardc-opt --shardc-pipeline-split="schedule=interleaved" %S/pipeline-split.mlir 2>&1 | FileCheck %s --check-prefix=INTERLEAVED
// RUN: not shardc-opt --shardc-pipeline-split="optimizer=rmsprop" %S/pipeline-split.mlir 2>&1 | FileCheck %s --check-prefix=OPTIMIZER
// RUN: not shardc-opt --shardc-pipeline-split="axis=stage" %S/pipeline-split.mlir 2>&1 | FileCheck %s --check-prefix=AXIS
// RUN: not shardc-opt --shardc-pipeline-split="microbatches=3" %S/pipeline-split.mlir 2>&1 | FileCheck %s --check-prefix=SPLIT

// SCHEDULE: error: unknown pipeline schedule 'zigzag' (expected gpipe or 1f1b)
// INTERLEAVED: error: the interleaved schedule is priced by `shardc estimate` only
// OPTIMIZER: error: unknown optimizer 'rmsprop' (expected sgd or adam)
// AXIS: error: the pipeline axis "stage" is not an axis of @mesh
// SPLIT: error: input 'x' ('tensor<8x4xf32>') cannot be split into 3 micro-batches along dim 0

shardc.mesh @mesh ["pipe"=2]
// expected-error @+1 {{pipelining trains a function whose first result is the scalar float loss; @vector has none}}
func.func @vector(%w: tensor<4xf32> {shardc.name = "w", shardc.param}) -> tensor<4xf32> {
  %0 = shardc.tanh %w : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

shardc.mesh @mesh ["pipe"=2]
// expected-error @+1 {{pipelining trains parameters: mark inputs of @noparams as parameters ("param": true)}}
func.func @noparams(%x: tensor<4xf32> {shardc.name = "x"}) -> tensor<f32> {
  %0 = shardc.reduce_sum %x dims = [0] : (tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

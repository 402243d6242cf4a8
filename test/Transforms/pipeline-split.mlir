// --shardc-pipeline-split cuts a loss function into one training-step
// program per stage of the pipeline axis: stage 0 computes w0's part of the
// forward, sends each micro-batch's activations to stage 1 and receives their
// cotangents back; stage 1 ends the forward, returns the loss and sends the
// cotangents. Each stage updates only its own parameter. The loss function
// stays as it was. The pipelined run (shardc pipeline) checks the numbers:
// test/shardc/pipeline-step.test.
// RUN: shardc-opt --shardc-pipeline-split="microbatches=2 schedule=gpipe" %s | FileCheck %s
// RUN: shardc-opt --shardc-pipeline-split="microbatches=2 schedule=1f1b optimizer=adam" %s | FileCheck %s --check-prefix=ADAM

shardc.mesh @mesh ["pipe"=2]
func.func @main(%x: tensor<8x4xf32> {shardc.name = "x"},
                %w0: tensor<4x4xf32> {shardc.name = "w0", shardc.param},
                %w1: tensor<4x4xf32> {shardc.name = "w1", shardc.param})
    -> tensor<f32> {
  %h = shardc.matmul %x, %w0 : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  %a = shardc.tanh %h : tensor<8x4xf32>
  %y = shardc.matmul %a, %w1 : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  %loss = shardc.reduce_sum %y dims = [0, 1] : (tensor<8x4xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// CHECK-LABEL: func.func @main(
// CHECK: shardc.matmul
// CHECK: shardc.tanh
// CHECK: shardc.matmul
// CHECK: return %{{.*}} : tensor<f32>
// CHECK-LABEL: func.func @pipeline_stage0(
// CHECK: shardc.send %{{.*}} on @mesh axis = "pipe" to = 1 {shardc.pipeline_action = "F0"}
// CHECK: shardc.send %{{.*}} on @mesh axis = "pipe" to = 1 {shardc.pipeline_action = "F1"}
// CHECK: shardc.recv on @mesh axis = "pipe" from = 1 {shardc.pipeline_action = "B0"}
// CHECK: shardc.recv on @mesh axis = "pipe" from = 1 {shardc.pipeline_action = "B1"}
// CHECK: return
// CHECK-LABEL: func.func @pipeline_stage1(
// CHECK: shardc.recv on @mesh axis = "pipe" from = 0 {shardc.pipeline_action = "F0"}
// CHECK: shardc.recv on @mesh axis = "pipe" from = 0 {shardc.pipeline_action = "F1"}
// CHECK: shardc.send %{{.*}} on @mesh axis = "pipe" to = 0 {shardc.pipeline_action = "B0"}
// CHECK: shardc.send %{{.*}} on @mesh axis = "pipe" to = 0 {shardc.pipeline_action = "B1"}
// CHECK: return

// ADAM-LABEL: func.func @pipeline_stage0(
// ADAM-SAME: w0.adam_m
// ADAM-NOT: w1.adam_m
// ADAM-LABEL: func.func @pipeline_stage1(
// ADAM-SAME: w1.adam_m

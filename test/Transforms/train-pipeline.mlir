// shardc-train-pipeline (propagate, optimizer, then the partition pipeline
// by default) is what `shardc compile --train-step=... --partition` and the
// engine's trainStep run; with propagate-first=false then=none it is the
// unsharded step `shardc train` checks against. shardc-opt runs it by name,
// in both spellings, and the CLI's flags and the named pipeline print the
// same.
// RUN: shardc-opt --pass-pipeline='builtin.module(shardc-train-pipeline{optimizer=sgd})' %S/Inputs/pipeline-mlp.mlir | FileCheck %s
// RUN: shardc-opt --shardc-train-pipeline='optimizer=sgd' %S/Inputs/pipeline-mlp.mlir | FileCheck %s
// RUN: shardc compile --train-step=sgd --partition %S/Inputs/pipeline-mlp.mlir > %t.flags
// RUN: shardc compile --pass-pipeline='builtin.module(shardc-train-pipeline{optimizer=sgd})' %S/Inputs/pipeline-mlp.mlir > %t.named
// RUN: diff %t.flags %t.named
// RUN: shardc compile --train-step=adam --zero-axes=model --propagate %S/Inputs/pipeline-mlp.mlir > %t.flags-adam
// RUN: shardc compile --pass-pipeline='shardc-train-pipeline{zero-axes=model then=propagate}' %S/Inputs/pipeline-mlp.mlir > %t.named-adam
// RUN: diff %t.flags-adam %t.named-adam
// RUN: shardc-opt --shardc-train-pipeline='optimizer=sgd propagate-first=false then=none' %S/Inputs/pipeline-mlp.mlir | FileCheck %s --check-prefix=GLOBAL

// CHECK-LABEL: func.func @main
// CHECK-SAME: %arg3: tensor<f32> {shardc.name = "learning_rate"
// CHECK-SAME: attributes {shardc.spmd}
// The loss's pending sum passes through reduce_sum: the scalar is reduced
// where it is returned.
// CHECK: %w0.next = shardc.sub %arg1
// CHECK: %w1.next = shardc.sub %arg2
// CHECK-NEXT: shardc.all_reduce {{.*}} : tensor<f32>
// CHECK-NEXT: return

// GLOBAL-LABEL: func.func @main
// GLOBAL-SAME: %arg1: tensor<8x16xf32> {shardc.name = "w0", shardc.param, shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"}]>}
// GLOBAL-SAME: %arg2: tensor<16x8xf32> {shardc.name = "w1", shardc.param}
// GLOBAL-NOT: shardc.all_reduce
// GLOBAL: %w0.next = shardc.sub %arg1
// GLOBAL: %w1.next = shardc.sub %arg2

// shardc-autodiff-pipeline (propagate, autodiff, then the partition
// pipeline by default) is what `shardc compile --autodiff --partition` and
// the engine's training program run: shardc-opt runs it by name, in both
// spellings, and the CLI's flags and the named pipeline print the same.
// RUN: shardc-opt --pass-pipeline='builtin.module(shardc-autodiff-pipeline)' %S/Inputs/pipeline-mlp.mlir | FileCheck %s
// RUN: shardc-opt --shardc-autodiff-pipeline %S/Inputs/pipeline-mlp.mlir | FileCheck %s
// RUN: shardc compile --autodiff --partition %S/Inputs/pipeline-mlp.mlir > %t.flags
// RUN: shardc compile --pass-pipeline='builtin.module(shardc-autodiff-pipeline)' %S/Inputs/pipeline-mlp.mlir > %t.named
// RUN: diff %t.flags %t.named
// With then=none and no propagation first it is `shardc compile --autodiff`.
// RUN: shardc compile --autodiff=w1 %S/Inputs/pipeline-mlp.mlir > %t.flags-global
// RUN: shardc compile --pass-pipeline='shardc-autodiff-pipeline{wrt=w1 propagate-first=false then=none}' %S/Inputs/pipeline-mlp.mlir > %t.named-global
// RUN: diff %t.flags-global %t.named-global
// RUN: FileCheck %s --check-prefix=GLOBAL < %t.named-global
// A bad option value is an error.
// RUN: not shardc-opt --pass-pipeline='builtin.module(shardc-autodiff-pipeline{then=bogus})' %S/Inputs/pipeline-mlp.mlir 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: func.func @main
// CHECK-SAME: %arg3: tensor<f32> {shardc.name = "output0.grad", shardc.sharding = #shardc.sharding<@mesh, []>}
// CHECK-SAME: attributes {shardc.spmd}
// The loss's pending sum passes through reduce_sum: the scalar is reduced
// where it is returned.
// CHECK: %w1.grad = shardc.dot_general {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"model"}, {}]>}
// CHECK: %w0.grad = shardc.dot_general {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"}]>}
// CHECK-NEXT: %[[L:.*]] = shardc.all_reduce {{.*}} : tensor<f32>
// CHECK-NEXT: return %[[L]], %w0.grad, %w1.grad

// GLOBAL-LABEL: func.func @main
// GLOBAL-NOT: shardc.spmd
// GLOBAL: %w1.grad = shardc.dot_general
// GLOBAL-NOT: %w0.grad
// GLOBAL: return

// BAD: Cannot find option named 'bogus'

// shardc-partition-pipeline (propagate, partition, func.func(cleanup)) is
// what `shardc compile --partition`, `shardc simulate`, the engine and the
// benchmarks run: shardc-opt runs it by name, in both spellings, and the
// CLI's flag and the named pipeline print the same program.
// RUN: shardc-opt --pass-pipeline='builtin.module(shardc-partition-pipeline)' %S/Inputs/pipeline-mlp.mlir | FileCheck %s
// RUN: shardc-opt --shardc-partition-pipeline %S/Inputs/pipeline-mlp.mlir | FileCheck %s
// RUN: shardc compile --partition %S/Inputs/pipeline-mlp.mlir > %t.flags
// RUN: shardc compile --pass-pipeline='builtin.module(shardc-partition-pipeline)' %S/Inputs/pipeline-mlp.mlir > %t.named
// RUN: diff %t.flags %t.named

// CHECK-LABEL: func.func @main
// CHECK-SAME: %arg1: tensor<8x8xf32> {shardc.name = "w0", shardc.param, shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"}]>}
// CHECK-SAME: %arg2: tensor<8x8xf32> {shardc.name = "w1", shardc.param, shardc.sharding = #shardc.sharding<@mesh, [{"model"}, {}]>}
// CHECK-SAME: attributes {shardc.spmd}
// CHECK-NEXT: %[[H:.*]] = shardc.matmul %arg0, %arg1 {{.*}} -> tensor<4x8xf32>
// CHECK-NEXT: %[[R:.*]] = shardc.relu %[[H]]
// CHECK-NEXT: %[[Y:.*]] = shardc.matmul %[[R]], %arg2 {shardc.sharding = #shardc.sharding<@mesh, [{}, {}], partial = {"model"}>}
// The sum passes through reduce_sum: the scalar is reduced, not y.
// CHECK-NEXT: %[[L:.*]] = shardc.reduce_sum %[[Y]] dims = [0, 1] {shardc.sharding = #shardc.sharding<@mesh, [], partial = {"model"}>}
// CHECK-NEXT: %[[S:.*]] = shardc.all_reduce %[[L]] on @mesh axes = ["model"]
// CHECK-NEXT: return %[[S]] : tensor<f32>

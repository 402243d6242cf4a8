// shardc-propagate-pipeline is what `shardc compile --propagate` (and
// `shardc explain`, with explain=true) runs: shardc-opt runs it by name, in
// both spellings, and the CLI's flag and the named pipeline print the same.
// RUN: shardc-opt --pass-pipeline='builtin.module(shardc-propagate-pipeline)' %S/Inputs/pipeline-mlp.mlir | FileCheck %s
// RUN: shardc-opt --shardc-propagate-pipeline %S/Inputs/pipeline-mlp.mlir | FileCheck %s
// RUN: shardc compile --propagate --explain %S/Inputs/pipeline-mlp.mlir > %t.flags 2>&1
// RUN: shardc compile --pass-pipeline='shardc-propagate-pipeline{explain=true}' %S/Inputs/pipeline-mlp.mlir > %t.named 2>&1
// RUN: diff %t.flags %t.named
// RUN: FileCheck %s --check-prefix=EXPLAIN < %t.named

// CHECK-LABEL: func.func @main
// CHECK-SAME: {shardc.name = "w1", shardc.param, shardc.sharding = #shardc.sharding<@mesh, [{"model"}, {}]>}
// CHECK-NOT: shardc.spmd
// CHECK: shardc.matmul %arg0, %arg1 {shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"}]>}
// CHECK: shardc.relu %{{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"}]>}
// CHECK: shardc.matmul %{{.*}}, %arg2 {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}
// CHECK-NOT: shardc.all_reduce
// CHECK: return

// EXPLAIN: remark:

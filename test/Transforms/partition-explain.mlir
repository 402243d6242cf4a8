// RUN: shardc-opt %s --split-input-file --shardc-propagate --shardc-partition=explain=true | FileCheck %s
// RUN: shardc-opt %s --split-input-file --shardc-propagate --shardc-partition=explain=true | shardc-opt --split-input-file | FileCheck %s
// RUN: shardc-opt %s --split-input-file --shardc-propagate --shardc-partition | FileCheck %s --check-prefix=PLAIN
// RUN: shardc-opt %s --split-input-file --verify-diagnostics --shardc-cleanup 2>&1 | FileCheck %s --check-prefix=CLEANUP

// With explain=true every collective carries the record of its reshard
// (ReshardRecord.h), which prints and parses back; without it, none does.
// The Megatron MLP's all_reduce is for the output's annotation.
shardc.mesh @mesh ["model"=4]
func.func @mlp(%x: tensor<16x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>},
               %w0: tensor<64x256xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"}]>},
               %w1: tensor<256x64xf32>)
    -> (tensor<16x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}) {
  %h = shardc.matmul %x, %w0 : (tensor<16x64xf32>, tensor<64x256xf32>) -> tensor<16x256xf32>
  %r = shardc.relu %h : tensor<16x256xf32>
  %y = shardc.matmul %r, %w1 : (tensor<16x256xf32>, tensor<256x64xf32>) -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}
// CHECK: shardc.all_reduce {{.*}} {shardc.reshard_for = {from = #shardc.sharding<@mesh, [{}, {}], partial = {"model"}>, index = 0 : i64, kind = "output"
// CHECK-SAME: label = "chosen"
// CHECK-SAME: to = #shardc.sharding<@mesh, [{}, {}]>
// PLAIN-NOT: reshard_for
// PLAIN: {{^}}// -----

// -----

// Cleanup turns the slice of an all_reduce into a reduce_scatter and keeps
// the record (the slice's: its consumer is the one the scatter serves).
shardc.mesh @mesh ["model"=4]
func.func @f(%p: tensor<16x64xf32>) -> tensor<4x64xf32> attributes {shardc.spmd} {
  %r = shardc.all_reduce %p on @mesh axes = ["model"] {shardc.reshard_for = {kind = "constraint", value = "p"}} : tensor<16x64xf32>
  %s = shardc.all_slice %r on @mesh axes = ["model"] dim = 0 {shardc.reshard_for = {kind = "operand", value = "q"}} : tensor<16x64xf32> -> tensor<4x64xf32>
  return %s : tensor<4x64xf32>
}
// CLEANUP: shardc.reduce_scatter {{.*}} {shardc.reshard_for = {kind = "operand", value = "q"}}

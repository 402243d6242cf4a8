// Shardy's user-priority propagation tests, as shardc graphs.
// Source: openxla/shardy, shardy/dialect/sdy/transforms/propagation/test/
// user_priority_propagation.mlir; each case names the test function it
// translates. Conventions as in shardy-op-priority.mlir. shardc has no
// per-annotation priorities (every user annotation ranks the same), so only
// the test without them translates.
//
// Not translated:
//   skipped_priorities: per-annotation priorities.
//   arg_lower_priority_than_return_value: per-annotation priorities.
//   arg_lower_priority_than_return_value_with_replicated: per-annotation priorities.
//   arg_higher_priority_than_return_value: per-annotation priorities.
//   result_lower_priority_than_arg: per-annotation priorities.
//   result_higher_priority_than_arg: per-annotation priorities.
//   dim_with_lower_priority_gets_further_sharded_by_higher: per-annotation priorities.
//   different_priorities_with_closed_empty_dim: per-annotation priorities.
//   open_empty_dim_with_priority: per-annotation priorities.
//   different_priorities_from_args: per-annotation priorities.
//   different_priorities_from_ops: per-annotation priorities.
//   different_sharding_constraint_priorities: per-annotation priorities.
//   propagate_to_multi_result_op_with_priorities: per-annotation priorities.
//   propagate_from_multi_result_op_with_priorities: per-annotation priorities.
//   manual_computation_shardings_with_priority: manual computations.
//   manual_computation_sharding_with_low_priority: manual computations.
//   user_based_and_op_based: per-annotation priorities.
//   maximal_sharding_no_results: maximal meshes.
//   unreduced_custom_reduction_op: per-annotation priorities (and a max reduction left pending).

// RUN: split-file %s %t
// RUN: shardc-opt --shardc-propagate %t/no_priorities.mlir | FileCheck %t/no_priorities.mlir
// RUN: shardc simulate %t/no_priorities.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM

// SIM: {{ OK$}}

//--- no_priorities.mlir
// @no_priorities: x's layout reaches everything.
shardc.mesh @mesh ["a"=2, "b"=2, "c"=2]
// CHECK-LABEL: func.func @no_priorities(
// CHECK-SAME: %arg1: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}
// CHECK-SAME: %arg2: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}
// CHECK-SAME: -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>})
func.func @no_priorities(%x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>},
                         %y: tensor<8x8xf32>, %z: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}
  %s = shardc.add %x, %y : tensor<8x8xf32>
  // CHECK: shardc.div {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}
  %d = shardc.div %s, %z : tensor<8x8xf32>
  return %d : tensor<8x8xf32>
}

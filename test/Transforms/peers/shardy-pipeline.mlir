// Shardy's propagation pipeline tests, as shardc graphs.
// Source: openxla/shardy, shardy/dialect/sdy/transforms/propagation/test/
// propagation_pipeline.mlir; each case names the test function it
// translates (the call-graph tests, all named @main, by their "test:"
// comment). Conventions as in shardy-op-priority.mlir.
//
// Not translated:
//   user_priorities: per-annotation priorities.
//   add_extra_sharding_constraint_for_incompatible_group_member_shardings: sharding groups.
//   sharding_group_on_value_with_sharding_constraint: sharding groups.
//   sharding_group_on_while_result: sharding groups.
//   maximal_sharding_no_results: maximal meshes.
//   replicated_sharding_no_results: custom calls (with side effects).
//   manual_computation_with_tokens: manual computations.
//   do_not_propagate_manual_axes_to_manual_computation: manual computations.
//   dot_general_with_unreduced_result: open dims that grow (on a dot_general left pending).
//   dot_general_with_unreduced_result_fully_delayed: open dims that grow (on a dot_general left pending).
//   dot_general_with_unreduced_result_partially_delayed: open dims that grow (on a dot_general left pending).
//   case_single_result_func_args_single_sharding: control flow.
//   case_token_result_skipped: control flow.
//   case_scalars: control flow.
//   case_single_result_func_args_conflict: control flow.
//   case_single_result_func_first_sharding_best_ignored: control flow.
//   case_multiple_results_different_sharding: control flow.
//   case_multiple_dim_most_compatible: control flow.
//   case_multiple_results_different_sharding_conflicts: control flow.
//   case_closed_sharding: control flow.
//   case_not_func_args_or_directly_returned: control flow.
//   case_propagate_from_func_result: control flow.
//   case_propagate_from_case_op_result: control flow.
//   case_propagate_mulitple_uses: control flow.
//   optimization_barrier: ops shardc lacks (optimization_barrier).
//   while_func_return: control flow.
//   while_func_return_directly_on_func_operand: control flow.
//   while_result_use: control flow.
//   while_body_propagate_block_arg: control flow.
//   while_body_token_block_arg_skipped: control flow.
//   while_body_propagate_return_op: control flow.
//   while_body_non_func_operand_result_use: control flow.
//   while_func_operand: control flow.
//   call_argument_sharding_propagation: calls.
//   call_result_sharding_propagation: calls.
//   call_inside_out_propagation: calls.
//   call_simple_non_flat: calls.
//   call_non_flat_from_main: calls.
//   call_non_flat_from_foo: calls.
//   call_non_flat_two_bar_shardings: calls.
//   call_unreduced_result: calls.

// RUN: split-file %s %t
// RUN: shardc-opt --shardc-propagate %t/split_constants_different_sharding.mlir | FileCheck %t/split_constants_different_sharding.mlir
// RUN: shardc simulate %t/split_constants_different_sharding.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc simulate %t/split_constants_different_sharding.peer.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/sharding_constraint_applied.mlir | FileCheck %t/sharding_constraint_applied.mlir
// RUN: shardc simulate %t/sharding_constraint_applied.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc simulate %t/sharding_constraint_applied.peer.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/sharding_constraint_replaced_with_reshard.mlir | FileCheck %t/sharding_constraint_replaced_with_reshard.mlir
// RUN: shardc simulate %t/sharding_constraint_replaced_with_reshard.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc simulate %t/sharding_constraint_replaced_with_reshard.peer.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/size_zero_dim_sharded.mlir | FileCheck %t/size_zero_dim_sharded.mlir
// RUN: shardc simulate %t/size_zero_dim_sharded.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/inlined_mesh.mlir | FileCheck %t/inlined_mesh.mlir
// RUN: shardc simulate %t/inlined_mesh.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/dot_lhs_from_broadcast_and_large_rhs.mlir | FileCheck %t/dot_lhs_from_broadcast_and_large_rhs.mlir
// RUN: shardc simulate %t/dot_lhs_from_broadcast_and_large_rhs.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM

// Every partitioned program matches the unsharded one on every device.
// SIM: {{ OK$}}

//--- split_constants_different_sharding.mlir
// @split_constants_different_sharding: one constant is both operands of a
// dot and an output. Shardy gives each use its own copy and sharding;
// shardc's constant has one sharding.
shardc.mesh @mesh ["a"=2, "b"=2, "c"=2]
// CHECK-LABEL: func.func @split_constants_different_sharding(
func.func @split_constants_different_sharding(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>})
    -> (tensor<8x16xf32>, tensor<8x8xf32>) {
  // CHECK: shardc.constant {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %k = shardc.constant dense<1.0> : tensor<8x16xf32>
  // CHECK: shardc.dot_general {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}
  %d = shardc.dot_general %k, %k batch = [] x [], contract = [1] x [1] : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x8xf32>
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}
  %s = shardc.add %d, %x : tensor<8x8xf32>
  return %k, %s : tensor<8x16xf32>, tensor<8x8xf32>
}

//--- split_constants_different_sharding.peer.mlir
// Shardy splits the constant into three copies: rows over "a", rows over
// "b", replicated (shardc's constant is one value, split as the dot's lhs).
shardc.mesh @mesh ["a"=2, "b"=2, "c"=2]
func.func @split_constants_different_sharding(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>})
    -> (tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>},
        tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}) {
  %k0 = shardc.constant {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>} dense<1.0> : tensor<8x16xf32>
  %k1 = shardc.constant {shardc.sharding = #shardc.sharding<@mesh, [{"b"}, {}]>} dense<1.0> : tensor<8x16xf32>
  %k2 = shardc.constant {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>} dense<1.0> : tensor<8x16xf32>
  %d = shardc.dot_general %k0, %k1 batch = [] x [], contract = [1] x [1] {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x8xf32>
  %s = shardc.add %d, %x {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>} : tensor<8x8xf32>
  return %k2, %s : tensor<8x16xf32>, tensor<8x8xf32>
}

//--- sharding_constraint_applied.mlir
// @sharding_constraint_applied: the add's only user pins it replicated.
// Shardy moves the constraint onto the add; shardc takes x's split forward
// first and gathers the sum.
shardc.mesh @mesh ["a"=2, "b"=2, "c"=2]
// CHECK-LABEL: func.func @sharding_constraint_applied(
func.func @sharding_constraint_applied(%x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>})
    -> tensor<8x8xf32> {
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %s = shardc.add %x, %x : tensor<8x8xf32>
  %c = shardc.sharding_constraint %s <@mesh, [{}, {}]> : tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

//--- sharding_constraint_applied.peer.mlir
// Shardy moves the constraint onto the add, shardc takes x's split forward to
// it: either way an 8x8 value is gathered once.
shardc.mesh @mesh ["a"=2, "b"=2, "c"=2]
func.func @sharding_constraint_applied(%x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>})
    -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}) {
  %s = shardc.add %x, %x {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>} : tensor<8x8xf32>
  %c = shardc.sharding_constraint %s <@mesh, [{}, {}]> : tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

//--- sharding_constraint_replaced_with_reshard.mlir
// @sharding_constraint_replaced_with_reshard: x is returned both as is and
// constrained. Shardy leaves x replicated; shardc takes the constraint back
// to x.
shardc.mesh @mesh ["a"=2, "b"=2, "c"=2]
// CHECK-LABEL: func.func @sharding_constraint_replaced_with_reshard(
// CHECK-SAME: %arg0: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}
func.func @sharding_constraint_replaced_with_reshard(%x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %c = shardc.sharding_constraint %x <@mesh, [{"a"}, {"b"}]> : tensor<8x8xf32>
  return %x, %c : tensor<8x8xf32>, tensor<8x8xf32>
}

//--- sharding_constraint_replaced_with_reshard.peer.mlir
// Shardy keeps x replicated and slices it for the constraint; shardc
// splits x itself. Neither moves data.
shardc.mesh @mesh ["a"=2, "b"=2, "c"=2]
func.func @sharding_constraint_replaced_with_reshard(%x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>})
    -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>},
        tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}) {
  %c = shardc.sharding_constraint %x <@mesh, [{"a"}, {"b"}]> : tensor<8x8xf32>
  return %x, %c : tensor<8x8xf32>, tensor<8x8xf32>
}

//--- size_zero_dim_sharded.mlir
// @size_zero_dim_sharded: the add's annotation on an empty dim goes back to
// both operands.
shardc.mesh @mesh ["a"=2, "b"=2, "c"=2]
// CHECK-LABEL: func.func @size_zero_dim_sharded(
// CHECK-SAME: %arg0: tensor<8x0xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}
// CHECK-SAME: %arg1: tensor<8x0xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}
func.func @size_zero_dim_sharded(%x: tensor<8x0xf32>, %y: tensor<8x0xf32>) -> tensor<8x0xf32> {
  %s = shardc.add %x, %y {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>} : tensor<8x0xf32>
  return %s : tensor<8x0xf32>
}

//--- inlined_mesh.mlir
// @inlined_mesh: the mesh written inline in the annotation (here a named
// mesh: shardc has no inline meshes); as basic_propagation's @simple.
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @inlined_mesh(
// CHECK-SAME: %arg1: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}
// CHECK-SAME: %arg2: tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"b"}, {}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>})
func.func @inlined_mesh(%x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>},
                        %y: tensor<8x8xf32>, %w: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}
  %s = shardc.add %x, %y : tensor<8x8xf32>
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %d = shardc.matmul %s, %w : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %d : tensor<8x16xf32>
}

//--- dot_lhs_from_broadcast_and_large_rhs.mlir
// @dot_lhs_from_broadcast_and_large_rhs: the dot's lhs is a broadcast of 4
// floats split over "a", its rhs a [1024,1024] weight split by rows. The
// weight's split must win: the broadcast takes it back along the
// contraction, and only the small vector is gathered.
shardc.mesh @mesh ["a"=2]
// CHECK-LABEL: func.func @dot_lhs_from_broadcast_and_large_rhs(
// CHECK-SAME: -> (tensor<4x1024xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>})
func.func @dot_lhs_from_broadcast_and_large_rhs(
    %v: tensor<4xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}]>},
    %w: tensor<1024x1024xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}) -> tensor<4x1024xf32> {
  // CHECK: shardc.broadcast_in_dim {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}
  %b = shardc.broadcast_in_dim %v dims = [0] : (tensor<4xf32>) -> tensor<4x1024xf32>
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}
  %d = shardc.matmul %b, %w : (tensor<4x1024xf32>, tensor<1024x1024xf32>) -> tensor<4x1024xf32>
  // CHECK: shardc.neg {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}
  %n = shardc.neg %d : tensor<4x1024xf32>
  return %n : tensor<4x1024xf32>
}

// Shardy's basic propagation tests, as shardc graphs.
// Source: openxla/shardy, shardy/dialect/sdy/transforms/propagation/test/
// basic_propagation.mlir; each case names the test function it translates.
// Conventions as in shardy-op-priority.mlir: open dims that end as they
// began are closed, an open annotation without axes is no annotation, and
// <case>.peer.mlir holds Shardy's plan where shardc's differs.
//
// Not translated:
//   closed_dim: open dims that grow (next to a closed empty dim: [{}, {?}]).
//   propagate_to_sharding_constraint: open dims that grow (an open sharding_constraint).
//   propagation_barrier_backward_just_arg_sharding: propagation barriers.
//   propagation_barrier_backward_just_result_sharding: propagation barriers.
//   propagation_barrier_backward_two_shardings: propagation barriers.
//   propagation_barrier_backward_multiple_uses: propagation barriers.
//   propagation_barrier_forward_just_arg_sharding: propagation barriers.
//   propagation_barrier_forward_just_result_sharding: propagation barriers.
//   propagation_barrier_forward_two_shardings: propagation barriers.
//   propagation_barrier_forward_multiple_uses: propagation barriers.
//   propagation_barrier_none_two_shardings: propagation barriers.
//   multi_axes: open dims that grow ({"b", ?} to {"b", "a"}).
//   multi_axes_some_axes_incompatible: open dims that grow.
//   multi_axes_all_axes_incompatible: open dims that grow (and an explicitly replicated axis).
//   multi_axes_compatible_prefix: sub-axes.
//   pointwise_size_one_axes: open dims that grow.
//   slice_then_concat: ops shardc lacks (slice, concatenate).
//   cx64_combine_used_then_rng_bit_generator: custom calls (and rng_bit_generator).
//   reshape_split_dim_single_axis_shards_both_factors: sub-axes.
//   reshape_split_dim_twice: sub-axes.
//   reshape_split_dim_then_merge: sub-axes.
//   propagate_full_to_sub_axis: sub-axes.
//   single_factor_non_divisible: uneven dims.
//   single_factor_overflows: uneven dims.
//   sub_axes_cannot_coexist: sub-axes.
//   minor_most_factor_non_divisible: uneven dims (split by sub-axes).
//   minor_most_factor_overflows: uneven dims (split by sub-axes).
//   minor_most_factor_overflows_multiple_axes: uneven dims (split by sub-axes).
//   non_minor_most_factor_non_divisible: uneven dims.
//   non_minor_most_factor_non_divisible_multiple_axes: uneven dims.
//   non_minor_most_factor_non_divisible_sub_axis: uneven dims.
//   non_minor_most_factor_non_divisible_other_open_dim_unchanged: uneven dims.
//   non_minor_most_factor_non_divisible_same_open_dim_unchanged: uneven dims.
//   merge_dim_minor_most_factor_non_divisible: uneven dims.
//   merge_dim_non_minor_most_factor_non_divisible: uneven dims.
//   merge_dim_non_minor_most_factor_non_divisible_multiple_axes: uneven dims.
//   merge_dim_non_minor_most_factor_propagate_sub_axis: sub-axes.
//   merge_dim_non_minor_most_factor_propagate_sub_axis_and_concat: sub-axes.
//   custom_call_custom_rule: custom calls (with their own rule).
//   blocked_propagation_factor: custom calls (with their own rule).
//   direct_arg_return_both_updated: open dims that grow.
//   func_result_intermediate_op_both_updated: open dims that grow.
//   token_func_output_skipped: tokens.
//   dynamic_shaped_func_output_skipped: dynamic shapes.
//   empty_mesh_replaced_closed_dim_respected: more than one mesh.
//   empty_mesh_all_dims_closed: more than one mesh.
//   maximal_mesh_not_replaced: maximal meshes.
//   do_not_propagate_along_maximal_mesh: maximal meshes.
//   source_result_different_meshes_not_propagated: more than one mesh.
//   operands_different_meshes_not_propagated: more than one mesh.
//   different_meshes_and_empty_mesh_not_propagated: more than one mesh.
//   different_mesh_names_same_mesh_propagated: more than one mesh.
//   scalar_block_arg_with_sharding_constraint: ops shardc lacks (scatter).
//   does_propagate_to_empty_mesh: more than one mesh.
//   does_not_propagate_to_empty_mesh_with_closed_sharding: more than one mesh.
//   propagate_to_empty_mesh_with_partially_open_sharding: more than one mesh.
//   main: calls (@main calls @foo).

// RUN: split-file %s %t
// RUN: shardc-opt --shardc-propagate %t/simple.mlir | FileCheck %t/simple.mlir
// RUN: shardc simulate %t/simple.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/pointwise_size_zero_dim.mlir | FileCheck %t/pointwise_size_zero_dim.mlir
// RUN: shardc simulate %t/pointwise_size_zero_dim.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/pointwise_size_zero_dim_axis_size_1.mlir | FileCheck %t/pointwise_size_zero_dim_axis_size_1.mlir
// RUN: shardc simulate %t/pointwise_size_zero_dim_axis_size_1.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/propagate_to_multi_result_op.mlir | FileCheck %t/propagate_to_multi_result_op.mlir
// RUN: shardc simulate %t/propagate_to_multi_result_op.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/propagate_from_multi_result_op.mlir | FileCheck %t/propagate_from_multi_result_op.mlir
// RUN: shardc simulate %t/propagate_from_multi_result_op.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/propagate_from_sharding_constraint.mlir | FileCheck %t/propagate_from_sharding_constraint.mlir
// RUN: shardc simulate %t/propagate_from_sharding_constraint.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/multi_axes_conflict.mlir | FileCheck %t/multi_axes_conflict.mlir
// RUN: shardc simulate %t/multi_axes_conflict.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc simulate %t/multi_axes_conflict.peer.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/reshape_size_one_axes.mlir | FileCheck %t/reshape_size_one_axes.mlir
// RUN: shardc simulate %t/reshape_size_one_axes.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc simulate %t/reshape_size_one_axes.peer.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/reshape_merge_dim_only_major_most_factor_sharded.mlir | FileCheck %t/reshape_merge_dim_only_major_most_factor_sharded.mlir
// RUN: shardc simulate %t/reshape_merge_dim_only_major_most_factor_sharded.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/reshape_merge_dim_major_factor_fully_sharded.mlir | FileCheck %t/reshape_merge_dim_major_factor_fully_sharded.mlir
// RUN: shardc simulate %t/reshape_merge_dim_major_factor_fully_sharded.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/reshape_merge_dim_major_factor_partially_sharded.mlir | FileCheck %t/reshape_merge_dim_major_factor_partially_sharded.mlir
// RUN: shardc simulate %t/reshape_merge_dim_major_factor_partially_sharded.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/reshape_split_dim_single_axis_fully_shards_major_factor.mlir | FileCheck %t/reshape_split_dim_single_axis_fully_shards_major_factor.mlir
// RUN: shardc simulate %t/reshape_split_dim_single_axis_fully_shards_major_factor.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/reshape_split_dim_only_major_most_factor_sharded.mlir | FileCheck %t/reshape_split_dim_only_major_most_factor_sharded.mlir
// RUN: shardc simulate %t/reshape_split_dim_only_major_most_factor_sharded.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/reshape_split_and_merge_dims.mlir | FileCheck %t/reshape_split_and_merge_dims.mlir
// RUN: shardc simulate %t/reshape_split_and_merge_dims.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/reshape_size_zero_dim.mlir | FileCheck %t/reshape_size_zero_dim.mlir
// RUN: shardc simulate %t/reshape_size_zero_dim.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/direct_arg_return_used_axes.mlir | FileCheck %t/direct_arg_return_used_axes.mlir
// RUN: shardc simulate %t/direct_arg_return_used_axes.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/direct_arg_return_prefix_axes.mlir | FileCheck %t/direct_arg_return_prefix_axes.mlir
// RUN: shardc simulate %t/direct_arg_return_prefix_axes.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/direct_arg_return_sharding_on_arg.mlir | FileCheck %t/direct_arg_return_sharding_on_arg.mlir
// RUN: shardc simulate %t/direct_arg_return_sharding_on_arg.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/direct_arg_return_sharding_on_result.mlir | FileCheck %t/direct_arg_return_sharding_on_result.mlir
// RUN: shardc simulate %t/direct_arg_return_sharding_on_result.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/func_out_sharding.mlir | FileCheck %t/func_out_sharding.mlir
// RUN: shardc simulate %t/func_out_sharding.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/multiple_func_results.mlir | FileCheck %t/multiple_func_results.mlir
// RUN: shardc simulate %t/multiple_func_results.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM

// Every partitioned program matches the unsharded one on every device.
// SIM: {{ OK$}}

//--- simple.mlir
// @simple: an add takes x's layout, the dot its rows, y and w follow.
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @simple(
// CHECK-SAME: %arg0: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}
// CHECK-SAME: %arg1: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}
// CHECK-SAME: %arg2: tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"b"}, {}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>})
func.func @simple(%x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>},
                  %y: tensor<8x8xf32>, %w: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}
  %s = shardc.add %x, %y : tensor<8x8xf32>
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %d = shardc.matmul %s, %w : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %d : tensor<8x16xf32>
}

//--- pointwise_size_zero_dim.mlir
// @pointwise_size_zero_dim: a tensor without elements is split like any.
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @pointwise_size_zero_dim(
// CHECK-SAME: -> (tensor<8x0xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>})
func.func @pointwise_size_zero_dim(%x: tensor<8x0xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}) -> tensor<8x0xf32> {
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %s = shardc.add %x, %x : tensor<8x0xf32>
  return %s : tensor<8x0xf32>
}

//--- pointwise_size_zero_dim_axis_size_1.mlir
// @pointwise_size_zero_dim_axis_size_1: an axis of size 1 on the empty dim.
shardc.mesh @mesh ["a"=1, "b"=2, "c"=1]
// CHECK-LABEL: func.func @pointwise_size_zero_dim_axis_size_1(
// CHECK-SAME: -> (tensor<8x0xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>})
func.func @pointwise_size_zero_dim_axis_size_1(%x: tensor<8x0xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}) -> tensor<8x0xf32> {
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}
  %s = shardc.add %x, %x : tensor<8x0xf32>
  return %s : tensor<8x0xf32>
}

//--- propagate_to_multi_result_op.mlir
// @propagate_to_multi_result_op: a two-result reduce, written as two
// reduce_sums (a shardc op has one result); both keep the split of dim 2.
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @propagate_to_multi_result_op(
// CHECK-SAME: -> (tensor<4x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"b"}]>}, tensor<4x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"b"}]>})
func.func @propagate_to_multi_result_op(
    %x: tensor<4x64x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}, {"b"}]>},
    %y: tensor<4x64x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}, {"b"}]>})
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK: shardc.reduce_sum {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"b"}]>}
  %r = shardc.reduce_sum %x dims = [1] : (tensor<4x64x8xf32>) -> tensor<4x8xf32>
  // CHECK: shardc.reduce_sum {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"b"}]>}
  %s = shardc.reduce_sum %y dims = [1] : (tensor<4x64x8xf32>) -> tensor<4x8xf32>
  return %r, %s : tensor<4x8xf32>, tensor<4x8xf32>
}

//--- propagate_from_multi_result_op.mlir
// @propagate_from_multi_result_op: the reductions' layouts go back to their
// operands (two reduce_sums, as above).
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @propagate_from_multi_result_op(
// CHECK-SAME: %arg0: tensor<4x64x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}, {"b"}]>}
// CHECK-SAME: %arg1: tensor<4x64x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}, {"b"}]>}
// CHECK-SAME: -> (tensor<4x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"b"}]>}, tensor<4x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"b"}]>})
func.func @propagate_from_multi_result_op(%x: tensor<4x64x8xf32>, %y: tensor<4x64x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %r = shardc.reduce_sum %x dims = [1] {shardc.sharding = #shardc.sharding<@mesh, [{}, {"b"}]>} : (tensor<4x64x8xf32>) -> tensor<4x8xf32>
  %s = shardc.reduce_sum %y dims = [1] {shardc.sharding = #shardc.sharding<@mesh, [{}, {"b"}]>} : (tensor<4x64x8xf32>) -> tensor<4x8xf32>
  return %r, %s : tensor<4x8xf32>, tensor<4x8xf32>
}

//--- propagate_from_sharding_constraint.mlir
// @propagate_from_sharding_constraint: a constraint's layout goes forward
// to its user and back to its operand.
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @propagate_from_sharding_constraint(
// CHECK-SAME: %arg0: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
// CHECK-SAME: -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>})
func.func @propagate_from_sharding_constraint(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %c = shardc.sharding_constraint %x <@mesh, [{"a"}, {}]> : tensor<8x8xf32>
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %s = shardc.add %c, %c : tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}

//--- multi_axes_conflict.mlir
// @multi_axes_conflict: operands split dim 0 over ("b", "a"), ("b", "c"),
// ("a", "b"). shardc keeps the earlier operand's whole split where Shardy
// keeps only the common prefix (or nothing).
shardc.mesh @mesh ["a"=2, "b"=2, "c"=2]
// CHECK-LABEL: func.func @multi_axes_conflict(
func.func @multi_axes_conflict(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"b", "a"}, {}]>},
    %y: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"b", "c"}, {}]>},
    %z: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}, {}]>})
    -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"b", "a"}, {}]>}
  %s = shardc.add %x, %y : tensor<8x8xf32>
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"b", "a"}, {}]>}
  %t = shardc.add %x, %z : tensor<8x8xf32>
  return %s, %t : tensor<8x8xf32>, tensor<8x8xf32>
}

//--- multi_axes_conflict.peer.mlir
// Shardy keeps the common prefix of conflicting splits; shardc keeps the
// earlier operand's whole split and reshards the other operand into it.
shardc.mesh @mesh ["a"=2, "b"=2, "c"=2]
func.func @multi_axes_conflict(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"b", "a"}, {}]>},
    %y: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"b", "c"}, {}]>},
    %z: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}, {}]>})
    -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"b"}, {}]>},
        tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}) {
  %s = shardc.add %x, %y {shardc.sharding = #shardc.sharding<@mesh, [{"b"}, {}]>} : tensor<8x8xf32>
  %t = shardc.add %x, %z {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>} : tensor<8x8xf32>
  return %s, %t : tensor<8x8xf32>, tensor<8x8xf32>
}

//--- reshape_size_one_axes.mlir
// @reshape_size_one_axes: axes of size 1 split nothing. shardc gives the
// trailing "c" to the minor factor, Shardy keeps all three on dim 0: the
// same layout.
shardc.mesh @mesh ["a"=1, "b"=2, "c"=1]
// CHECK-LABEL: func.func @reshape_size_one_axes(
func.func @reshape_size_one_axes(
    %x: tensor<8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b", "c"}]>}) -> tensor<2x1x4xf32> {
  // CHECK: shardc.reshape {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}, {}, {"c"}]>}
  %r = shardc.reshape %x : (tensor<8xf32>) -> tensor<2x1x4xf32>
  return %r : tensor<2x1x4xf32>
}

//--- reshape_size_one_axes.peer.mlir
// Axes of size 1 split nothing: shardc puts the last one on the minor dim,
// Shardy on the major one, which is the same layout.
shardc.mesh @mesh ["a"=1, "b"=2, "c"=1]
func.func @reshape_size_one_axes(
    %x: tensor<8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b", "c"}]>})
    -> (tensor<2x1x4xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b", "c"}, {}, {}]>}) {
  %r = shardc.reshape %x {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b", "c"}, {}, {}]>} : (tensor<8xf32>) -> tensor<2x1x4xf32>
  return %r : tensor<2x1x4xf32>
}

//--- reshape_merge_dim_only_major_most_factor_sharded.mlir
// @reshape_merge_dim_only_major_most_factor_sharded
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @reshape_merge_dim_only_major_most_factor_sharded(
func.func @reshape_merge_dim_only_major_most_factor_sharded(
    %x: tensor<2x4xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}) -> tensor<8xf32> {
  // CHECK: shardc.reshape {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}]>}
  %r = shardc.reshape %x : (tensor<2x4xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

//--- reshape_merge_dim_major_factor_fully_sharded.mlir
// @reshape_merge_dim_major_factor_fully_sharded
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @reshape_merge_dim_major_factor_fully_sharded(
func.func @reshape_merge_dim_major_factor_fully_sharded(
    %x: tensor<2x4xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}) -> tensor<8xf32> {
  // CHECK: shardc.reshape {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}]>}
  %r = shardc.reshape %x : (tensor<2x4xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

//--- reshape_merge_dim_major_factor_partially_sharded.mlir
// @reshape_merge_dim_major_factor_partially_sharded: the minor dim's split
// is strided in the merged dim and is dropped.
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @reshape_merge_dim_major_factor_partially_sharded(
func.func @reshape_merge_dim_major_factor_partially_sharded(
    %x: tensor<4x4xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}) -> tensor<16xf32> {
  // CHECK: shardc.reshape {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}]>}
  %r = shardc.reshape %x : (tensor<4x4xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

//--- reshape_split_dim_single_axis_fully_shards_major_factor.mlir
// @reshape_split_dim_single_axis_fully_shards_major_factor
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @reshape_split_dim_single_axis_fully_shards_major_factor(
func.func @reshape_split_dim_single_axis_fully_shards_major_factor(
    %x: tensor<8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"b", "a"}]>}) -> tensor<2x4xf32> {
  // CHECK: shardc.reshape {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"b"}, {"a"}]>}
  %r = shardc.reshape %x : (tensor<8xf32>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

//--- reshape_split_dim_only_major_most_factor_sharded.mlir
// @reshape_split_dim_only_major_most_factor_sharded
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @reshape_split_dim_only_major_most_factor_sharded(
func.func @reshape_split_dim_only_major_most_factor_sharded(
    %x: tensor<16xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"b", "a"}]>}) -> tensor<4x4xf32> {
  // CHECK: shardc.reshape {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"b", "a"}, {}]>}
  %r = shardc.reshape %x : (tensor<16xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

//--- reshape_split_and_merge_dims.mlir
// @reshape_split_and_merge_dims: [8,4] -> [2,16] splits dim 0 and merges
// its minor part with dim 1.
shardc.mesh @mesh ["a"=4, "b"=2, "c"=2]
// CHECK-LABEL: func.func @reshape_split_and_merge_dims(
func.func @reshape_split_and_merge_dims(
    %x: tensor<8x4xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"c", "a"}, {"b"}]>}) -> tensor<2x16xf32> {
  // CHECK: shardc.reshape {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"c"}, {"a", "b"}]>}
  %r = shardc.reshape %x : (tensor<8x4xf32>) -> tensor<2x16xf32>
  return %r : tensor<2x16xf32>
}

//--- reshape_size_zero_dim.mlir
// @reshape_size_zero_dim: [8,0] -> [0,4] relates no dims; nothing is split.
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @reshape_size_zero_dim(
func.func @reshape_size_zero_dim(%x: tensor<8x0xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}) -> tensor<0x4xf32> {
  // CHECK: shardc.reshape {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}
  %r = shardc.reshape %x : (tensor<8x0xf32>) -> tensor<0x4xf32>
  return %r : tensor<0x4xf32>
}

//--- direct_arg_return_used_axes.mlir
// @direct_arg_return_used_axes: an argument returned as is, both annotated:
// nothing to propagate.
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @direct_arg_return_used_axes(
// CHECK-SAME: %arg0: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}
// CHECK-SAME: -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}, {}]>})
func.func @direct_arg_return_used_axes(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>})
    -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}, {}]>}) {
  return %x : tensor<8x8xf32>
}

//--- direct_arg_return_prefix_axes.mlir
// @direct_arg_return_prefix_axes
shardc.mesh @mesh ["a"=2, "b"=2, "c"=2]
// CHECK-LABEL: func.func @direct_arg_return_prefix_axes(
// CHECK-SAME: %arg0: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}, {}]>}
// CHECK-SAME: -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "c"}, {}]>})
func.func @direct_arg_return_prefix_axes(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}, {}]>})
    -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "c"}, {}]>}) {
  return %x : tensor<8x8xf32>
}

//--- direct_arg_return_sharding_on_arg.mlir
// @direct_arg_return_sharding_on_arg
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @direct_arg_return_sharding_on_arg(
// CHECK-SAME: -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>})
func.func @direct_arg_return_sharding_on_arg(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}) -> tensor<8x8xf32> {
  return %x : tensor<8x8xf32>
}

//--- direct_arg_return_sharding_on_result.mlir
// @direct_arg_return_sharding_on_result
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @direct_arg_return_sharding_on_result(
// CHECK-SAME: %arg0: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}
func.func @direct_arg_return_sharding_on_result(%x: tensor<8x8xf32>)
    -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}) {
  return %x : tensor<8x8xf32>
}

//--- func_out_sharding.mlir
// @func_out_sharding: the output's layout goes back through the dot to both
// operands.
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @func_out_sharding(
// CHECK-SAME: %arg0: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
// CHECK-SAME: %arg1: tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"b"}]>}
func.func @func_out_sharding(%x: tensor<8x8xf32>, %w: tensor<8x16xf32>)
    -> (tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}) {
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}
  %d = shardc.matmul %x, %w : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %d : tensor<8x16xf32>
}

//--- multiple_func_results.mlir
// @multiple_func_results: two arguments returned as they are.
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @multiple_func_results(
// CHECK-SAME: -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}, tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"b"}]>})
func.func @multiple_func_results(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>},
    %y: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"b"}]>})
    -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  return %x, %y : tensor<8x8xf32>, tensor<8x8xf32>
}

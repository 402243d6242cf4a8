// Shardy's aggressive propagation tests, as shardc graphs.
// Source: openxla/shardy, shardy/dialect/sdy/transforms/propagation/test/
// aggressive_propagation.mlir; each case names the test function it
// translates. Conventions as in shardy-op-priority.mlir.
//
// Not translated:
//   empty_mesh_replaced_closed_dim_respected: more than one mesh.
//   multiple_conflicts_across_factors: open dims that grow.
//   sideways_propagation_if_result_is_closed_sub_axis: sub-axes.
//   allow_sideways_propagation_if_no_conflicting_with_one_of_multiple_results: custom calls (with their own rule).
//   unreduced_axes_block_bwd_propagation: open dims that grow (the dot_general's [{?}, {?}], unreduced={"b"}).

// RUN: split-file %s %t
// RUN: shardc-opt --shardc-propagate %t/no_conflict.mlir | FileCheck %t/no_conflict.mlir
// RUN: shardc simulate %t/no_conflict.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/fake_conflict_between_two_non_contracting_dims.mlir | FileCheck %t/fake_conflict_between_two_non_contracting_dims.mlir
// RUN: shardc simulate %t/fake_conflict_between_two_non_contracting_dims.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc simulate %t/fake_conflict_between_two_non_contracting_dims.peer.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/fake_conflict_between_contracting_and_non_contracting_dims.mlir | FileCheck %t/fake_conflict_between_contracting_and_non_contracting_dims.mlir
// RUN: shardc simulate %t/fake_conflict_between_contracting_and_non_contracting_dims.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/fake_conflict_closed_dims.mlir | FileCheck %t/fake_conflict_closed_dims.mlir
// RUN: shardc simulate %t/fake_conflict_closed_dims.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/real_conflict_within_a_factor.mlir | FileCheck %t/real_conflict_within_a_factor.mlir
// RUN: shardc simulate %t/real_conflict_within_a_factor.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc simulate %t/real_conflict_within_a_factor.peer.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/real_conflict_within_a_factor2.mlir | FileCheck %t/real_conflict_within_a_factor2.mlir
// RUN: shardc simulate %t/real_conflict_within_a_factor2.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc simulate %t/real_conflict_within_a_factor2.peer.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/real_and_fake_conflicts.mlir | FileCheck %t/real_and_fake_conflicts.mlir
// RUN: shardc simulate %t/real_and_fake_conflicts.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc simulate %t/real_and_fake_conflicts.peer.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/real_conflict_across_factors_same_tensors_size.mlir | FileCheck %t/real_conflict_across_factors_same_tensors_size.mlir
// RUN: shardc simulate %t/real_conflict_across_factors_same_tensors_size.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/real_conflict_across_factors_diff_tensors_size.mlir | FileCheck %t/real_conflict_across_factors_diff_tensors_size.mlir
// RUN: shardc simulate %t/real_conflict_across_factors_diff_tensors_size.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/partial_conflict_across_factors.mlir | FileCheck %t/partial_conflict_across_factors.mlir
// RUN: shardc simulate %t/partial_conflict_across_factors.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/sideways_propagation_if_result_is_closed_empty.mlir | FileCheck %t/sideways_propagation_if_result_is_closed_empty.mlir
// RUN: shardc simulate %t/sideways_propagation_if_result_is_closed_empty.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc simulate %t/sideways_propagation_if_result_is_closed_empty.peer.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/allow_sideways_propagation_if_result_is_open_empty.mlir | FileCheck %t/allow_sideways_propagation_if_result_is_open_empty.mlir
// RUN: shardc simulate %t/allow_sideways_propagation_if_result_is_open_empty.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/allow_partial_sideways_propagation_if_conflicting_with_result.mlir | FileCheck %t/allow_partial_sideways_propagation_if_conflicting_with_result.mlir
// RUN: shardc simulate %t/allow_partial_sideways_propagation_if_conflicting_with_result.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc simulate %t/allow_partial_sideways_propagation_if_conflicting_with_result.peer.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/allow_sideways_propagation_if_result_fully_matches.mlir | FileCheck %t/allow_sideways_propagation_if_result_fully_matches.mlir
// RUN: shardc simulate %t/allow_sideways_propagation_if_result_fully_matches.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/prefer_most_sharded_factor_elementwise_op.mlir | FileCheck %t/prefer_most_sharded_factor_elementwise_op.mlir
// RUN: shardc simulate %t/prefer_most_sharded_factor_elementwise_op.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/prefer_most_sharded_factor_elementwise_op2.mlir | FileCheck %t/prefer_most_sharded_factor_elementwise_op2.mlir
// RUN: shardc simulate %t/prefer_most_sharded_factor_elementwise_op2.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/prefer_most_sharded_factor_on_operand_elementwise_op.mlir | FileCheck %t/prefer_most_sharded_factor_on_operand_elementwise_op.mlir
// RUN: shardc simulate %t/prefer_most_sharded_factor_on_operand_elementwise_op.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/prefer_lhs_factor_non_elementwise.mlir | FileCheck %t/prefer_lhs_factor_non_elementwise.mlir
// RUN: shardc simulate %t/prefer_lhs_factor_non_elementwise.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM

// Every partitioned program matches the unsharded one on every device.
// SIM: {{ OK$}}

//--- no_conflict.mlir
// @no_conflict: as basic_propagation's @simple.
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @no_conflict(
// CHECK-SAME: %arg1: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}
// CHECK-SAME: %arg2: tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"b"}, {}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>})
func.func @no_conflict(%x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>},
                       %y: tensor<8x8xf32>, %w: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}
  %s = shardc.add %x, %y : tensor<8x8xf32>
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %d = shardc.matmul %s, %w : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %d : tensor<8x16xf32>
}

//--- fake_conflict_between_two_non_contracting_dims.mlir
// @fake_conflict_between_two_non_contracting_dims: "a" splits x's rows and
// the result's columns. shardc gives an axis to one factor of an op, here
// x's rows (the larger tensor), so y stays replicated; Shardy splits y's
// rows too, as no dim of y holds "a".
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @fake_conflict_between_two_non_contracting_dims(
// CHECK-SAME: %arg1: tensor<128x512xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}
func.func @fake_conflict_between_two_non_contracting_dims(
    %x: tensor<256x512xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>},
    %y: tensor<128x512xf32>)
    -> (tensor<256x128xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}) {
  %d = shardc.dot_general %x, %y batch = [] x [], contract = [1] x [1] {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>} : (tensor<256x512xf32>, tensor<128x512xf32>) -> tensor<256x128xf32>
  return %d : tensor<256x128xf32>
}

//--- fake_conflict_between_two_non_contracting_dims.peer.mlir
// Shardy also splits y by rows (no dim of y holds "a"), which the dot then
// needs gathered; shardc leaves y whole, computes the result's rows where
// x's are and moves them to columns, 5x fewer bytes.
shardc.mesh @mesh ["a"=2, "b"=2]
func.func @fake_conflict_between_two_non_contracting_dims(
    %x: tensor<256x512xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>},
    %y: tensor<128x512xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>})
    -> (tensor<256x128xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}) {
  %d = shardc.dot_general %x, %y batch = [] x [], contract = [1] x [1] {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>} : (tensor<256x512xf32>, tensor<128x512xf32>) -> tensor<256x128xf32>
  return %d : tensor<256x128xf32>
}

//--- fake_conflict_between_contracting_and_non_contracting_dims.mlir
// @fake_conflict_between_contracting_and_non_contracting_dims: the
// contracting dim's claims lose to the two non-contracting dims.
shardc.mesh @mesh ["a"=2, "b"=2, "c"=2]
// CHECK-LABEL: func.func @fake_conflict_between_contracting_and_non_contracting_dims(
// CHECK-SAME: -> (tensor<256x128xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"c", "b"}]>})
func.func @fake_conflict_between_contracting_and_non_contracting_dims(
    %x: tensor<256x512xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b", "c"}]>},
    %y: tensor<128x512xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"c", "b"}, {"a"}]>}) -> tensor<256x128xf32> {
  // CHECK: shardc.dot_general {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"c", "b"}]>}
  %d = shardc.dot_general %x, %y batch = [] x [], contract = [1] x [1] : (tensor<256x512xf32>, tensor<128x512xf32>) -> tensor<256x128xf32>
  return %d : tensor<256x128xf32>
}

//--- fake_conflict_closed_dims.mlir
// @fake_conflict_closed_dims: ("b") and ("b", "c") on dim 1 are compatible.
shardc.mesh @mesh ["a"=2, "b"=2, "c"=2]
// CHECK-LABEL: func.func @fake_conflict_closed_dims(
// CHECK-SAME: -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b", "c"}]>})
func.func @fake_conflict_closed_dims(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>},
    %y: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"b", "c"}]>}) -> tensor<8x8xf32> {
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b", "c"}]>}
  %s = shardc.add %x, %y : tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}

//--- real_conflict_within_a_factor.mlir
// @real_conflict_within_a_factor: dim 0 split over "a" by x and "b" by y.
// Shardy leaves the sum replicated; shardc keeps the earlier operand's
// split.
shardc.mesh @mesh ["a"=2, "b"=2, "c"=2]
// CHECK-LABEL: func.func @real_conflict_within_a_factor(
func.func @real_conflict_within_a_factor(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>},
    %y: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"b"}, {}]>}) -> tensor<8x8xf32> {
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %s = shardc.add %x, %y : tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}

//--- real_conflict_within_a_factor.peer.mlir
// Shardy leaves the sum of two differently split operands replicated
// (both gathered); shardc keeps the first operand's split and moves only
// the second.
shardc.mesh @mesh ["a"=2, "b"=2, "c"=2]
func.func @real_conflict_within_a_factor(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>},
    %y: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"b"}, {}]>})
    -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}) {
  %s = shardc.add %x, %y {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>} : tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}

//--- real_conflict_within_a_factor2.mlir
// @real_conflict_within_a_factor2: dim 1 split over "b" by x and over
// ("a", "b", "c") by y. Shardy drops the conflicting dim; shardc keeps x's
// split of it.
shardc.mesh @mesh ["a"=2, "b"=2, "c"=2]
// CHECK-LABEL: func.func @real_conflict_within_a_factor2(
func.func @real_conflict_within_a_factor2(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>},
    %y: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a", "b", "c"}]>}) -> tensor<8x8xf32> {
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}
  %s = shardc.add %x, %y : tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}

//--- real_conflict_within_a_factor2.peer.mlir
// Shardy drops the dim both operands split differently; shardc keeps the
// first operand's split of it, so its result is 4-way split, not 2-way.
shardc.mesh @mesh ["a"=2, "b"=2, "c"=2]
func.func @real_conflict_within_a_factor2(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>},
    %y: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a", "b", "c"}]>})
    -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}) {
  %s = shardc.add %x, %y {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>} : tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}

//--- real_and_fake_conflicts.mlir
// @real_and_fake_conflicts: dim 0 is claimed as "a" by x and "b" by y, and
// "a" also splits y's dim 1. shardc keeps x's dim 0; Shardy drops the
// conflicting dim and keeps y's dim 1.
shardc.mesh @mesh ["a"=2, "b"=2, "c"=2]
// CHECK-LABEL: func.func @real_and_fake_conflicts(
func.func @real_and_fake_conflicts(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>},
    %y: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"b"}, {"a"}]>}) -> tensor<8x8xf32> {
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %s = shardc.add %x, %y : tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}

//--- real_and_fake_conflicts.peer.mlir
// Shardy drops the dim whose claims conflict and keeps y's other split;
// shardc keeps x's layout and moves y.
shardc.mesh @mesh ["a"=2, "b"=2, "c"=2]
func.func @real_and_fake_conflicts(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>},
    %y: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"b"}, {"a"}]>})
    -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}) {
  %s = shardc.add %x, %y {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>} : tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}

//--- real_conflict_across_factors_same_tensors_size.mlir
// @real_conflict_across_factors_same_tensors_size: "a" on dim 0 of x and
// dim 1 of y; the earlier operand wins.
shardc.mesh @mesh ["a"=2, "b"=2, "c"=2]
// CHECK-LABEL: func.func @real_conflict_across_factors_same_tensors_size(
// CHECK-SAME: -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>})
func.func @real_conflict_across_factors_same_tensors_size(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>},
    %y: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}) -> tensor<8x8xf32> {
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %s = shardc.add %x, %y : tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}

//--- real_conflict_across_factors_diff_tensors_size.mlir
// @real_conflict_across_factors_diff_tensors_size: "a" claimed by the
// result's rows (from x) and columns (from w): the larger operand wins.
shardc.mesh @mesh ["a"=2, "b"=2, "c"=2]
// CHECK-LABEL: func.func @real_conflict_across_factors_diff_tensors_size(
func.func @real_conflict_across_factors_diff_tensors_size(
    %x: tensor<8x4xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}, {}]>},
    %w: tensor<4x16xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a", "c"}]>}) -> tensor<8x16xf32> {
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a", "c"}]>}
  %d = shardc.matmul %x, %w : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  return %d : tensor<8x16xf32>
}

//--- partial_conflict_across_factors.mlir
// @partial_conflict_across_factors: the result's annotation extends x's
// batch split to ("a", "b"), which beats x's "b" on its rows; w follows.
// (Batch 4, not 2: shardc splits dims evenly.)
shardc.mesh @mesh ["a"=2, "b"=2, "c"=2]
// CHECK-LABEL: func.func @partial_conflict_across_factors(
// CHECK-SAME: %arg1: tensor<4x4x16xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}, {}, {}]>}
func.func @partial_conflict_across_factors(
    %x: tensor<4x8x4xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}, {}]>},
    %w: tensor<4x4x16xf32>) -> tensor<4x8x16xf32> {
  %d = shardc.dot_general %x, %w batch = [0] x [0], contract = [2] x [1] {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}, {}, {}]>} : (tensor<4x8x4xf32>, tensor<4x4x16xf32>) -> tensor<4x8x16xf32>
  return %d : tensor<4x8x16xf32>
}

//--- sideways_propagation_if_result_is_closed_empty.mlir
// @sideways_propagation_if_result_is_closed_empty: the sum is pinned
// replicated. Shardy then leaves y replicated; in shardc a replicated
// tensor proposes nothing, so y takes x's split.
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @sideways_propagation_if_result_is_closed_empty(
// CHECK-SAME: %arg1: tensor<8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}]>}
func.func @sideways_propagation_if_result_is_closed_empty(
    %x: tensor<8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}]>},
    %y: tensor<8xf32>) -> tensor<8xf32> {
  %s = shardc.add %x, %y {shardc.sharding = #shardc.sharding<@mesh, [{}]>} : tensor<8xf32>
  return %s : tensor<8xf32>
}

//--- sideways_propagation_if_result_is_closed_empty.peer.mlir
// Shardy leaves y replicated, shardc splits y like x: either way the add's
// operand or result is gathered once.
shardc.mesh @mesh ["a"=2, "b"=2]
func.func @sideways_propagation_if_result_is_closed_empty(
    %x: tensor<8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}]>},
    %y: tensor<8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}]>})
    -> (tensor<8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}]>}) {
  %s = shardc.add %x, %y {shardc.sharding = #shardc.sharding<@mesh, [{}]>} : tensor<8xf32>
  return %s : tensor<8xf32>
}

//--- allow_sideways_propagation_if_result_is_open_empty.mlir
// @allow_sideways_propagation_if_result_is_open_empty: open empty shardings
// are no annotations; x's split reaches y and the sum.
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @allow_sideways_propagation_if_result_is_open_empty(
// CHECK-SAME: %arg1: tensor<8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}]>}
// CHECK-SAME: -> (tensor<8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}]>})
func.func @allow_sideways_propagation_if_result_is_open_empty(
    %x: tensor<8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}]>},
    %y: tensor<8xf32>) -> tensor<8xf32> {
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}]>}
  %s = shardc.add %x, %y : tensor<8xf32>
  return %s : tensor<8xf32>
}

//--- allow_partial_sideways_propagation_if_conflicting_with_result.mlir
// @allow_partial_sideways_propagation_if_conflicting_with_result: the sum is
// pinned to "a", x is split over ("a", "b"). Shardy gives y the pinned
// "a"; shardc gives it x's whole split.
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @allow_partial_sideways_propagation_if_conflicting_with_result(
// CHECK-SAME: %arg1: tensor<8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}]>}
func.func @allow_partial_sideways_propagation_if_conflicting_with_result(
    %x: tensor<8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}]>},
    %y: tensor<8xf32>) -> tensor<8xf32> {
  %s = shardc.add %x, %y {shardc.sharding = #shardc.sharding<@mesh, [{"a"}]>} : tensor<8xf32>
  return %s : tensor<8xf32>
}

//--- allow_partial_sideways_propagation_if_conflicting_with_result.peer.mlir
// Shardy gives y the sum's "a", shardc x's ("a", "b"): either way "b" is
// gathered once.
shardc.mesh @mesh ["a"=2, "b"=2]
func.func @allow_partial_sideways_propagation_if_conflicting_with_result(
    %x: tensor<8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}]>},
    %y: tensor<8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}]>})
    -> (tensor<8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}]>}) {
  %s = shardc.add %x, %y {shardc.sharding = #shardc.sharding<@mesh, [{"a"}]>} : tensor<8xf32>
  return %s : tensor<8xf32>
}

//--- allow_sideways_propagation_if_result_fully_matches.mlir
// @allow_sideways_propagation_if_result_fully_matches
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @allow_sideways_propagation_if_result_fully_matches(
// CHECK-SAME: %arg1: tensor<8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}]>}
// CHECK-SAME: -> (tensor<8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}]>})
func.func @allow_sideways_propagation_if_result_fully_matches(
    %x: tensor<8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}]>},
    %y: tensor<8xf32>) -> tensor<8xf32> {
  %s = shardc.add %x, %y {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}]>} : tensor<8xf32>
  return %s : tensor<8xf32>
}

//--- prefer_most_sharded_factor_elementwise_op.mlir
// @prefer_most_sharded_factor_elementwise_op: "a" splits dim 1 of x and is
// the minor axis of y's dim 0 split ("b", "a"): the more split dim keeps it.
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @prefer_most_sharded_factor_elementwise_op(
func.func @prefer_most_sharded_factor_elementwise_op(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>},
    %y: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"b", "a"}, {}]>}) -> tensor<8x8xf32> {
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"b", "a"}, {}]>}
  %s = shardc.add %x, %y : tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}

//--- prefer_most_sharded_factor_elementwise_op2.mlir
// @prefer_most_sharded_factor_elementwise_op2: ("a", "b") on dim 1 of x,
// ("a", "c"=8) on dim 0 of y: the 16-way split keeps "a" (reaching it
// from x's 4-way split mostly slices; the other way round gathers). (16x16, not
// 8x8: shardc splits dims evenly.)
shardc.mesh @mesh ["a"=2, "b"=2, "c"=8]
// CHECK-LABEL: func.func @prefer_most_sharded_factor_elementwise_op2(
func.func @prefer_most_sharded_factor_elementwise_op2(
    %x: tensor<16x16xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a", "b"}]>},
    %y: tensor<16x16xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "c"}, {}]>}) -> tensor<16x16xf32> {
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a", "c"}, {}]>}
  %s = shardc.add %x, %y : tensor<16x16xf32>
  return %s : tensor<16x16xf32>
}

//--- prefer_most_sharded_factor_on_operand_elementwise_op.mlir
// @prefer_most_sharded_factor_on_operand_elementwise_op: the sum is pinned
// to ("a", "c") on dim 0, x has ("a", "b") on dim 1: y follows the more
// split sum. (16x16, not 8x8: shardc splits dims evenly.)
shardc.mesh @mesh ["a"=2, "b"=2, "c"=8]
// CHECK-LABEL: func.func @prefer_most_sharded_factor_on_operand_elementwise_op(
// CHECK-SAME: %arg1: tensor<16x16xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "c"}, {}]>}
func.func @prefer_most_sharded_factor_on_operand_elementwise_op(
    %x: tensor<16x16xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a", "b"}]>},
    %y: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %s = shardc.add %x, %y {shardc.sharding = #shardc.sharding<@mesh, [{"a", "c"}, {}]>} : tensor<16x16xf32>
  return %s : tensor<16x16xf32>
}

//--- prefer_lhs_factor_non_elementwise.mlir
// @prefer_lhs_factor_non_elementwise: "a" splits x's rows and is the minor
// axis of w's columns; the lhs keeps it.
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @prefer_lhs_factor_non_elementwise(
// CHECK-SAME: -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>})
func.func @prefer_lhs_factor_non_elementwise(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>},
    %w: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"b", "a"}]>}) -> tensor<8x8xf32> {
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}
  %d = shardc.matmul %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %d : tensor<8x8xf32>
}

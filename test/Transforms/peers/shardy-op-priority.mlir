// Shardy's op-priority propagation tests, as shardc graphs.
// Source: openxla/shardy, shardy/dialect/sdy/transforms/propagation/test/
// op_priority_propagation.mlir; each case below names the test function it
// translates. Shardy's ops become shardc's (stablehlo.sine/cosine become
// tanh/exp: any element-wise op has the same sharding rule), Shardy's open
// dims that end as they began become closed ones. A case whose plan differs
// from Shardy's has a second file, <case>.peer.mlir: the same program with
// every value annotated as Shardy leaves it, so that both plans can be
// simulated and their bytes compared (docs/propagation.md, "Against Shardy
// and MLIR's own tests"; test/Transforms/peers/peer_table.py).
//
// Not translated:
//   element_wise_host_offload_first: custom calls (host offload).
//   defer_forward_propagation_for_multi_use_dynamic_slice: ops shardc lacks (dynamic_slice).
//   defer_backwards_propagation_dynamic_slice: ops shardc lacks (dynamic_slice).
//   unknown_op: ops shardc lacks (concatenate).
//   data_flow_edge: ops shardc lacks (optimization_barrier).
//   manual_computation: manual computations.
//   unreduced_axes_block_bwd_propagation: open dims that grow (the dot_general's [{?}, {?}], unreduced={"b"}).

// RUN: split-file %s %t
// RUN: shardc-opt --shardc-propagate %t/element_wise_over_dot_general.mlir | FileCheck %t/element_wise_over_dot_general.mlir
// RUN: shardc simulate %t/element_wise_over_dot_general.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc simulate %t/element_wise_over_dot_general.peer.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/element_wise_over_dot_general_flipped_op_order.mlir | FileCheck %t/element_wise_over_dot_general_flipped_op_order.mlir
// RUN: shardc simulate %t/element_wise_over_dot_general_flipped_op_order.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/defer_forward_propagation_for_multi_use_ops.mlir | FileCheck %t/defer_forward_propagation_for_multi_use_ops.mlir
// RUN: shardc simulate %t/defer_forward_propagation_for_multi_use_ops.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc simulate %t/defer_forward_propagation_for_multi_use_ops.peer.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/defer_backwards_propagation_for_op_with_multi_use_operand.mlir | FileCheck %t/defer_backwards_propagation_for_op_with_multi_use_operand.mlir
// RUN: shardc simulate %t/defer_backwards_propagation_for_op_with_multi_use_operand.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc simulate %t/defer_backwards_propagation_for_op_with_multi_use_operand.peer.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/sharding_constraint_propagated.mlir | FileCheck %t/sharding_constraint_propagated.mlir
// RUN: shardc simulate %t/sharding_constraint_propagated.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc simulate %t/sharding_constraint_propagated.peer.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/chained_dot_generals.mlir | FileCheck %t/chained_dot_generals.mlir
// RUN: shardc simulate %t/chained_dot_generals.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc simulate %t/chained_dot_generals.peer.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/pass_through_factor_higher_priority_than_reduction_factor.mlir | FileCheck %t/pass_through_factor_higher_priority_than_reduction_factor.mlir
// RUN: shardc simulate %t/pass_through_factor_higher_priority_than_reduction_factor.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/broadcast_forward_higher_priority_than_backwards.mlir | FileCheck %t/broadcast_forward_higher_priority_than_backwards.mlir
// RUN: shardc simulate %t/broadcast_forward_higher_priority_than_backwards.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM

// Every partitioned program matches the unsharded one on every device.
// SIM: {{ OK$}}

//--- element_wise_over_dot_general.mlir
// @element_wise_over_dot_general: the output wants dim 1 split, x has dim 0
// split. Shardy takes the output's layout back through the element-wise
// chain to the dot first (it propagates element-wise ops before others), so
// x is gathered for the dot; shardc takes x's layout forward and moves the
// last add's operand from rows to columns, half the bytes.
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @element_wise_over_dot_general(
// CHECK-SAME: %arg0: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
// CHECK-SAME: -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>})
func.func @element_wise_over_dot_general(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>},
    %w: tensor<8x8xf32>)
    -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}) {
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %d = shardc.matmul %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %s = shardc.add %d, %d : tensor<8x8xf32>
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}
  %t = shardc.add %s, %s : tensor<8x8xf32>
  return %t : tensor<8x8xf32>
}

//--- element_wise_over_dot_general.peer.mlir
// Shardy takes the output's layout back through the adds to the dot, so x is
// gathered for it; shardc takes x's layout forward and moves the last add's
// operand from rows to columns, an all_to_all of half the bytes.
shardc.mesh @mesh ["a"=2, "b"=2]
func.func @element_wise_over_dot_general(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>},
    %w: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>})
    -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}) {
  %d = shardc.matmul %x, %w {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = shardc.add %d, %d {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>} : tensor<8x8xf32>
  %t = shardc.add %s, %s {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>} : tensor<8x8xf32>
  return %t : tensor<8x8xf32>
}

//--- element_wise_over_dot_general_flipped_op_order.mlir
// @element_wise_over_dot_general_flipped_op_order: the same with the dot
// last: its operands' element-wise producers take the dot's layout.
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @element_wise_over_dot_general_flipped_op_order(
// CHECK-SAME: %arg0: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
// CHECK-SAME: %arg1: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}
// CHECK-SAME: -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>})
func.func @element_wise_over_dot_general_flipped_op_order(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>},
    %w: tensor<8x8xf32>)
    -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}) {
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %p = shardc.add %x, %x : tensor<8x8xf32>
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}
  %q = shardc.add %w, %w : tensor<8x8xf32>
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}
  %d = shardc.matmul %p, %q : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %d : tensor<8x8xf32>
}

//--- defer_forward_propagation_for_multi_use_ops.mlir
// @defer_forward_propagation_for_multi_use_ops: t has two users. Shardy
// defers t's layout going forward into them, so they take the outputs'
// layout; shardc takes t's forward. The two adds (and the two exps) compute
// the same values, which the partitioned program computes once, so either
// way one value moves from rows to columns.
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @defer_forward_propagation_for_multi_use_ops(
func.func @defer_forward_propagation_for_multi_use_ops(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>})
    -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>},
        tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}) {
  // CHECK: shardc.tanh {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %t = shardc.tanh %x : tensor<8x8xf32>
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %p = shardc.add %t, %t : tensor<8x8xf32>
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %q = shardc.add %t, %t : tensor<8x8xf32>
  // CHECK: shardc.exp {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}
  %e = shardc.exp %p : tensor<8x8xf32>
  // CHECK: shardc.exp {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}
  %f = shardc.exp %q : tensor<8x8xf32>
  return %e, %f : tensor<8x8xf32>, tensor<8x8xf32>
}

//--- defer_forward_propagation_for_multi_use_ops.peer.mlir
// Shardy gives both adds the outputs' layout, shardc gives them t's: either
// way one 8x8 value moves from rows to columns (the equal adds are one op
// after partitioning).
shardc.mesh @mesh ["a"=2, "b"=2]
func.func @defer_forward_propagation_for_multi_use_ops(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>})
    -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>},
        tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}) {
  %t = shardc.tanh %x {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>} : tensor<8x8xf32>
  %p = shardc.add %t, %t {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>} : tensor<8x8xf32>
  %q = shardc.add %t, %t {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>} : tensor<8x8xf32>
  %e = shardc.exp %p {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>} : tensor<8x8xf32>
  %f = shardc.exp %q {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>} : tensor<8x8xf32>
  return %e, %f : tensor<8x8xf32>, tensor<8x8xf32>
}

//--- defer_backwards_propagation_for_op_with_multi_use_operand.mlir
// @defer_backwards_propagation_for_op_with_multi_use_operand: x feeds two
// adds whose outputs want different layouts. Shardy gives x the one that
// reaches it through a single-use chain, shardc the first to reach it: one
// of the adds reshards x either way.
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @defer_backwards_propagation_for_op_with_multi_use_operand(
// CHECK-SAME: %arg0: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}
func.func @defer_backwards_propagation_for_op_with_multi_use_operand(%x: tensor<8x8xf32>)
    -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>},
        tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}) {
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %p = shardc.add %x, %x : tensor<8x8xf32>
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}
  %q = shardc.add %x, %x : tensor<8x8xf32>
  // CHECK: shardc.tanh {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %t = shardc.tanh %p : tensor<8x8xf32>
  return %q, %t : tensor<8x8xf32>, tensor<8x8xf32>
}

//--- defer_backwards_propagation_for_op_with_multi_use_operand.peer.mlir
// Shardy gives x the layout of the single-use chain, shardc the first to
// reach it: either way one add reshards x.
shardc.mesh @mesh ["a"=2, "b"=2]
func.func @defer_backwards_propagation_for_op_with_multi_use_operand(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>})
    -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>},
        tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}) {
  %p = shardc.add %x, %x {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>} : tensor<8x8xf32>
  %q = shardc.add %x, %x {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>} : tensor<8x8xf32>
  %t = shardc.tanh %p {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>} : tensor<8x8xf32>
  return %q, %t : tensor<8x8xf32>, tensor<8x8xf32>
}

//--- sharding_constraint_propagated.mlir
// @sharding_constraint_propagated: as element_wise_over_dot_general, the
// layout coming from a sharding_constraint rather than the output; shardc
// reshards once, at the constraint.
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @sharding_constraint_propagated(
// CHECK-SAME: %arg0: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
// CHECK-SAME: -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>})
func.func @sharding_constraint_propagated(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>},
    %w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %d = shardc.matmul %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %s = shardc.add %d, %d : tensor<8x8xf32>
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %t = shardc.add %s, %s : tensor<8x8xf32>
  %c = shardc.sharding_constraint %t <@mesh, [{}, {"a"}]> : tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

//--- sharding_constraint_propagated.peer.mlir
// As element_wise_over_dot_general: Shardy gathers x for the dot, shardc
// moves the last add's operand from rows to columns.
shardc.mesh @mesh ["a"=2, "b"=2]
func.func @sharding_constraint_propagated(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>},
    %w: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>})
    -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}) {
  %d = shardc.matmul %x, %w {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = shardc.add %d, %d {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>} : tensor<8x8xf32>
  %t = shardc.add %s, %s {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>} : tensor<8x8xf32>
  %c = shardc.sharding_constraint %t <@mesh, [{}, {"a"}]> : tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

//--- chained_dot_generals.mlir
// @chained_dot_generals: Shardy gives the second dot the output's layout,
// back through the element-wise chain; shardc gives it d's rows, and moves
// the last add's operand to columns: as many bytes. w stays replicated.
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @chained_dot_generals(
// CHECK-SAME: %arg0: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
// CHECK-SAME: %arg1: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}
// CHECK-SAME: -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>})
func.func @chained_dot_generals(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>},
    %w: tensor<8x8xf32>)
    -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}) {
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %d = shardc.matmul %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %e = shardc.matmul %d, %d : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %s = shardc.add %e, %e : tensor<8x8xf32>
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}
  %t = shardc.add %s, %s : tensor<8x8xf32>
  return %t : tensor<8x8xf32>
}

//--- chained_dot_generals.peer.mlir
// Shardy gives the second dot the output's layout, shardc the rows of its
// lhs: one all_to_all either way, before or after the adds.
shardc.mesh @mesh ["a"=2, "b"=2]
func.func @chained_dot_generals(
    %x: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>},
    %w: tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>})
    -> (tensor<8x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}) {
  %d = shardc.matmul %x, %w {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %e = shardc.matmul %d, %d {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = shardc.add %e, %e {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>} : tensor<8x8xf32>
  %t = shardc.add %s, %s {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>} : tensor<8x8xf32>
  return %t : tensor<8x8xf32>
}

//--- pass_through_factor_higher_priority_than_reduction_factor.mlir
// @pass_through_factor_higher_priority_than_reduction_factor: "a" shards
// both the result's rows and w's contracting dim; the parallel factor keeps
// it, so x is split by rows, not along the contraction.
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @pass_through_factor_higher_priority_than_reduction_factor(
// CHECK-SAME: %arg0: tensor<32x1024xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
func.func @pass_through_factor_higher_priority_than_reduction_factor(
    %x: tensor<32x1024xf32>,
    %w: tensor<1024x16xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>})
    -> (tensor<32x16xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}) {
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}
  %d = shardc.matmul %x, %w : (tensor<32x1024xf32>, tensor<1024x16xf32>) -> tensor<32x16xf32>
  return %d : tensor<32x16xf32>
}

//--- broadcast_forward_higher_priority_than_backwards.mlir
// @broadcast_forward_higher_priority_than_backwards: a broadcast's operand
// is small; the output's layout, taken back through both broadcasts, beats
// the operand's taken forward (gathering 32 floats, not resharding 4096).
shardc.mesh @mesh ["a"=2, "b"=2]
// CHECK-LABEL: func.func @broadcast_forward_higher_priority_than_backwards(
func.func @broadcast_forward_higher_priority_than_backwards(
    %v: tensor<32xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}]>})
    -> (tensor<32x16x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}, {}]>}) {
  // CHECK: shardc.broadcast_in_dim {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}]>}
  %b = shardc.broadcast_in_dim %v dims = [0] : (tensor<32xf32>) -> tensor<32x16xf32>
  // CHECK: shardc.broadcast_in_dim {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"a"}, {}]>}
  %c = shardc.broadcast_in_dim %b dims = [0, 1] : (tensor<32x16xf32>) -> tensor<32x16x8xf32>
  return %c : tensor<32x16x8xf32>
}

// Upstream MLIR's sharding propagation tests (the `shard` dialect), as
// shardc graphs.
// Source: llvm/llvm-project, mlir/test/Dialect/Shard/sharding-propagation.mlir;
// each case names the test function it translates. A grid's axes 0, 1, ...
// become mesh axes "g0", "g1", ...; `shard.shard %v to %s` (the value's
// sharding) becomes the value's annotation, on the function argument, the
// op's result or the output; tosa and linalg ops become shardc's (tosa's
// zero-point operands of matmul and negate have no counterpart and are
// dropped). Where MLIR's plan differs from shardc's, <case>.peer.mlir holds
// it: MLIR also fixes each operand's layout for its user
// (`annotate_for_users`), which the peer file writes as a
// sharding_constraint on the operand.
//
// Not translated:
//   mlp_1d_weight_stationary: a mesh of unknown size (split over axes it does not have).

// RUN: split-file %s %t
// RUN: shardc-opt --shardc-propagate %t/element_wise_empty_sharding_info.mlir | FileCheck %t/element_wise_empty_sharding_info.mlir
// RUN: shardc simulate %t/element_wise_empty_sharding_info.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/element_wise_on_def.mlir | FileCheck %t/element_wise_on_def.mlir
// RUN: shardc simulate %t/element_wise_on_def.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/element_wise_on_use.mlir | FileCheck %t/element_wise_on_use.mlir
// RUN: shardc simulate %t/element_wise_on_use.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/element_wise_on_graph_output.mlir | FileCheck %t/element_wise_on_graph_output.mlir
// RUN: shardc simulate %t/element_wise_on_graph_output.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/element_wise_on_graph_input.mlir | FileCheck %t/element_wise_on_graph_input.mlir
// RUN: shardc simulate %t/element_wise_on_graph_input.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/arrow_structure.mlir | FileCheck %t/arrow_structure.mlir
// RUN: shardc simulate %t/arrow_structure.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/matmul_on_def_shard_batch_and_m.mlir | FileCheck %t/matmul_on_def_shard_batch_and_m.mlir
// RUN: shardc simulate %t/matmul_on_def_shard_batch_and_m.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/matmul_on_def_shard_m_and_n.mlir | FileCheck %t/matmul_on_def_shard_m_and_n.mlir
// RUN: shardc simulate %t/matmul_on_def_shard_m_and_n.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/matmul_on_use_shard_m_and_k.mlir | FileCheck %t/matmul_on_use_shard_m_and_k.mlir
// RUN: shardc simulate %t/matmul_on_use_shard_m_and_k.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/matmul_on_use_shard_m_and_duplicted_k.mlir | FileCheck %t/matmul_on_use_shard_m_and_duplicted_k.mlir
// RUN: shardc simulate %t/matmul_on_use_shard_m_and_duplicted_k.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/resolve_conflicting_annotations.mlir | FileCheck %t/resolve_conflicting_annotations.mlir
// RUN: shardc simulate %t/resolve_conflicting_annotations.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc simulate %t/resolve_conflicting_annotations.peer.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/mlp_2d_weight_stationary.mlir | FileCheck %t/mlp_2d_weight_stationary.mlir
// RUN: shardc simulate %t/mlp_2d_weight_stationary.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc simulate %t/mlp_2d_weight_stationary.peer.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/elementwise_duplicated_chain.mlir | FileCheck %t/elementwise_duplicated_chain.mlir
// RUN: shardc simulate %t/elementwise_duplicated_chain.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM

// Every partitioned program matches the unsharded one on every device.
// SIM: {{ OK$}}

//--- element_wise_empty_sharding_info.mlir
// @element_wise_empty_sharding_info: no annotation, nothing is split.
shardc.mesh @grid_2d ["g0"=2, "g1"=4]
// CHECK-LABEL: func.func @element_wise_empty_sharding_info(
// CHECK-SAME: %arg0: tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{}, {}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{}, {}]>})
func.func @element_wise_empty_sharding_info(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK: shardc.sigmoid {{.*}} {shardc.sharding = #shardc.sharding<@grid_2d, [{}, {}]>}
  %s = shardc.sigmoid %x : tensor<8x16xf32>
  return %s : tensor<8x16xf32>
}

//--- element_wise_on_def.mlir
// @element_wise_on_def: the result's sharding goes back to the argument.
shardc.mesh @grid_2d ["g0"=2, "g1"=4]
// CHECK-LABEL: func.func @element_wise_on_def(
// CHECK-SAME: %arg0: tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{"g0"}, {"g1"}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{"g0"}, {"g1"}]>})
func.func @element_wise_on_def(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %s = shardc.sigmoid %x {shardc.sharding = #shardc.sharding<@grid_2d, [{"g0"}, {"g1"}]>} : tensor<8x16xf32>
  return %s : tensor<8x16xf32>
}

//--- element_wise_on_use.mlir
// @element_wise_on_use: the argument's sharding goes forward.
shardc.mesh @grid_2d ["g0"=2, "g1"=4]
// CHECK-LABEL: func.func @element_wise_on_use(
// CHECK-SAME: -> (tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{"g0"}, {"g1"}]>})
func.func @element_wise_on_use(%x: tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{"g0"}, {"g1"}]>}) -> tensor<8x16xf32> {
  // CHECK: shardc.sigmoid {{.*}} {shardc.sharding = #shardc.sharding<@grid_2d, [{"g0"}, {"g1"}]>}
  %s = shardc.sigmoid %x : tensor<8x16xf32>
  return %s : tensor<8x16xf32>
}

//--- element_wise_on_graph_output.mlir
// @element_wise_on_graph_output: the output's sharding goes back.
shardc.mesh @grid_2d ["g0"=2, "g1"=4]
// CHECK-LABEL: func.func @element_wise_on_graph_output(
// CHECK-SAME: %arg0: tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{"g0"}, {"g1"}]>}
func.func @element_wise_on_graph_output(%x: tensor<8x16xf32>)
    -> (tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{"g0"}, {"g1"}]>}) {
  // CHECK: shardc.sigmoid {{.*}} {shardc.sharding = #shardc.sharding<@grid_2d, [{"g0"}, {"g1"}]>}
  %s = shardc.sigmoid %x : tensor<8x16xf32>
  return %s : tensor<8x16xf32>
}

//--- element_wise_on_graph_input.mlir
// @element_wise_on_graph_input: the input's sharding goes forward to the
// output.
shardc.mesh @grid_2d ["g0"=2, "g1"=4]
// CHECK-LABEL: func.func @element_wise_on_graph_input(
// CHECK-SAME: -> (tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{"g0"}, {"g1"}]>})
func.func @element_wise_on_graph_input(%x: tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{"g0"}, {"g1"}]>}) -> tensor<8x16xf32> {
  // CHECK: shardc.sigmoid {{.*}} {shardc.sharding = #shardc.sharding<@grid_2d, [{"g0"}, {"g1"}]>}
  %s = shardc.sigmoid %x : tensor<8x16xf32>
  return %s : tensor<8x16xf32>
}

//--- arrow_structure.mlir
// @arrow_structure: one annotated leaf of a fork shards the whole fork
// (tosa.abs and tosa.negate become exp and neg).
shardc.mesh @grid_2d ["g0"=2, "g1"=4]
// CHECK-LABEL: func.func @arrow_structure(
// CHECK-SAME: %arg0: tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{"g0"}, {"g1"}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{"g0"}, {"g1"}]>}, tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{"g0"}, {"g1"}]>})
func.func @arrow_structure(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  // CHECK: shardc.tanh {{.*}} {shardc.sharding = #shardc.sharding<@grid_2d, [{"g0"}, {"g1"}]>}
  %t = shardc.tanh %x : tensor<8x16xf32>
  // CHECK: shardc.exp {{.*}} {shardc.sharding = #shardc.sharding<@grid_2d, [{"g0"}, {"g1"}]>}
  %a = shardc.exp %t : tensor<8x16xf32>
  %n = shardc.neg %t {shardc.sharding = #shardc.sharding<@grid_2d, [{"g0"}, {"g1"}]>} : tensor<8x16xf32>
  return %a, %n : tensor<8x16xf32>, tensor<8x16xf32>
}

//--- matmul_on_def_shard_batch_and_m.mlir
// @matmul_on_def_shard_batch_and_m: a batched matmul's result split by
// batch and rows; the operands follow.
shardc.mesh @grid_2d ["g0"=2, "g1"=4]
// CHECK-LABEL: func.func @matmul_on_def_shard_batch_and_m(
// CHECK-SAME: %arg0: tensor<2x16x8xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{"g0"}, {"g1"}, {}]>}
// CHECK-SAME: %arg1: tensor<2x8x32xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{"g0"}, {}, {}]>}
func.func @matmul_on_def_shard_batch_and_m(%x: tensor<2x16x8xf32>, %w: tensor<2x8x32xf32>) -> tensor<2x16x32xf32> {
  %d = shardc.matmul %x, %w {shardc.sharding = #shardc.sharding<@grid_2d, [{"g0"}, {"g1"}, {}]>} : (tensor<2x16x8xf32>, tensor<2x8x32xf32>) -> tensor<2x16x32xf32>
  return %d : tensor<2x16x32xf32>
}

//--- matmul_on_def_shard_m_and_n.mlir
// @matmul_on_def_shard_m_and_n
shardc.mesh @grid_2d ["g0"=2, "g1"=4]
// CHECK-LABEL: func.func @matmul_on_def_shard_m_and_n(
// CHECK-SAME: %arg0: tensor<2x16x8xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{}, {"g0"}, {}]>}
// CHECK-SAME: %arg1: tensor<2x8x32xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{}, {}, {"g1"}]>}
func.func @matmul_on_def_shard_m_and_n(%x: tensor<2x16x8xf32>, %w: tensor<2x8x32xf32>) -> tensor<2x16x32xf32> {
  %d = shardc.matmul %x, %w {shardc.sharding = #shardc.sharding<@grid_2d, [{}, {"g0"}, {"g1"}]>} : (tensor<2x16x8xf32>, tensor<2x8x32xf32>) -> tensor<2x16x32xf32>
  return %d : tensor<2x16x32xf32>
}

//--- matmul_on_use_shard_m_and_k.mlir
// @matmul_on_use_shard_m_and_k: x split by rows and along the contraction;
// w follows along the contraction, the result (a pending sum) by rows.
shardc.mesh @grid_2d ["g0"=2, "g1"=4]
// CHECK-LABEL: func.func @matmul_on_use_shard_m_and_k(
// CHECK-SAME: %arg1: tensor<2x8x32xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{}, {"g1"}, {}]>}
// CHECK-SAME: -> (tensor<2x16x32xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{}, {"g0"}, {}]>})
func.func @matmul_on_use_shard_m_and_k(
    %x: tensor<2x16x8xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{}, {"g0"}, {"g1"}]>},
    %w: tensor<2x8x32xf32>) -> tensor<2x16x32xf32> {
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@grid_2d, [{}, {"g0"}, {}]>}
  %d = shardc.matmul %x, %w : (tensor<2x16x8xf32>, tensor<2x8x32xf32>) -> tensor<2x16x32xf32>
  return %d : tensor<2x16x32xf32>
}

//--- matmul_on_use_shard_m_and_duplicted_k.mlir
// @matmul_on_use_shard_m_and_duplicted_k: both operands split the
// contraction the same way.
shardc.mesh @grid_2d ["g0"=2, "g1"=4]
// CHECK-LABEL: func.func @matmul_on_use_shard_m_and_duplicted_k(
// CHECK-SAME: -> (tensor<2x16x32xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{}, {"g1"}, {}]>})
func.func @matmul_on_use_shard_m_and_duplicted_k(
    %x: tensor<2x16x8xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{}, {"g1"}, {"g0"}]>},
    %w: tensor<2x8x32xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{}, {"g0"}, {}]>}) -> tensor<2x16x32xf32> {
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@grid_2d, [{}, {"g1"}, {}]>}
  %d = shardc.matmul %x, %w : (tensor<2x16x8xf32>, tensor<2x8x32xf32>) -> tensor<2x16x32xf32>
  return %d : tensor<2x16x32xf32>
}

//--- resolve_conflicting_annotations.mlir
// @resolve_conflicting_annotations: x split by rows, the product pinned
// replicated; y stays replicated. (linalg.matmul's init operand has no
// counterpart.)
shardc.mesh @grid_2 ["g0"=2]
// CHECK-LABEL: func.func @resolve_conflicting_annotations(
// CHECK-SAME: %arg1: tensor<3x2xf32> {shardc.sharding = #shardc.sharding<@grid_2, [{}, {}]>}
func.func @resolve_conflicting_annotations(
    %x: tensor<2x3xf32> {shardc.sharding = #shardc.sharding<@grid_2, [{"g0"}, {}]>},
    %y: tensor<3x2xf32>) -> tensor<2x2xf32> {
  %d = shardc.matmul %x, %y {shardc.sharding = #shardc.sharding<@grid_2, [{}, {}]>} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  return %d : tensor<2x2xf32>
}

//--- resolve_conflicting_annotations.peer.mlir
// MLIR gathers x before the product; shardc computes the product's rows
// where x's rows are and gathers the smaller product.
shardc.mesh @grid_2 ["g0"=2]
func.func @resolve_conflicting_annotations(
    %x: tensor<2x3xf32> {shardc.sharding = #shardc.sharding<@grid_2, [{"g0"}, {}]>},
    %y: tensor<3x2xf32> {shardc.sharding = #shardc.sharding<@grid_2, [{}, {}]>})
    -> (tensor<2x2xf32> {shardc.sharding = #shardc.sharding<@grid_2, [{}, {}]>}) {
  %xr = shardc.sharding_constraint %x <@grid_2, [{}, {}]> : tensor<2x3xf32>
  %d = shardc.matmul %xr, %y {shardc.sharding = #shardc.sharding<@grid_2, [{}, {}]>} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  return %d : tensor<2x2xf32>
}

//--- mlp_2d_weight_stationary.mlir
// @mlp_2d_weight_stationary (arXiv 2211.05102, fig. 2b): every value but
// the sigmoid's is annotated; MLIR's test notes its plan reshards more than
// needed. The grid's sizes are unknown in the test; here 2x2x2.
shardc.mesh @grid_3d ["g0"=2, "g1"=2, "g2"=2]
// CHECK-LABEL: func.func @mlp_2d_weight_stationary(
func.func @mlp_2d_weight_stationary(
    %x: tensor<2x4x8xf32> {shardc.sharding = #shardc.sharding<@grid_3d, [{}, {}, {"g0", "g1", "g2"}]>},
    %w0: tensor<2x8x32xf32> {shardc.sharding = #shardc.sharding<@grid_3d, [{}, {"g0"}, {"g1", "g2"}]>},
    %w1: tensor<2x32x8xf32> {shardc.sharding = #shardc.sharding<@grid_3d, [{}, {"g1", "g2"}, {"g0"}]>})
    -> (tensor<2x4x8xf32> {shardc.sharding = #shardc.sharding<@grid_3d, [{}, {}, {"g0", "g1", "g2"}]>}) {
  %h = shardc.matmul %x, %w0 {shardc.sharding = #shardc.sharding<@grid_3d, [{}, {}, {"g0", "g1", "g2"}]>} : (tensor<2x4x8xf32>, tensor<2x8x32xf32>) -> tensor<2x4x32xf32>
  // CHECK: shardc.sigmoid {{.*}} {shardc.sharding = #shardc.sharding<@grid_3d, [{}, {}, {"g0", "g1", "g2"}]>}
  %s = shardc.sigmoid %h : tensor<2x4x32xf32>
  %y = shardc.matmul %s, %w1 {shardc.sharding = #shardc.sharding<@grid_3d, [{}, {}, {"g0", "g1", "g2"}]>} : (tensor<2x4x32xf32>, tensor<2x32x8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

//--- mlp_2d_weight_stationary.peer.mlir
// MLIR's plan gathers each matmul's lhs and reshards its weight to split
// the output columns; shardc's partitioner keeps the contraction split and
// reduce-scatters.
shardc.mesh @grid_3d ["g0"=2, "g1"=2, "g2"=2]
func.func @mlp_2d_weight_stationary(
    %x: tensor<2x4x8xf32> {shardc.sharding = #shardc.sharding<@grid_3d, [{}, {}, {"g0", "g1", "g2"}]>},
    %w0: tensor<2x8x32xf32> {shardc.sharding = #shardc.sharding<@grid_3d, [{}, {"g0"}, {"g1", "g2"}]>},
    %w1: tensor<2x32x8xf32> {shardc.sharding = #shardc.sharding<@grid_3d, [{}, {"g1", "g2"}, {"g0"}]>})
    -> (tensor<2x4x8xf32> {shardc.sharding = #shardc.sharding<@grid_3d, [{}, {}, {"g0", "g1", "g2"}]>}) {
  %xr = shardc.sharding_constraint %x <@grid_3d, [{}, {}, {}]> : tensor<2x4x8xf32>
  %w0r = shardc.sharding_constraint %w0 <@grid_3d, [{}, {}, {"g0", "g1", "g2"}]> : tensor<2x8x32xf32>
  %h = shardc.matmul %xr, %w0r {shardc.sharding = #shardc.sharding<@grid_3d, [{}, {}, {"g0", "g1", "g2"}]>} : (tensor<2x4x8xf32>, tensor<2x8x32xf32>) -> tensor<2x4x32xf32>
  %s = shardc.sigmoid %h {shardc.sharding = #shardc.sharding<@grid_3d, [{}, {}, {"g0", "g1", "g2"}]>} : tensor<2x4x32xf32>
  %sr = shardc.sharding_constraint %s <@grid_3d, [{}, {}, {}]> : tensor<2x4x32xf32>
  %w1r = shardc.sharding_constraint %w1 <@grid_3d, [{}, {}, {"g0", "g1", "g2"}]> : tensor<2x32x8xf32>
  %y = shardc.matmul %sr, %w1r {shardc.sharding = #shardc.sharding<@grid_3d, [{}, {}, {"g0", "g1", "g2"}]>} : (tensor<2x4x32xf32>, tensor<2x32x8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

//--- elementwise_duplicated_chain.mlir
// @elementwise_duplicated_chain: a replicated output keeps the chain
// replicated.
shardc.mesh @grid_2d ["g0"=2, "g1"=4]
// CHECK-LABEL: func.func @elementwise_duplicated_chain(
// CHECK-SAME: %arg0: tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@grid_2d, [{}, {}]>}
func.func @elementwise_duplicated_chain(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK: shardc.sigmoid {{.*}} {shardc.sharding = #shardc.sharding<@grid_2d, [{}, {}]>}
  %s = shardc.sigmoid %x : tensor<8x16xf32>
  // CHECK: shardc.sigmoid {{.*}} {shardc.sharding = #shardc.sharding<@grid_2d, [{}, {}]>}
  %t = shardc.sigmoid %s : tensor<8x16xf32>
  %c = shardc.sharding_constraint %t <@grid_2d, [{}, {}]> : tensor<8x16xf32>
  return %c : tensor<8x16xf32>
}

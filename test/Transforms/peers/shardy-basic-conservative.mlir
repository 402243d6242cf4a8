// Shardy's basic propagation tests with conservative propagation (no
// sub-axes), as shardc graphs: shardc never splits an axis, so it agrees.
// Source: openxla/shardy, shardy/dialect/sdy/transforms/propagation/test/
// basic_propagation_conservative.mlir; each case names the test function it
// translates. Conventions as in shardy-op-priority.mlir.
//
// Not translated:
//   slice: ops shardc lacks (slice).

// RUN: split-file %s %t
// RUN: shardc-opt --shardc-propagate %t/reshape_split_dim.mlir | FileCheck %t/reshape_split_dim.mlir
// RUN: shardc simulate %t/reshape_split_dim.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/multi_axis_major_dim_uses_all_axes.mlir | FileCheck %t/multi_axis_major_dim_uses_all_axes.mlir
// RUN: shardc simulate %t/multi_axis_major_dim_uses_all_axes.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/multi_axis_major_dim_not_fully_sharded.mlir | FileCheck %t/multi_axis_major_dim_not_fully_sharded.mlir
// RUN: shardc simulate %t/multi_axis_major_dim_not_fully_sharded.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM
// RUN: shardc-opt --shardc-propagate %t/multi_axes_split_fully_sharded.mlir | FileCheck %t/multi_axes_split_fully_sharded.mlir
// RUN: shardc simulate %t/multi_axes_split_fully_sharded.mlir --seed 0 --quiet | FileCheck %s --check-prefix=SIM

// Every partitioned program matches the unsharded one on every device.
// SIM: {{ OK$}}

//--- reshape_split_dim.mlir
// @reshape_split_dim: "a"=4 would straddle the [2,4] split of dim 0, so
// nothing reaches the result.
shardc.mesh @mesh ["a"=4, "b"=2]
// CHECK-LABEL: func.func @reshape_split_dim(
func.func @reshape_split_dim(%x: tensor<8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}]>}) -> tensor<2x4xf32> {
  // CHECK: shardc.reshape {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}
  %r = shardc.reshape %x : (tensor<8xf32>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

//--- multi_axis_major_dim_uses_all_axes.mlir
// @multi_axis_major_dim_uses_all_axes
shardc.mesh @mesh ["a"=4, "b"=2]
// CHECK-LABEL: func.func @multi_axis_major_dim_uses_all_axes(
func.func @multi_axis_major_dim_uses_all_axes(%x: tensor<32xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}]>}) -> tensor<16x2xf32> {
  // CHECK: shardc.reshape {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}, {}]>}
  %r = shardc.reshape %x : (tensor<32xf32>) -> tensor<16x2xf32>
  return %r : tensor<16x2xf32>
}

//--- multi_axis_major_dim_not_fully_sharded.mlir
// @multi_axis_major_dim_not_fully_sharded: "b"=8 does not divide what "a"
// leaves of the major dim; only "a" goes through.
shardc.mesh @mesh ["a"=2, "b"=8]
// CHECK-LABEL: func.func @multi_axis_major_dim_not_fully_sharded(
func.func @multi_axis_major_dim_not_fully_sharded(%x: tensor<16xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}]>}) -> tensor<4x4xf32> {
  // CHECK: shardc.reshape {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {}]>}
  %r = shardc.reshape %x : (tensor<16xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

//--- multi_axes_split_fully_sharded.mlir
// @multi_axes_split_fully_sharded
shardc.mesh @mesh ["a"=16, "b"=2]
// CHECK-LABEL: func.func @multi_axes_split_fully_sharded(
func.func @multi_axes_split_fully_sharded(%x: tensor<32xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a", "b"}]>}) -> tensor<16x2xf32> {
  // CHECK: shardc.reshape {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}
  %r = shardc.reshape %x : (tensor<32xf32>) -> tensor<16x2xf32>
  return %r : tensor<16x2xf32>
}

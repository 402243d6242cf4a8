// RUN: shardc-opt --shardc-propagate %s | FileCheck %s
// Reshapes are followed factor by factor (docs/propagation.md).

shardc.mesh @mesh ["y"=4, "x"=2]

// [8,4] -> [32]: factors f8, f4; the merged dim is (f8 f4), so a split of
// the major dim is a split of the merged one.
// CHECK-LABEL: func.func @merge_major
// CHECK-SAME: -> (tensor<32xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"y"}]>})
func.func @merge_major(%a: tensor<8x4xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {}]>}) -> tensor<32xf32> {
  %r = shardc.reshape %a : (tensor<8x4xf32>) -> tensor<32xf32>
  return %r : tensor<32xf32>
}

// A fully split major dim lets the minor dim's split through too.
// CHECK-LABEL: func.func @merge_both
// CHECK-SAME: -> (tensor<32xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"y", "x"}]>})
func.func @merge_both(%a: tensor<4x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {"x"}]>}) -> tensor<32xf32> {
  %r = shardc.reshape %a : (tensor<4x8xf32>) -> tensor<32xf32>
  return %r : tensor<32xf32>
}

// A split of the minor dim alone is strided in the merged dim: not followed.
// CHECK-LABEL: func.func @merge_minor
// CHECK-SAME: -> (tensor<32xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}]>})
func.func @merge_minor(%a: tensor<8x4xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"x"}]>}) -> tensor<32xf32> {
  %r = shardc.reshape %a : (tensor<8x4xf32>) -> tensor<32xf32>
  return %r : tensor<32xf32>
}

// [32] -> [8,4], the inverse: "y" (4) and then "x" (2) both fit in f8.
// CHECK-LABEL: func.func @split
// CHECK: shardc.reshape {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"y", "x"}, {}]>}
func.func @split(%a: tensor<32xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"y", "x"}]>}) -> tensor<8x4xf32> {
  %r = shardc.reshape %a : (tensor<32xf32>) -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// [32] -> [2,16]: "y" (4) straddles f2 and f16, so it is not followed.
// CHECK-LABEL: func.func @split_straddles
// CHECK: shardc.reshape {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}
func.func @split_straddles(%a: tensor<32xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"y"}]>}) -> tensor<2x16xf32> {
  %r = shardc.reshape %a : (tensor<32xf32>) -> tensor<2x16xf32>
  return %r : tensor<2x16xf32>
}

// Backward through a reshape: the result's sharding goes to the operand.
// CHECK-LABEL: func.func @backward
// CHECK-SAME: %{{.*}}: tensor<8x4xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {}]>}
func.func @backward(%a: tensor<8x4xf32>) -> (tensor<32xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"x"}]>}) {
  %r = shardc.reshape %a : (tensor<8x4xf32>) -> tensor<32xf32>
  return %r : tensor<32xf32>
}

// [6,4] -> [4,6] moves elements between rows whatever the split: its
// factors need replication, so nothing crosses it.
// CHECK-LABEL: func.func @unfollowable
// CHECK: shardc.reshape {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}
func.func @unfollowable(%a: tensor<6x4xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"y"}]>}) -> tensor<4x6xf32> {
  %r = shardc.reshape %a : (tensor<6x4xf32>) -> tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}

// Groups are independent: [2,3,8] -> [6,8]: the [2,3] -> [6] group is
// (f2 f3), the 8 is its own factor.
// CHECK-LABEL: func.func @groups
// CHECK: shardc.reshape {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {"y"}]>}
func.func @groups(%a: tensor<2x3x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {}, {"y"}]>}) -> tensor<6x8xf32> {
  %r = shardc.reshape %a : (tensor<2x3x8xf32>) -> tensor<6x8xf32>
  return %r : tensor<6x8xf32>
}

// Size-1 dims have no factor: [1,8] -> [8,1] keeps the split.
// CHECK-LABEL: func.func @unit_dims
// CHECK: shardc.reshape {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {}]>}
func.func @unit_dims(%a: tensor<1x8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"y"}]>}) -> tensor<8x1xf32> {
  %r = shardc.reshape %a : (tensor<1x8xf32>) -> tensor<8x1xf32>
  return %r : tensor<8x1xf32>
}

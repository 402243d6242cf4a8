// RUN: shardc-opt --shardc-propagate %s > %t.once.mlir
// RUN: shardc-opt --shardc-propagate %t.once.mlir > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir
// RUN: FileCheck %s < %t.twice.mlir
// Running the pass on its own output changes nothing, and every value ends
// with a sharding (replicated when nothing reached it).

shardc.mesh @mesh ["y"=4, "x"=2]

// CHECK-LABEL: func.func @mixed
// CHECK-SAME: %{{.*}}: tensor<16x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {}]>}
// CHECK-SAME: %{{.*}}: tensor<64x32xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"x"}]>}
// CHECK-SAME: %{{.*}}: tensor<8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}]>}
// CHECK-SAME: -> (tensor<16x32xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {"x"}]>}, tensor<16x32xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {}]>}, tensor<8xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}]>})
func.func @mixed(%x: tensor<16x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {}]>},
                 %w: tensor<64x32xf32>,
                 %u: tensor<8xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>, tensor<8xf32>) {
  // The constraint reaches back through the matmul to %w.
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {"x"}]>}
  %h = shardc.matmul %x, %w : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  // CHECK: shardc.sharding_constraint {{.*}} <@mesh, [{"y"}, {"x"}]> {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {"x"}]>}
  %c = shardc.sharding_constraint %h <@mesh, [{"y"}, {"x"}]> : tensor<16x32xf32>
  // CHECK: shardc.constant {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {"x"}]>}
  %k = shardc.constant dense<1.0> : tensor<16x32xf32>
  // CHECK: shardc.add {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {"x"}]>}
  %o = shardc.add %c, %k : tensor<16x32xf32>
  // A user-given partial sharding is kept as is, and not propagated.
  // CHECK: shardc.relu {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {}], partial = {"x"}>}
  %p = shardc.relu %o {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {}], partial = {"x"}>} : tensor<16x32xf32>
  // CHECK: shardc.neg {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {}]>}
  %q = shardc.neg %p : tensor<16x32xf32>
  // CHECK: shardc.exp {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}]>}
  %e = shardc.exp %u : tensor<8xf32>
  return %o, %q, %e : tensor<16x32xf32>, tensor<16x32xf32>, tensor<8xf32>
}

// A function already partitioned is left alone.
// CHECK-LABEL: func.func @spmd
// CHECK-NOT: shardc.sharding
// CHECK: return
func.func @spmd(%v: tensor<4x32xf32>) -> tensor<4x32xf32> attributes {shardc.spmd} {
  %r = shardc.relu %v : tensor<4x32xf32>
  return %r : tensor<4x32xf32>
}

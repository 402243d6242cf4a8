// RUN: shardc-opt --shardc-print-sharding-rules %s | FileCheck %s
// RUN: shardc-opt --shardc-print-sharding-rules %s | shardc-opt | FileCheck %s
// The sharding rule of every tensor op of the dialect, printed as
// #shardc.sharding_rule (which the second run parses back and prints again).

shardc.mesh @mesh ["x"=2, "y"=4]

// CHECK-LABEL: func.func @unary
func.func @unary(%a: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK: shardc.relu {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %0 = shardc.relu %a : tensor<8x16xf32>
  // CHECK: shardc.gelu {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %1 = shardc.gelu %0 : tensor<8x16xf32>
  // CHECK: shardc.exp {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %2 = shardc.exp %1 : tensor<8x16xf32>
  // CHECK: shardc.log {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %3 = shardc.log %2 : tensor<8x16xf32>
  // CHECK: shardc.neg {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %4 = shardc.neg %3 : tensor<8x16xf32>
  // CHECK: shardc.tanh {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %5 = shardc.tanh %4 : tensor<8x16xf32>
  // CHECK: shardc.sqrt {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %6 = shardc.sqrt %5 : tensor<8x16xf32>
  // CHECK: shardc.rsqrt {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %7 = shardc.rsqrt %6 : tensor<8x16xf32>
  // CHECK: shardc.sigmoid {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %8 = shardc.sigmoid %7 : tensor<8x16xf32>
  // CHECK: shardc.step {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %9 = shardc.step %8 : tensor<8x16xf32>
  // CHECK: shardc.abs {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %10 = shardc.abs %9 : tensor<8x16xf32>
  // CHECK: shardc.erf {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %11 = shardc.erf %10 : tensor<8x16xf32>
  // CHECK: shardc.stop_gradient {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %12 = shardc.stop_gradient %11 : tensor<8x16xf32>
  // CHECK: shardc.sin {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %13 = shardc.sin %12 : tensor<8x16xf32>
  // CHECK: shardc.cos {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %14 = shardc.cos %13 : tensor<8x16xf32>
  return %14 : tensor<8x16xf32>
}

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK: shardc.add {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1], [f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %0 = shardc.add %a, %b : tensor<8x16xf32>
  // CHECK: shardc.sub {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1], [f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %1 = shardc.sub %0, %b : tensor<8x16xf32>
  // CHECK: shardc.mul {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1], [f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %2 = shardc.mul %1, %b : tensor<8x16xf32>
  // CHECK: shardc.div {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1], [f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %3 = shardc.div %2, %b : tensor<8x16xf32>
  // CHECK: shardc.max {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1], [f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %4 = shardc.max %3, %b : tensor<8x16xf32>
  // CHECK: shardc.min {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1], [f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %5 = shardc.min %4, %b : tensor<8x16xf32>
  // CHECK: shardc.pow {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1], [f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %6 = shardc.pow %5, %b : tensor<8x16xf32>
  return %6 : tensor<8x16xf32>
}

// CHECK-LABEL: func.func @contractions
func.func @contractions(%x: tensor<16x64xf32>, %w: tensor<64x128xf32>,
                        %bx: tensor<4x16x64xf32>, %bw: tensor<4x64x8xf32>,
                        %q: tensor<2x8x16xf32>, %k: tensor<2x16x8xf32>) {
  // The factors are numbered as the rule creates them: batch, contracting,
  // then free dims.
  // CHECK: shardc.matmul {{.*}}sharding_rule = #shardc.sharding_rule<([f1, f0], [f0, f2]) -> ([f1, f2]) {f0=64 reduction, f1=16, f2=128}>
  %0 = shardc.matmul %x, %w : (tensor<16x64xf32>, tensor<64x128xf32>) -> tensor<16x128xf32>
  // Batched: the batch dim is a parallel factor shared by all three.
  // CHECK: shardc.matmul {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f2, f1], [f0, f1, f3]) -> ([f0, f2, f3]) {f0=4, f1=64 reduction, f2=16, f3=8}>
  %1 = shardc.matmul %bx, %bw : (tensor<4x16x64xf32>, tensor<4x64x8xf32>) -> tensor<4x16x8xf32>
  // CHECK: shardc.dot_general {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f2, f1], [f0, f1, f3]) -> ([f0, f2, f3]) {f0=2, f1=16 reduction, f2=8, f3=8}>
  %2 = shardc.dot_general %q, %k batch = [0] x [0], contract = [2] x [1] : (tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32>
  return
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%a: tensor<8x16xf32>) -> (tensor<8xf32>, tensor<f32>) {
  // CHECK: shardc.reduce_sum {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1]) -> ([f0]) {f0=8, f1=16 reduction}>
  %0 = shardc.reduce_sum %a dims = [1] : (tensor<8x16xf32>) -> tensor<8xf32>
  // A max over split dims is each block's max, then an all_reduce max.
  // CHECK: shardc.reduce_max {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1]) -> ([]) {f0=8 max_reduction, f1=16 max_reduction}>
  %1 = shardc.reduce_max %a dims = [0, 1] : (tensor<8x16xf32>) -> tensor<f32>
  return %0, %1 : tensor<8xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @layout
func.func @layout(%a: tensor<8x16xf32>, %v: tensor<16xf32>, %m: tensor<6x4xf32>,
                  %row: tensor<1x16xf32>) {
  // CHECK: shardc.transpose {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1]) -> ([f1, f0]) {f0=8, f1=16}>
  %0 = shardc.transpose %a permutation = [1, 0] : (tensor<8x16xf32>) -> tensor<16x8xf32>
  // Split: one dim becomes two, a compound dim in the operand.
  // CHECK: shardc.reshape {{.*}}sharding_rule = #shardc.sharding_rule<([(f0 f1), f2]) -> ([f0, f1, f2]) {f0=2, f1=4, f2=16}>
  %1 = shardc.reshape %a : (tensor<8x16xf32>) -> tensor<2x4x16xf32>
  // Merge: two dims become one, a compound dim in the result.
  // CHECK: shardc.reshape {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1]) -> ([(f0 f1)]) {f0=8, f1=16}>
  %2 = shardc.reshape %a : (tensor<8x16xf32>) -> tensor<128xf32>
  // Unfollowable: [6,4] -> [4,6] moves elements whatever the sharding.
  // CHECK: shardc.reshape {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1]) -> ([f2, f3]) {f0=6 need_replication, f1=4 need_replication, f2=4 need_replication, f3=6 need_replication}>
  %3 = shardc.reshape %m : (tensor<6x4xf32>) -> tensor<4x6xf32>
  // CHECK: shardc.broadcast_in_dim {{.*}}sharding_rule = #shardc.sharding_rule<([f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %4 = shardc.broadcast_in_dim %v dims = [1] : (tensor<16xf32>) -> tensor<8x16xf32>
  // An expanded size-1 dim has no factor: ().
  // CHECK: shardc.broadcast_in_dim {{.*}}sharding_rule = #shardc.sharding_rule<([(), f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %5 = shardc.broadcast_in_dim %row dims = [0, 1] : (tensor<1x16xf32>) -> tensor<8x16xf32>
  return
}

// CHECK-LABEL: func.func @slicing
func.func @slicing(%a: tensor<8x48xf32>, %b: tensor<8x16xf32>, %z: tensor<f32>) {
  // The sliced dim needs replication (one factor per tensor: their sizes
  // differ); the other dim passes through.
  // CHECK: shardc.slice {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1]) -> ([f0, f2]) {f0=8, f1=48 need_replication, f2=16 need_replication}>
  %0 = shardc.slice %a start = [0, 16] limit = [8, 32] : (tensor<8x48xf32>) -> tensor<8x16xf32>
  // A strided slice of dim 0 keeps dim 1 whole.
  // CHECK: shardc.slice {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f2]) -> ([f1, f2]) {f0=8 need_replication, f1=4 need_replication, f2=48}>
  %1 = shardc.slice %a start = [0, 0] limit = [8, 48] stride = [2, 1] : (tensor<8x48xf32>) -> tensor<4x48xf32>
  // CHECK: shardc.concatenate {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1], [f0, f2], [f0, f3]) -> ([f0, f4]) {f0=8, f1=48 need_replication, f2=16 need_replication, f3=16 need_replication, f4=80 need_replication}>
  %2 = shardc.concatenate %a, %b, %b dimension = 1 : (tensor<8x48xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x80xf32>
  // The padding value is a 0-d tensor: no dims, no factors.
  // CHECK: shardc.pad {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f2], []) -> ([f1, f2]) {f0=8 need_replication, f1=11 need_replication, f2=16}>
  %3 = shardc.pad %b, %z low = [1, 0] high = [2, 0] : (tensor<8x16xf32>, tensor<f32>) -> tensor<11x16xf32>
  return
}

// CHECK-LABEL: func.func @others
func.func @others(%a: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK: shardc.constant {{.*}}sharding_rule = #shardc.sharding_rule<() -> ([f0, f1]) {f0=8, f1=16}>
  %0 = shardc.constant dense<0.5> : tensor<8x16xf32>
  // CHECK: shardc.sharding_constraint {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %1 = shardc.sharding_constraint %0 <@mesh, [{"y"}, {}]> : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// The element-type ops: compare, select and convert are elementwise; every
// dim of iota is parallel (a device holding a block of the counted dim adds
// its offset, from axis_index).
// CHECK-LABEL: func.func @element_types
func.func @element_types(%a: tensor<8x16xi32>, %x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK: shardc.iota {{.*}}sharding_rule = #shardc.sharding_rule<() -> ([f0, f1]) {f0=8, f1=16}>
  %i = shardc.iota dimension = 1 : tensor<8x16xi32>
  // CHECK: shardc.compare {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1], [f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %m = shardc.compare %a, %i direction = "LT" : (tensor<8x16xi32>, tensor<8x16xi32>) -> tensor<8x16xi1>
  // CHECK: shardc.convert {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %f = shardc.convert %a dtype = f32 : (tensor<8x16xi32>) -> tensor<8x16xf32>
  // CHECK: shardc.select {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1], [f0, f1], [f0, f1]) -> ([f0, f1]) {f0=8, f1=16}>
  %s = shardc.select %m, %x, %f : (tensor<8x16xi1>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %s : tensor<8x16xf32>
}

// gather sums its table's gathered axis away (a device holding a block of
// the rows contributes the lookups of its ids: the result is partial); the
// ids' dims and the table's other dims pass through. scatter_add keeps the
// table's dims and sums the ids' away. A boolean table cannot be summed:
// its gathered axis needs replication.
// CHECK-LABEL: func.func @indexing
func.func @indexing(%t: tensor<16x64xf32>, %ids: tensor<8x4xi32>, %u: tensor<8x4x64xf32>, %m: tensor<16x64xi1>) -> tensor<16x64xf32> {
  // CHECK: shardc.gather {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1], [f2, f3]) -> ([f2, f3, f1]) {f0=16 reduction, f1=64, f2=8, f3=4}>
  %e = shardc.gather %t, %ids axis = 0 : (tensor<16x64xf32>, tensor<8x4xi32>) -> tensor<8x4x64xf32>
  // CHECK: shardc.gather {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1], [f2, f3]) -> ([f0, f2, f3]) {f0=16, f1=64 reduction, f2=8, f3=4}>
  %c = shardc.gather %t, %ids axis = 1 : (tensor<16x64xf32>, tensor<8x4xi32>) -> tensor<16x8x4xf32>
  // CHECK: shardc.gather {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1], [f2, f3]) -> ([f2, f3, f1]) {f0=16 need_replication, f1=64, f2=8, f3=4}>
  %b = shardc.gather %m, %ids axis = 0 : (tensor<16x64xi1>, tensor<8x4xi32>) -> tensor<8x4x64xi1>
  // CHECK: shardc.scatter_add {{.*}}sharding_rule = #shardc.sharding_rule<([f0, f1], [f2, f3], [f2, f3, f1]) -> ([f0, f1]) {f0=16, f1=64, f2=8 reduction, f3=4 reduction}>
  %s = shardc.scatter_add %t, %ids, %u axis = 0 : (tensor<16x64xf32>, tensor<8x4xi32>, tensor<8x4x64xf32>) -> tensor<16x64xf32>
  return %s : tensor<16x64xf32>
}

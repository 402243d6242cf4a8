// RUN: shardc-opt --shardc-cleanup %s --split-input-file | FileCheck %s

shardc.mesh @mesh ["x"=2, "y"=1]

// CHECK-LABEL: func.func @gather_then_slice
// CHECK-NEXT: return %arg0
func.func @gather_then_slice(%a: tensor<4x32xf32>) -> tensor<4x32xf32> attributes {shardc.spmd} {
  %g = shardc.all_gather %a on @mesh axes = ["x"] dim = 1 : tensor<4x32xf32> -> tensor<4x64xf32>
  %s = shardc.all_slice %g on @mesh axes = ["x"] dim = 1 : tensor<4x64xf32> -> tensor<4x32xf32>
  return %s : tensor<4x32xf32>
}

// CHECK-LABEL: func.func @reduce_then_slice
// CHECK-NEXT: %[[R:.*]] = shardc.reduce_scatter %arg0 on @mesh axes = ["x"] dim = 1 : tensor<4x64xf32> -> tensor<4x32xf32>
// CHECK-NEXT: return %[[R]]
func.func @reduce_then_slice(%z: tensor<4x64xf32>) -> tensor<4x32xf32> attributes {shardc.spmd} {
  %s = shardc.all_reduce %z on @mesh axes = ["x"] : tensor<4x64xf32>
  %r = shardc.all_slice %s on @mesh axes = ["x"] dim = 1 : tensor<4x64xf32> -> tensor<4x32xf32>
  return %r : tensor<4x32xf32>
}

// Different dims: not a round trip, kept.
// CHECK-LABEL: func.func @gather_then_other_slice
// CHECK: shardc.all_gather
// CHECK: shardc.all_slice
func.func @gather_then_other_slice(%a: tensor<4x32xf32>) -> tensor<2x64xf32> attributes {shardc.spmd} {
  %g = shardc.all_gather %a on @mesh axes = ["x"] dim = 1 : tensor<4x32xf32> -> tensor<4x64xf32>
  %s = shardc.all_slice %g on @mesh axes = ["x"] dim = 0 : tensor<4x64xf32> -> tensor<2x64xf32>
  return %s : tensor<2x64xf32>
}

// CHECK-LABEL: func.func @identity_permute
// CHECK-NEXT: return %arg0
func.func @identity_permute(%a: tensor<4x32xf32>) -> tensor<4x32xf32> attributes {shardc.spmd} {
  %p = shardc.collective_permute %a on @mesh axes = ["x"] pairs = [[0, 0], [1, 1]] : tensor<4x32xf32>
  return %p : tensor<4x32xf32>
}

// CHECK-LABEL: func.func @real_permute
// CHECK: shardc.collective_permute
func.func @real_permute(%a: tensor<4x32xf32>) -> tensor<4x32xf32> attributes {shardc.spmd} {
  %p = shardc.collective_permute %a on @mesh axes = ["x"] pairs = [[0, 1], [1, 0]] : tensor<4x32xf32>
  return %p : tensor<4x32xf32>
}

// An axis of size 1 moves nothing.
// CHECK-LABEL: func.func @size_one_axis
// CHECK-NEXT: return %arg0
func.func @size_one_axis(%a: tensor<4x32xf32>) -> tensor<4x32xf32> attributes {shardc.spmd} {
  %r = shardc.all_reduce %a on @mesh axes = ["y"] : tensor<4x32xf32>
  return %r : tensor<4x32xf32>
}

// -----

// Regression (found by shardc-difftest): two different constants of one
// type must stay two constants through the rewrite driver. The add of the
// two folds (its kernel on constants) to their sum, which it would not be
// had the driver taken them for one.
shardc.mesh @mesh ["x"=2]
// CHECK-LABEL: func.func @distinct_constants
// CHECK-NEXT: shardc.constant dense<[1.500000e+00, 2.500000e+00]> : tensor<2xf32>
func.func @distinct_constants() -> tensor<2xf32> attributes {shardc.spmd} {
  %a = shardc.constant dense<0.5> : tensor<2xf32>
  %b = shardc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %c = shardc.add %a, %b : tensor<2xf32>
  return %c : tensor<2xf32>
}

// -----

// A slice of a splat constant is the smaller splat: no slicing at run time.
// CHECK-LABEL: func.func @slice_of_splat
// CHECK-NEXT: %[[C:.*]] = shardc.constant dense<2.500000e-01> : tensor<4x32xf32>
// CHECK-NEXT: return %[[C]]
shardc.mesh @mesh3 ["x"=2]
func.func @slice_of_splat() -> tensor<4x32xf32> attributes {shardc.spmd} {
  %c = shardc.constant dense<0.25> : tensor<4x64xf32>
  %s = shardc.all_slice %c on @mesh3 axes = ["x"] dim = 1 : tensor<4x64xf32> -> tensor<4x32xf32>
  return %s : tensor<4x32xf32>
}

// -----

// Equal ops become one: the padding mask an uneven dim needs, built once per
// consumer by the partitioner, is computed once. Ops that differ in an
// attribute (the iota's dimension, the compare's direction) or an operand
// stay apart.
// CHECK-LABEL: func.func @equal_ops_once
// CHECK-COUNT-1: shardc.axis_index
// CHECK-NOT: shardc.axis_index
shardc.mesh @mesh4 ["x"=4]
func.func @equal_ops_once(%bound: tensor<63xi64>) -> (tensor<63xi1>, tensor<63xi1>, tensor<63xi1>) attributes {shardc.spmd} {
  %i0 = shardc.axis_index on @mesh4 axes = ["x"] : tensor<i64>
  %r0 = shardc.iota dimension = 0 : tensor<63xi64>
  %b0 = shardc.broadcast_in_dim %i0 dims = [] : (tensor<i64>) -> tensor<63xi64>
  %s0 = shardc.add %r0, %b0 : tensor<63xi64>
  %m0 = shardc.compare %s0, %bound direction = "LT" : (tensor<63xi64>, tensor<63xi64>) -> tensor<63xi1>
  %i1 = shardc.axis_index on @mesh4 axes = ["x"] : tensor<i64>
  %r1 = shardc.iota dimension = 0 : tensor<63xi64>
  %b1 = shardc.broadcast_in_dim %i1 dims = [] : (tensor<i64>) -> tensor<63xi64>
  %s1 = shardc.add %r1, %b1 : tensor<63xi64>
  %m1 = shardc.compare %s1, %bound direction = "LT" : (tensor<63xi64>, tensor<63xi64>) -> tensor<63xi1>
  %m2 = shardc.compare %s1, %bound direction = "LE" : (tensor<63xi64>, tensor<63xi64>) -> tensor<63xi1>
  return %m0, %m1, %m2 : tensor<63xi1>, tensor<63xi1>, tensor<63xi1>
}
// CHECK: %[[M:.*]] = shardc.compare %{{.*}}, %arg0 direction = "LT"
// CHECK: %[[N:.*]] = shardc.compare %{{.*}}, %arg0 direction = "LE"
// CHECK: return %[[M]], %[[M]], %[[N]]

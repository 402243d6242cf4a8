// RUN: shardc-opt --shardc-propagate=explain=true %s -o /dev/null 2>&1 | FileCheck %s
// Conflicts and where shardings come from, as the explain remarks say them.

shardc.mesh @mesh ["y"=4, "x"=2]

// The 2D MLP's first matmul. The contracting factor k (f0) is claimed as
// "x" by x and as "y" by w0: same priority, w0 is larger, "y" wins. Then
// "y" is also i's (f1): the parallel factor keeps it, so k ends unsharded.
// The result's rows are split as x's ("y"), its columns as w0's ("x"):
// each dim names the annotation it came from.
// CHECK: propagate-conflict.mlir:[[@LINE+1]]:19: remark: input "x" is #shardc.sharding<@mesh, [{"y"}, {"x"}]> (annotation: input "x")
func.func @mlp_2d(%x: tensor<16x64xf32> {shardc.name = "x", shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {"x"}]>},
                  %w0: tensor<64x128xf32> {shardc.name = "w0", shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {"x"}]>})
    -> tensor<16x128xf32> {
  // CHECK: propagate-conflict.mlir:[[@LINE+4]]:8: remark: conflict on factor f0 (size 64, reduction) of 'shardc.matmul': {"x"} from operand #0 (input "x") lost to {"y"} from operand #1 (input "w0") (same priority, the larger tensor is kept)
  // CHECK: propagate-conflict.mlir:[[@LINE+3]]:8: remark: conflict on mesh axis "y" of 'shardc.matmul': factor f1 (size 16, parallel), from operand #0 (input "x"), keeps it; factor f0 (size 64, reduction), from operand #1 (input "w0"), drops {"y"} (a parallel factor beats a reduction factor)
  // CHECK-NOT: conflict
  // CHECK: propagate-conflict.mlir:[[@LINE+1]]:8: remark: result #0 of 'shardc.matmul' is #shardc.sharding<@mesh, [{"y"}, {"x"}]> (propagated from input "x" (dim 0) and input "w0" (dim 1) through 'shardc.matmul' at propagate-conflict.mlir:[[@LINE+1]]:8)
  %h = shardc.matmul %x, %w0 : (tensor<16x64xf32>, tensor<64x128xf32>) -> tensor<16x128xf32>
  // CHECK: propagate-conflict.mlir:[[@LINE+1]]:8: remark: result #0 of 'shardc.relu' is #shardc.sharding<@mesh, [{"y"}, {"x"}]> (propagated from input "x" (dim 0) and input "w0" (dim 1) through 'shardc.relu' at propagate-conflict.mlir:[[@LINE+1]]:8)
  %u = shardc.relu %h : tensor<16x128xf32>
  // CHECK: propagate-conflict.mlir:[[@LINE+1]]:3: remark: output #0 is #shardc.sharding<@mesh, [{"y"}, {"x"}]> (propagated from input "x" (dim 0) and input "w0" (dim 1) through 'func.return' at propagate-conflict.mlir:[[@LINE+1]]:3)
  return %u : tensor<16x128xf32>
}

// A sharding_constraint is a user annotation: it beats the sharding
// propagated from "a", however it got there.
// CHECK-LABEL: remark: input "a"
func.func @priority(%a: tensor<16x8xf32> {shardc.name = "a", shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {}]>},
                    %b: tensor<16x8xf32> {shardc.name = "b"}) -> tensor<16x8xf32> {
  // CHECK: remark: input "b" is #shardc.sharding<@mesh, [{"x"}, {}]> (propagated from sharding_constraint at propagate-conflict.mlir:[[@LINE+4]]:8 through 'shardc.sharding_constraint' at propagate-conflict.mlir:[[@LINE+4]]:8)
  // CHECK: propagate-conflict.mlir:[[@LINE+1]]:8: remark: result #0 of 'shardc.relu' is #shardc.sharding<@mesh, [{"y"}, {}]> (propagated from input "a"
  %r = shardc.relu %a : tensor<16x8xf32>
  // CHECK: propagate-conflict.mlir:[[@LINE+1]]:8: remark: result #0 of 'shardc.sharding_constraint' is #shardc.sharding<@mesh, [{"x"}, {}]> (annotation: sharding_constraint at propagate-conflict.mlir:[[@LINE+1]]:8)
  %c = shardc.sharding_constraint %b <@mesh, [{"x"}, {}]> : tensor<16x8xf32>
  // CHECK: propagate-conflict.mlir:[[@LINE+2]]:8: remark: conflict on factor f0 (size 16, parallel) of 'shardc.add': {"y"} from operand #0 (result #0 of 'shardc.relu') lost to {"x"} from operand #1 (result #0 of 'shardc.sharding_constraint') (a user annotation beats a propagated sharding)
  // CHECK: propagate-conflict.mlir:[[@LINE+1]]:8: remark: result #0 of 'shardc.add' is #shardc.sharding<@mesh, [{"x"}, {}]> (propagated from sharding_constraint at propagate-conflict.mlir:{{[0-9]+}}:8 through 'shardc.add'
  %s = shardc.add %r, %c : tensor<16x8xf32>
  return %s : tensor<16x8xf32>
}

// Two annotations of the same priority and size: operand order decides.
// CHECK-LABEL: remark: input "p"
func.func @tie(%p: tensor<16xf32> {shardc.name = "p", shardc.sharding = #shardc.sharding<@mesh, [{"x"}]>},
               %q: tensor<16xf32> {shardc.name = "q", shardc.sharding = #shardc.sharding<@mesh, [{"y"}]>}) -> tensor<16xf32> {
  // CHECK: propagate-conflict.mlir:[[@LINE+2]]:8: remark: conflict on factor f0 (size 16, parallel) of 'shardc.mul': {"y"} from operand #1 (input "q") lost to {"x"} from operand #0 (input "p") (same priority and size, the earlier tensor wins)
  // CHECK: remark: result #0 of 'shardc.mul' is #shardc.sharding<@mesh, [{"x"}]>
  %m = shardc.mul %p, %q : tensor<16xf32>
  return %m : tensor<16xf32>
}

// A slice of a sharded dim: the factor needs replication, so its axis is
// dropped, and nothing reaches the result.
// CHECK-LABEL: remark: input "v"
func.func @need_replication(%v: tensor<16x8xf32> {shardc.name = "v", shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x8xf32> {
  // CHECK: propagate-conflict.mlir:[[@LINE+2]]:8: remark: {"x"} of operand #0 (input "v") on factor f0 (size 16, need_replication) of 'shardc.slice' cannot be kept (the factor needs replication)
  // CHECK: propagate-conflict.mlir:[[@LINE+1]]:8: remark: result #0 of 'shardc.slice' is #shardc.sharding<@mesh, [{}, {}]> (no sharding reached it: replicated)
  %m = shardc.slice %v start = [0, 0] limit = [8, 8] : (tensor<16x8xf32>) -> tensor<8x8xf32>
  // CHECK: remark: output #0 is #shardc.sharding<@mesh, [{}, {}]> (no sharding reached it: replicated)
  return %m : tensor<8x8xf32>
}

// An element-wise op whose operands split different dims over "x": the dim
// split over more devices keeps it, as the coarser layout reaches the finer
// one mostly by slicing.
// CHECK-LABEL: remark: input "m"
func.func @more_split(%m: tensor<16x16xf32> {shardc.name = "m", shardc.sharding = #shardc.sharding<@mesh, [{}, {"x"}]>},
                      %n: tensor<16x16xf32> {shardc.name = "n", shardc.sharding = #shardc.sharding<@mesh, [{"y", "x"}, {}]>}) -> tensor<16x16xf32> {
  // CHECK: propagate-conflict.mlir:[[@LINE+2]]:8: remark: conflict on mesh axis "x" of 'shardc.add': factor f0 (size 16, parallel), from operand #1 (input "n"), keeps it; factor f1 (size 16, parallel), from operand #0 (input "m"), drops {"x"} (same priority and size, the more split factor is kept)
  // CHECK: remark: result #0 of 'shardc.add' is #shardc.sharding<@mesh, [{"y", "x"}, {}]>
  %s = shardc.add %m, %n : tensor<16x16xf32>
  return %s : tensor<16x16xf32>
}

// A broadcast's result takes its users' layout before its operand's: the
// output wants the new dim split, so v (16 floats) is gathered rather than
// the [16,64] result resharded.
// CHECK-LABEL: remark: input "v" is
func.func @broadcast_last(%v: tensor<16xf32> {shardc.name = "v", shardc.sharding = #shardc.sharding<@mesh, [{"x"}]>})
    -> (tensor<16x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"x"}]>}) {
  // CHECK: propagate-conflict.mlir:[[@LINE+2]]:8: remark: conflict on mesh axis "x" of 'shardc.broadcast_in_dim': factor f0 (size 16, parallel), from operand #0 (input "v"), keeps it; factor f1 (size 64, parallel), from result #0 (result #0 of 'shardc.broadcast_in_dim'), drops {"x"} (a user annotation beats a propagated sharding)
  // CHECK: propagate-conflict.mlir:[[@LINE+1]]:8: remark: result #0 of 'shardc.broadcast_in_dim' is #shardc.sharding<@mesh, [{}, {"x"}]> (propagated from output #0 through 'shardc.exp'
  %b = shardc.broadcast_in_dim %v dims = [0] : (tensor<16xf32>) -> tensor<16x64xf32>
  %e = shardc.exp %b : tensor<16x64xf32>
  return %e : tensor<16x64xf32>
}

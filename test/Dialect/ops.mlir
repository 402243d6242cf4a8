// RUN: shardc-opt %s | FileCheck %s
// RUN: shardc-opt %s | shardc-opt | FileCheck %s
// RUN: shardc-opt -mlir-print-op-generic %s | shardc-opt | FileCheck %s
// Every op and attribute prints back to what it parsed from.

// CHECK: shardc.mesh @mesh ["y"=4, "x"=2]
shardc.mesh @mesh ["y"=4, "x"=2]

// CHECK-LABEL: func.func @tensor_ops
// CHECK-SAME: shardc.name = "x"
// CHECK-SAME: shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {"x"}]>
func.func @tensor_ops(%x: tensor<16x64xf32> {shardc.name = "x", shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {"x"}]>},
                      %w: tensor<64x128xf32>)
    -> (tensor<16x128xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"y", "x"}, {}]>}) {
  // CHECK: shardc.matmul %{{.*}}, %{{.*}} : (tensor<16x64xf32>, tensor<64x128xf32>) -> tensor<16x128xf32>
  %h = shardc.matmul %x, %w : (tensor<16x64xf32>, tensor<64x128xf32>) -> tensor<16x128xf32>
  // CHECK: shardc.relu %{{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {}], partial = {"x"}>} : tensor<16x128xf32>
  %r = shardc.relu %h {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {}], partial = {"x"}>} : tensor<16x128xf32>
  // CHECK: shardc.gelu
  %g = shardc.gelu %r : tensor<16x128xf32>
  // CHECK: shardc.exp
  %e = shardc.exp %g : tensor<16x128xf32>
  // CHECK: shardc.log
  %l = shardc.log %e : tensor<16x128xf32>
  // CHECK: shardc.neg
  %n = shardc.neg %l : tensor<16x128xf32>
  // CHECK: shardc.tanh
  %t = shardc.tanh %n : tensor<16x128xf32>
  // CHECK: shardc.sqrt
  %s = shardc.sqrt %t : tensor<16x128xf32>
  // CHECK: shardc.rsqrt
  %rs = shardc.rsqrt %s : tensor<16x128xf32>
  // CHECK: shardc.sigmoid
  %sg = shardc.sigmoid %rs : tensor<16x128xf32>
  // CHECK: shardc.step
  %st = shardc.step %sg : tensor<16x128xf32>
  // CHECK: shardc.add
  %a = shardc.add %st, %h : tensor<16x128xf32>
  // CHECK: shardc.sub
  %b = shardc.sub %a, %h : tensor<16x128xf32>
  // CHECK: shardc.mul
  %c = shardc.mul %b, %h : tensor<16x128xf32>
  // CHECK: shardc.div
  %d = shardc.div %c, %h : tensor<16x128xf32>
  // CHECK: shardc.max
  %m = shardc.max %d, %h : tensor<16x128xf32>
  // CHECK: shardc.abs
  %ab = shardc.abs %m : tensor<16x128xf32>
  // CHECK: shardc.erf
  %er = shardc.erf %ab : tensor<16x128xf32>
  // CHECK: shardc.sin
  %sn = shardc.sin %er : tensor<16x128xf32>
  // CHECK: shardc.cos
  %cs = shardc.cos %sn : tensor<16x128xf32>
  // CHECK: shardc.stop_gradient
  %sgr = shardc.stop_gradient %cs : tensor<16x128xf32>
  // CHECK: shardc.min
  %mi = shardc.min %sgr, %h : tensor<16x128xf32>
  // CHECK: shardc.pow
  %pw = shardc.pow %mi, %h : tensor<16x128xf32>
  // CHECK: shardc.slice %{{.*}} start = [0, 8] limit = [16, 24] : (tensor<16x128xf32>) -> tensor<16x16xf32>
  %sl = shardc.slice %pw start = [0, 8] limit = [16, 24] : (tensor<16x128xf32>) -> tensor<16x16xf32>
  // CHECK: shardc.slice %{{.*}} start = [0, 0] limit = [16, 128] stride = [4, 8] : (tensor<16x128xf32>) -> tensor<4x16xf32>
  %ss = shardc.slice %pw start = [0, 0] limit = [16, 128] stride = [4, 8] : (tensor<16x128xf32>) -> tensor<4x16xf32>
  // CHECK: shardc.concatenate %{{.*}}, %{{.*}} dimension = 0 : (tensor<16x16xf32>, tensor<4x16xf32>) -> tensor<20x16xf32>
  %cc = shardc.concatenate %sl, %ss dimension = 0 : (tensor<16x16xf32>, tensor<4x16xf32>) -> tensor<20x16xf32>
  // CHECK: shardc.constant dense<0.000000e+00> : tensor<f32>
  %zero = shardc.constant dense<0.0> : tensor<f32>
  // CHECK: shardc.pad %{{.*}}, %{{.*}} low = [1, 0] high = [0, 2] : (tensor<20x16xf32>, tensor<f32>) -> tensor<21x18xf32>
  %pd = shardc.pad %cc, %zero low = [1, 0] high = [0, 2] : (tensor<20x16xf32>, tensor<f32>) -> tensor<21x18xf32>
  // CHECK: shardc.pad %{{.*}}, %{{.*}} low = [0, 0] high = [0, 0] interior = [1, 0] : (tensor<20x16xf32>, tensor<f32>) -> tensor<39x16xf32>
  %pi = shardc.pad %cc, %zero low = [0, 0] high = [0, 0] interior = [1, 0] : (tensor<20x16xf32>, tensor<f32>) -> tensor<39x16xf32>
  // CHECK: shardc.constant dense<5.000000e-01> : tensor<16x128xf32>
  %k = shardc.constant dense<0.5> : tensor<16x128xf32>
  // CHECK: %[[IDS:.*]] = shardc.iota dimension = 0 : tensor<4xi64>
  %ids = shardc.iota dimension = 0 : tensor<4xi64>
  // CHECK: %[[IDS2:.*]] = shardc.add %[[IDS]], %[[IDS]] : tensor<4xi64>
  %ids2 = shardc.add %ids, %ids : tensor<4xi64>
  // The default mode ("error") is not printed.
  // CHECK: %[[GA:.*]] = shardc.gather %{{.*}}, %[[IDS2]] axis = 0 : (tensor<16x128xf32>, tensor<4xi64>) -> tensor<4x128xf32>
  %ga = shardc.gather %k, %ids2 axis = 0 : (tensor<16x128xf32>, tensor<4xi64>) -> tensor<4x128xf32>
  // CHECK: shardc.gather %{{.*}}, %[[IDS]] axis = 1 mode = "skip" : (tensor<16x128xf32>, tensor<4xi64>) -> tensor<16x4xf32>
  %gs = shardc.gather %k, %ids axis = 1 mode = "skip" : (tensor<16x128xf32>, tensor<4xi64>) -> tensor<16x4xf32>
  // CHECK: shardc.scatter_add %{{.*}}, %[[IDS2]], %[[GA]] axis = 0 : (tensor<16x128xf32>, tensor<4xi64>, tensor<4x128xf32>) -> tensor<16x128xf32>
  %sa = shardc.scatter_add %k, %ids2, %ga axis = 0 : (tensor<16x128xf32>, tensor<4xi64>, tensor<4x128xf32>) -> tensor<16x128xf32>
  // CHECK: shardc.sharding_constraint %{{.*}} <@mesh, [{"y"}, {}]> : tensor<16x128xf32>
  %sc = shardc.sharding_constraint %m <@mesh, [{"y"}, {}]> : tensor<16x128xf32>
  // CHECK: shardc.reduce_sum %{{.*}} dims = [1] : (tensor<16x128xf32>) -> tensor<16xf32>
  %sum = shardc.reduce_sum %sc dims = [1] : (tensor<16x128xf32>) -> tensor<16xf32>
  // CHECK: shardc.reduce_max %{{.*}} dims = [0, 1] : (tensor<16x128xf32>) -> tensor<f32>
  %mx = shardc.reduce_max %sc dims = [0, 1] : (tensor<16x128xf32>) -> tensor<f32>
  // CHECK: shardc.broadcast_in_dim %{{.*}} dims = [0] : (tensor<16xf32>) -> tensor<16x128xf32>
  %bc = shardc.broadcast_in_dim %sum dims = [0] : (tensor<16xf32>) -> tensor<16x128xf32>
  // CHECK: shardc.transpose %{{.*}} permutation = [1, 0] : (tensor<16x128xf32>) -> tensor<128x16xf32>
  %tr = shardc.transpose %bc permutation = [1, 0] : (tensor<16x128xf32>) -> tensor<128x16xf32>
  // CHECK: shardc.reshape %{{.*}} : (tensor<128x16xf32>) -> tensor<16x8x16xf32>
  %rp = shardc.reshape %tr : (tensor<128x16xf32>) -> tensor<16x8x16xf32>
  // CHECK: shardc.dot_general %{{.*}}, %{{.*}} batch = [0] x [0], contract = [2] x [2] : (tensor<16x8x16xf32>, tensor<16x8x16xf32>) -> tensor<16x8x8xf32>
  %dg = shardc.dot_general %rp, %rp batch = [0] x [0], contract = [2] x [2] : (tensor<16x8x16xf32>, tensor<16x8x16xf32>) -> tensor<16x8x8xf32>
  // CHECK: shardc.add %{{.*}}, %{{.*}} : tensor<16x128xf32>
  %out = shardc.add %bc, %k : tensor<16x128xf32>
  return %out : tensor<16x128xf32>
}

// CHECK-LABEL: func.func @collectives
func.func @collectives(%v: tensor<4x32xf32>) -> tensor<4x32xf32> attributes {shardc.spmd} {
  // CHECK: shardc.all_gather %{{.*}} on @mesh axes = ["x"] dim = 1 : tensor<4x32xf32> -> tensor<4x64xf32>
  %g = shardc.all_gather %v on @mesh axes = ["x"] dim = 1 : tensor<4x32xf32> -> tensor<4x64xf32>
  // CHECK: shardc.reduce_scatter %{{.*}} on @mesh axes = ["x"] dim = 1 : tensor<4x64xf32> -> tensor<4x32xf32>
  %r = shardc.reduce_scatter %g on @mesh axes = ["x"] dim = 1 : tensor<4x64xf32> -> tensor<4x32xf32>
  // CHECK: shardc.all_reduce %{{.*}} on @mesh axes = ["y", "x"] {reduction = #shardc.reduction<max>} : tensor<4x32xf32>
  %a = shardc.all_reduce %r on @mesh axes = ["y", "x"] {reduction = #shardc.reduction<max>} : tensor<4x32xf32>
  // CHECK: shardc.all_to_all %{{.*}} on @mesh axes = ["y"] split_dim = 1 concat_dim = 0 : tensor<4x32xf32> -> tensor<16x8xf32>
  %t = shardc.all_to_all %a on @mesh axes = ["y"] split_dim = 1 concat_dim = 0 : tensor<4x32xf32> -> tensor<16x8xf32>
  // CHECK: shardc.collective_permute %{{.*}} on @mesh axes = ["x"] pairs = {{\[\[}}0, 1], [1, 0]] : tensor<16x8xf32>
  %p = shardc.collective_permute %t on @mesh axes = ["x"] pairs = [[0, 1], [1, 0]] : tensor<16x8xf32>
  // CHECK: shardc.axis_index on @mesh axes = ["x", "y"] : tensor<i64>
  %ix = shardc.axis_index on @mesh axes = ["x", "y"] : tensor<i64>
  // CHECK: shardc.all_slice %{{.*}} on @mesh axes = ["y"] dim = 0 : tensor<16x8xf32> -> tensor<4x8xf32>
  %s = shardc.all_slice %p on @mesh axes = ["y"] dim = 0 : tensor<16x8xf32> -> tensor<4x8xf32>
  // CHECK: shardc.all_gather %{{.*}} on @mesh axes = ["y", "x"] dim = 1 : tensor<4x8xf32> -> tensor<4x64xf32>
  %g2 = shardc.all_gather %s on @mesh axes = ["y", "x"] dim = 1 : tensor<4x8xf32> -> tensor<4x64xf32>
  %s2 = shardc.all_slice %g2 on @mesh axes = ["x"] dim = 1 : tensor<4x64xf32> -> tensor<4x32xf32>
  // CHECK: shardc.send %{{.*}} on @mesh axis = "x" to = 1 : tensor<4x32xf32>
  %sent = shardc.send %s2 on @mesh axis = "x" to = 1 : tensor<4x32xf32>
  // CHECK: shardc.recv on @mesh axis = "y" from = 0 {shardc.pipeline_action = "B2"} : tensor<4x32xf32>
  %got = shardc.recv on @mesh axis = "y" from = 0 {shardc.pipeline_action = "B2"} : tensor<4x32xf32>
  return %got : tensor<4x32xf32>
}

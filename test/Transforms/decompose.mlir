// --shardc-decompose expands every composite into the primitives its
// DecomposableOpInterface builds; pinned here op by op. The max shift is
// detached (stop_gradient), reductions are broadcast back with
// broadcast_in_dim, and cross_entropy picks the label's logit with a
// one-hot select (iota, compare EQ) and a row sum, never a gather. A
// result's sharding moves to the value replacing it. A second run finds
// nothing to expand.
// RUN: shardc-opt --shardc-decompose %S/Inputs/composites.mlir | FileCheck %s
// RUN: shardc-opt --shardc-decompose %S/Inputs/composites.mlir > %t.once
// RUN: shardc-opt --shardc-decompose %t.once > %t.twice
// RUN: diff %t.once %t.twice
// RUN: shardc-opt --shardc-decompose %S/Inputs/composites.mlir | FileCheck %s --check-prefix=NONE
// The CLI names the expansion's values after the composite's result.
// RUN: shardc compile %S/Inputs/softmax-named.mlir --pass-pipeline='builtin.module(shardc-decompose)' | FileCheck %s --check-prefix=NAMES

// NAMES: %p.max = shardc.reduce_max %arg0 dims = [1]
// NAMES-NEXT: %p.max_detached = shardc.stop_gradient %p.max
// NAMES-NEXT: %p.max_bcast = shardc.broadcast_in_dim %p.max_detached dims = [0]
// NAMES-NEXT: %p.shifted = shardc.sub %arg0, %p.max_bcast
// NAMES-NEXT: %p.exp = shardc.exp %p.shifted
// NAMES-NEXT: %p.sum = shardc.reduce_sum %p.exp dims = [1]
// NAMES-NEXT: %p.sum_bcast = shardc.broadcast_in_dim %p.sum dims = [0]
// NAMES-NEXT: %p = shardc.div %p.exp, %p.sum_bcast
// NAMES-NEXT: return %p

// NONE-NOT: shardc.softmax
// NONE-NOT: shardc.log_softmax
// NONE-NOT: shardc.layer_norm
// NONE-NOT: shardc.rms_norm
// NONE-NOT: shardc.mean
// NONE-NOT: shardc.cross_entropy

// CHECK-LABEL: func.func @softmax(%arg0: tensor<4x8xf32>)
// CHECK-NEXT: %[[MAX:.*]] = shardc.reduce_max %arg0 dims = [1] : (tensor<4x8xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[FIX:.*]] = shardc.stop_gradient %[[MAX]] : tensor<4xf32>
// CHECK-NEXT: %[[MAXB:.*]] = shardc.broadcast_in_dim %[[FIX]] dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[S:.*]] = shardc.sub %arg0, %[[MAXB]] : tensor<4x8xf32>
// CHECK-NEXT: %[[E:.*]] = shardc.exp %[[S]] : tensor<4x8xf32>
// CHECK-NEXT: %[[SUM:.*]] = shardc.reduce_sum %[[E]] dims = [1] : (tensor<4x8xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[SUMB:.*]] = shardc.broadcast_in_dim %[[SUM]] dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[P:.*]] = shardc.div %[[E]], %[[SUMB]] {shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"}]>} : tensor<4x8xf32>
// CHECK-NEXT: return %[[P]]

// CHECK-LABEL: func.func @log_softmax(%arg0: tensor<4x8xf32>)
// CHECK-NEXT: %[[MAX:.*]] = shardc.reduce_max %arg0 dims = [0] : (tensor<4x8xf32>) -> tensor<8xf32>
// CHECK-NEXT: %[[FIX:.*]] = shardc.stop_gradient %[[MAX]]
// CHECK-NEXT: %[[MAXB:.*]] = shardc.broadcast_in_dim %[[FIX]] dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[S:.*]] = shardc.sub %arg0, %[[MAXB]]
// CHECK-NEXT: %[[E:.*]] = shardc.exp %[[S]]
// CHECK-NEXT: %[[SUM:.*]] = shardc.reduce_sum %[[E]] dims = [0]
// CHECK-NEXT: %[[LSE:.*]] = shardc.log %[[SUM]] : tensor<8xf32>
// CHECK-NEXT: %[[LSEB:.*]] = shardc.broadcast_in_dim %[[LSE]] dims = [1]
// CHECK-NEXT: %[[LP:.*]] = shardc.sub %[[S]], %[[LSEB]] : tensor<4x8xf32>
// CHECK-NEXT: return %[[LP]]

// CHECK-LABEL: func.func @layer_norm(%arg0: tensor<2x4x8xf32>, %arg1: tensor<8xf32>, %arg2: tensor<8xf32>)
// CHECK-NEXT: %[[SUM:.*]] = shardc.reduce_sum %arg0 dims = [2] : (tensor<2x4x8xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[N:.*]] = shardc.constant dense<8.000000e+00> : tensor<2x4xf32>
// CHECK-NEXT: %[[MEAN:.*]] = shardc.div %[[SUM]], %[[N]]
// CHECK-NEXT: %[[MEANB:.*]] = shardc.broadcast_in_dim %[[MEAN]] dims = [0, 1] : (tensor<2x4xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[C:.*]] = shardc.sub %arg0, %[[MEANB]]
// CHECK-NEXT: %[[C2:.*]] = shardc.mul %[[C]], %[[C]]
// CHECK-NEXT: %[[VSUM:.*]] = shardc.reduce_sum %[[C2]] dims = [2]
// CHECK-NEXT: %[[N2:.*]] = shardc.constant dense<8.000000e+00> : tensor<2x4xf32>
// CHECK-NEXT: %[[VAR:.*]] = shardc.div %[[VSUM]], %[[N2]]
// CHECK-NEXT: %[[VARB:.*]] = shardc.broadcast_in_dim %[[VAR]] dims = [0, 1]
// CHECK-NEXT: %[[EPS:.*]] = shardc.constant dense<9.99999974E-6> : tensor<2x4x8xf32>
// CHECK-NEXT: %[[VE:.*]] = shardc.add %[[VARB]], %[[EPS]]
// CHECK-NEXT: %[[R:.*]] = shardc.rsqrt %[[VE]]
// CHECK-NEXT: %[[NORM:.*]] = shardc.mul %[[C]], %[[R]]
// CHECK-NEXT: %[[G:.*]] = shardc.broadcast_in_dim %arg1 dims = [2] : (tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[B:.*]] = shardc.broadcast_in_dim %arg2 dims = [2] : (tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[SC:.*]] = shardc.mul %[[NORM]], %[[G]]
// CHECK-NEXT: %[[LN:.*]] = shardc.add %[[SC]], %[[B]]
// CHECK-NEXT: return %[[LN]]

// CHECK-LABEL: func.func @rms_norm(%arg0: tensor<4x8xf32>, %arg1: tensor<8xf32>)
// CHECK-NEXT: %[[SQ:.*]] = shardc.mul %arg0, %arg0
// CHECK-NEXT: %[[SUM:.*]] = shardc.reduce_sum %[[SQ]] dims = [1]
// CHECK-NEXT: %[[N:.*]] = shardc.constant dense<8.000000e+00> : tensor<4xf32>
// CHECK-NEXT: %[[MS:.*]] = shardc.div %[[SUM]], %[[N]]
// CHECK-NEXT: %[[MSB:.*]] = shardc.broadcast_in_dim %[[MS]] dims = [0]
// CHECK-NEXT: %[[EPS:.*]] = shardc.constant dense<9.99999997E-7> : tensor<4x8xf32>
// CHECK-NEXT: %[[ME:.*]] = shardc.add %[[MSB]], %[[EPS]]
// CHECK-NEXT: %[[R:.*]] = shardc.rsqrt %[[ME]]
// CHECK-NEXT: %[[NORM:.*]] = shardc.mul %arg0, %[[R]]
// CHECK-NEXT: %[[G:.*]] = shardc.broadcast_in_dim %arg1 dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[RN:.*]] = shardc.mul %[[NORM]], %[[G]]
// CHECK-NEXT: return %[[RN]]

// CHECK-LABEL: func.func @mean(%arg0: tensor<2x4x8xf32>)
// CHECK-NEXT: %[[SUM:.*]] = shardc.reduce_sum %arg0 dims = [0, 2] : (tensor<2x4x8xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[N:.*]] = shardc.constant dense<1.600000e+01> : tensor<4xf32>
// CHECK-NEXT: %[[M:.*]] = shardc.div %[[SUM]], %[[N]] : tensor<4xf32>
// CHECK-NEXT: return %[[M]]

// CHECK-LABEL: func.func @cross_entropy(%arg0: tensor<2x4x16xf32>, %arg1: tensor<2x4xi32>)
// CHECK-NEXT: %[[MAX:.*]] = shardc.reduce_max %arg0 dims = [2] : (tensor<2x4x16xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[FIX:.*]] = shardc.stop_gradient %[[MAX]] : tensor<2x4xf32>
// CHECK-NEXT: %[[MAXB:.*]] = shardc.broadcast_in_dim %[[FIX]] dims = [0, 1] : (tensor<2x4xf32>) -> tensor<2x4x16xf32>
// CHECK-NEXT: %[[S:.*]] = shardc.sub %arg0, %[[MAXB]]
// CHECK-NEXT: %[[E:.*]] = shardc.exp %[[S]]
// CHECK-NEXT: %[[SUM:.*]] = shardc.reduce_sum %[[E]] dims = [2] : (tensor<2x4x16xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[LSE:.*]] = shardc.log %[[SUM]] : tensor<2x4xf32>
// CHECK-NEXT: %[[IDS:.*]] = shardc.iota dimension = 2 : tensor<2x4x16xi32>
// CHECK-NEXT: %[[LAB:.*]] = shardc.broadcast_in_dim %arg1 dims = [0, 1] : (tensor<2x4xi32>) -> tensor<2x4x16xi32>
// CHECK-NEXT: %[[HOT:.*]] = shardc.compare %[[IDS]], %[[LAB]] direction = "EQ" : (tensor<2x4x16xi32>, tensor<2x4x16xi32>) -> tensor<2x4x16xi1>
// CHECK-NEXT: %[[Z:.*]] = shardc.constant dense<0.000000e+00> : tensor<2x4x16xf32>
// CHECK-NEXT: %[[SEL:.*]] = shardc.select %[[HOT]], %[[S]], %[[Z]]
// CHECK-NEXT: %[[PICK:.*]] = shardc.reduce_sum %[[SEL]] dims = [2] : (tensor<2x4x16xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[PER:.*]] = shardc.sub %[[LSE]], %[[PICK]] : tensor<2x4xf32>
// CHECK-NEXT: %[[TOT:.*]] = shardc.reduce_sum %[[PER]] dims = [0, 1] : (tensor<2x4xf32>) -> tensor<f32>
// CHECK-NEXT: %[[N:.*]] = shardc.constant dense<8.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[LOSS:.*]] = shardc.div %[[TOT]], %[[N]] : tensor<f32>
// CHECK-NEXT: return %[[LOSS]]

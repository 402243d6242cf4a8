// A differentiating pipeline applies a composite's own gradient rule and
// expands the composite afterwards: the backward pass reads softmax's
// output and the layer norm's input (and gamma), as fused kernels'
// backward passes do, not the intermediates of their expansions (the
// layer norm's row statistics are recomputed from its input). Propagation
// before autodiff goes through the expansion: the composites' results get
// the rows' "data" split.
// RUN: shardc-opt --pass-pipeline='builtin.module(shardc-autodiff-pipeline{then=none})' %S/Inputs/composite-training.mlir > %t
// RUN: FileCheck %s < %t
// RUN: FileCheck %s --check-prefix=BWD < %t
// With keep-differentiable=true, --shardc-decompose expands only the
// composites without a rule of their own (cross_entropy).
// RUN: shardc-opt --shardc-decompose='keep-differentiable=true' %S/Inputs/composites.mlir | FileCheck %s --check-prefix=KEEP

// CHECK-LABEL: func.func @main
// CHECK: %h.centered = shardc.sub %arg0, %h.mean_bcast
// CHECK: %h = shardc.add %h.scaled, %h.beta_bcast {shardc.sharding = #shardc.sharding<@mesh, [{"data"}, {}]>}
// CHECK: %p.exp = shardc.exp
// CHECK: %p = shardc.div %p.exp, %p.sum_bcast {shardc.sharding = #shardc.sharding<@mesh, [{"data"}, {}]>}
// CHECK: shardc.mul %arg3, %p
// CHECK: %h.grad = shardc.mul %p,
// CHECK: %[[NEG:.*]] = shardc.neg %arg0
// CHECK: shardc.reduce_sum %[[NEG]] dims = [1]
// CHECK: shardc.add %arg0,
// CHECK: %gamma.grad = shardc.reduce_sum
// CHECK: %beta.grad = shardc.reduce_sum %h.grad dims = [0]
// CHECK-NOT: shardc.softmax
// CHECK-NOT: shardc.layer_norm

// The backward pass, from its first op to the return, reads none of the
// expansions' intermediates.
// BWD: shardc.mul %arg3, %p
// BWD-NOT: {{%p\.(exp|sum|sum_bcast)[ ,]}}
// BWD-NOT: {{%h\.(centered|square|var|var_bcast|var_eps|rstd|normalized|scaled)[ ,]}}
// BWD: return

// KEEP-NOT: shardc.cross_entropy
// KEEP-DAG: shardc.softmax
// KEEP-DAG: shardc.log_softmax
// KEEP-DAG: shardc.layer_norm
// KEEP-DAG: shardc.rms_norm
// KEEP-DAG: shardc.mean

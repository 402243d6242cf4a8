// RUN: shardc-opt --shardc-partition --split-input-file --verify-diagnostics %s
// RUN: shardc-opt --shardc-propagate %S/Inputs/mesh-lookup-propagate.mlir | FileCheck %s --check-prefix=PROP
// RUN: not shardc-opt --shardc-training-step='optimizer=adam zero-axes=x' %S/Inputs/mesh-lookup-optimizer.mlir 2>&1 | FileCheck %s --check-prefix=OPT
// The mesh a function runs on (shardc/Dialect/MeshLookup.h): the module's
// only mesh, else the one its first sharded argument names.

// No mesh at all.
// expected-error @+1 {{'func.func' op has no mesh to partition over}}
func.func @none(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  return %x : tensor<4x8xf32>
}

// -----

// Several meshes and no sharded argument to choose one.
shardc.mesh @a ["x"=2]
shardc.mesh @b ["x"=2]
// expected-error @+1 {{'func.func' op has no mesh to partition over}}
func.func @several(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  return %x : tensor<4x8xf32>
}

// -----

// Several meshes: the first sharded argument's mesh (@b) is the function's.
shardc.mesh @a ["x"=2]
shardc.mesh @b ["y"=2]
func.func @chosen(%y: tensor<4x8xf32> {shardc.sharding = #shardc.sharding<@b, [{"y"}, {}]>})
    -> (tensor<4x8xf32> {shardc.sharding = #shardc.sharding<@b, [{"y"}, {}]>}) {
  %r = shardc.relu %y {shardc.sharding = #shardc.sharding<@b, [{"y"}, {}]>} : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// Propagation writes replicated shardings on the function's mesh; with
// several meshes and no sharded argument, on the first annotation's mesh,
// else on the module's first mesh.
// PROP-LABEL: func.func @by_argument
// PROP-SAME: %arg1: tensor<4x8xf32> {shardc.sharding = #shardc.sharding<@b, [{}, {}]>}
// PROP-LABEL: func.func @by_constraint
// PROP-SAME: %arg1: tensor<4x8xf32> {shardc.sharding = #shardc.sharding<@b, [{}, {}]>}
// PROP-LABEL: func.func @by_module
// PROP-SAME: %arg0: tensor<4x8xf32> {shardc.sharding = #shardc.sharding<@a, [{}, {}]>}

// ZeRO state needs the module's only mesh for an unsharded parameter.
// OPT: error: zero-axes needs a mesh: the module has none, or several and parameter 'w' has no sharding

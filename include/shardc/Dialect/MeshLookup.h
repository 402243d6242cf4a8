//===- MeshLookup.h - which mesh a function runs on -------------*- C++ -*-===//
//
// A module may hold several `shardc.mesh`es; the passes and tools that need
// "the" mesh of a function ask here, so that one rule decides:
//
//   * the module holds exactly one mesh: that mesh;
//   * it holds several: the mesh the sharding of the function's first
//     sharded argument names;
//   * otherwise there is none, and the lookup says why (no mesh at all;
//     several and no argument sharding to choose; an argument sharding that
//     names an unknown symbol).
//
// Consumers that can only run a single-mesh module (the engine, `shardc
// simulate`, the JSON graph) ask `getOnlyMesh` and keep their own message.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_MESHLOOKUP_H
#define SHARDC_DIALECT_MESHLOOKUP_H

#include "shardc/Dialect/ShardcDialect.h"

#include "mlir/IR/BuiltinOps.h"

namespace shardc {

/// The outcome of looking up a function's mesh.
struct FunctionMesh {
  enum class Problem { None, NoMesh, SeveralMeshes, UnknownMesh };

  /// The mesh, or null when `problem` says why there is none.
  MeshOp mesh;
  Problem problem = Problem::None;
  /// How many meshes the module holds.
  size_t numMeshes = 0;
  /// With UnknownMesh: the symbol the argument sharding names.
  mlir::FlatSymbolRefAttr unknownSymbol;
  /// With UnknownMesh: the argument whose sharding names it.
  unsigned argument = 0;
};

/// The module's meshes, in order.
llvm::SmallVector<MeshOp> getMeshes(mlir::ModuleOp module);

/// The module's mesh if it holds exactly one, else null (`numMeshes` then
/// says how many it holds).
MeshOp getOnlyMesh(mlir::ModuleOp module, size_t *numMeshes = nullptr);

/// The mesh `func` runs on, by the rule above; silent.
FunctionMesh findFunctionMesh(mlir::func::FuncOp func);

/// The same, reporting a missing mesh as an error at `func`:
///   'func.func' op has no mesh: the module holds no shardc.mesh
///   'func.func' op has no mesh: the module holds 2 meshes and no argument
///     sharding names one
///   'func.func' op has no mesh: argument #0's sharding names @m, which is
///     not a shardc.mesh
mlir::FailureOr<MeshOp> getFunctionMesh(mlir::func::FuncOp func);

} // namespace shardc

#endif // SHARDC_DIALECT_MESHLOOKUP_H

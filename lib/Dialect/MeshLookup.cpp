//===- MeshLookup.cpp - which mesh a function runs on ---------------------===//

#include "shardc/Dialect/MeshLookup.h"
#include "shardc/Dialect/ShardingVerifier.h"

using namespace mlir;
using namespace shardc;

SmallVector<MeshOp> shardc::getMeshes(ModuleOp module) {
  return llvm::to_vector(module.getOps<MeshOp>());
}

MeshOp shardc::getOnlyMesh(ModuleOp module, size_t *numMeshes) {
  SmallVector<MeshOp> meshes = getMeshes(module);
  if (numMeshes)
    *numMeshes = meshes.size();
  return meshes.size() == 1 ? meshes.front() : MeshOp();
}

FunctionMesh shardc::findFunctionMesh(func::FuncOp func) {
  FunctionMesh result;
  auto module = func->getParentOfType<ModuleOp>();
  if (!module) {
    result.problem = FunctionMesh::Problem::NoMesh;
    return result;
  }
  result.mesh = getOnlyMesh(module, &result.numMeshes);
  if (result.mesh)
    return result;
  if (result.numMeshes == 0) {
    result.problem = FunctionMesh::Problem::NoMesh;
    return result;
  }
  // Several meshes: the first sharded argument chooses.
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    auto sharding = func.getArgAttrOfType<ShardingAttr>(
        i, ShardcDialect::getShardingAttrName());
    if (!sharding)
      continue;
    result.mesh = lookupMesh(func, sharding.getMesh());
    if (!result.mesh) {
      result.problem = FunctionMesh::Problem::UnknownMesh;
      result.unknownSymbol = sharding.getMesh();
      result.argument = i;
    }
    return result;
  }
  result.problem = FunctionMesh::Problem::SeveralMeshes;
  return result;
}

FailureOr<MeshOp> shardc::getFunctionMesh(func::FuncOp func) {
  FunctionMesh found = findFunctionMesh(func);
  switch (found.problem) {
  case FunctionMesh::Problem::None:
    return found.mesh;
  case FunctionMesh::Problem::NoMesh:
    return func.emitOpError("has no mesh: the module holds no shardc.mesh");
  case FunctionMesh::Problem::SeveralMeshes:
    return func.emitOpError("has no mesh: the module holds ")
           << found.numMeshes << " meshes and no argument sharding names one";
  case FunctionMesh::Problem::UnknownMesh:
    return func.emitOpError("has no mesh: argument #")
           << found.argument << "'s sharding names " << found.unknownSymbol
           << ", which is not a shardc.mesh";
  }
  return failure();
}

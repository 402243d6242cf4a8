//===- ShardingVerifier.h - a sharding checked on its mesh ------*- C++ -*-===//
//
// A `#shardc.sharding` is only meaningful next to a mesh and a tensor type;
// these helpers check that pairing wherever a sharding is attached.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_SHARDINGVERIFIER_H
#define SHARDC_DIALECT_SHARDINGVERIFIER_H

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ValueNames.h"

#include <string>

namespace shardc {

/// Checks `sharding` against `mesh` and the tensor type `type`: rank and
/// axes known. A dim its axes do not divide is padded, not an error
/// (docs/sharding.md#uneven-dims).
/// `valueName` names the value in the message; it is only called on an
/// error, since the verifier runs on every sharded value and most pass.
mlir::LogicalResult
verifyShardingForType(ShardingAttr sharding, MeshOp mesh, mlir::Type type,
                      llvm::function_ref<std::string()> valueName,
                      llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// Finds the mesh a sharding or collective names, starting from `from`.
MeshOp lookupMesh(mlir::Operation *from, mlir::FlatSymbolRefAttr mesh);

} // namespace shardc

#endif // SHARDC_DIALECT_SHARDINGVERIFIER_H

//===- PointToPointOps.cpp - send and recv --------------------------------===//
//
// The verifiers of the point-to-point ops. Like the collectives they name a
// mesh by symbol, so their checks run in verifySymbolUses.
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/ShardcDialect.h"

using namespace mlir;
using namespace shardc;

/// Resolves the mesh and checks `axis` and `peer` against it.
static LogicalResult verifyPeer(Operation *op, SymbolTableCollection &symbols,
                                FlatSymbolRefAttr meshRef, StringRef axis,
                                int64_t peer) {
  auto mesh = symbols.lookupNearestSymbolFrom<MeshOp>(op, meshRef.getAttr());
  if (!mesh)
    return op->emitOpError() << "names unknown mesh " << meshRef;
  int64_t size = mesh.getAxisSize(axis);
  if (size < 0)
    return op->emitOpError()
           << "uses unknown mesh axis \"" << axis << "\" (mesh " << meshRef
           << " has axes " << mesh.getAxisNames() << ")";
  if (peer < 0 || peer >= size)
    return op->emitOpError() << "peer " << peer << " is out of range for axis \""
                             << axis << "\" of size " << size;
  return success();
}

LogicalResult SendOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyPeer(*this, symbols, getMeshAttr(), getAxis(), getPeer());
}

LogicalResult RecvOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyPeer(*this, symbols, getMeshAttr(), getAxis(), getPeer());
}

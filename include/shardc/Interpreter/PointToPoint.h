//===- PointToPoint.h - running send and recv on one device -----*- C++ -*-===//
//
// The interpreter's side of `shardc.send` and `shardc.recv`: the peer device
// an op names, and the op run through a Communicator. The pipeline
// simulator (lib/Runtime) resolves peers with the same function, so every
// backend agrees on who talks to whom.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_INTERPRETER_POINTTOPOINT_H
#define SHARDC_INTERPRETER_POINTTOPOINT_H

#include "shardc/Interpreter/Communicator.h"

#include "mlir/IR/Operation.h"

#include <optional>

namespace shardc {

/// The side of a point-to-point exchange `op` is on, or nullopt when it is
/// neither send nor recv: the runtimes dispatch on this, so the two ops are
/// named here and in PointToPoint.cpp only.
enum class PointToPointSide { Send, Receive };
std::optional<PointToPointSide> pointToPointSide(mlir::Operation *op);

/// The device that send or recv `op`, run on `deviceId`, talks to: the
/// device with `deviceId`'s coordinates except along the op's axis, where
/// it has the op's peer. Fails with a diagnostic at the op for an unknown
/// mesh or axis, a peer out of range or a device outside the mesh.
mlir::FailureOr<int64_t> resolvePeerDevice(mlir::Operation *op,
                                           int64_t deviceId);

/// Runs send or recv `op` on this device through `communicator` (null is
/// an error): a send hands `operands[0]` over and returns a copy of it; a
/// recv returns the next tensor from its peer, checked against its result
/// type.
mlir::FailureOr<Tensor>
evaluatePointToPoint(mlir::Operation *op,
                     llvm::ArrayRef<const Tensor *> operands,
                     Communicator *communicator);

} // namespace shardc

#endif // SHARDC_INTERPRETER_POINTTOPOINT_H

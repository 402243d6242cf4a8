//===- PointToPoint.cpp - running send and recv on one device -------------===//

#include "shardc/Interpreter/PointToPoint.h"

#include "shardc/Dialect/ShardingVerifier.h"
#include "shardc/Interpreter/Interpreter.h"

using namespace mlir;
using namespace shardc;

std::optional<PointToPointSide> shardc::pointToPointSide(Operation *op) {
  if (isa<SendOp>(op))
    return PointToPointSide::Send;
  if (isa<RecvOp>(op))
    return PointToPointSide::Receive;
  return std::nullopt;
}

FailureOr<int64_t> shardc::resolvePeerDevice(Operation *op, int64_t deviceId) {
  FlatSymbolRefAttr meshRef;
  StringRef axis;
  int64_t peer = 0;
  if (auto send = dyn_cast<SendOp>(op)) {
    meshRef = send.getMeshAttr();
    axis = send.getAxis();
    peer = send.getPeer();
  } else if (auto recv = dyn_cast<RecvOp>(op)) {
    meshRef = recv.getMeshAttr();
    axis = recv.getAxis();
    peer = recv.getPeer();
  } else {
    return op->emitError() << "'" << op->getName() << "' is not send or recv";
  }
  MeshOp mesh = lookupMesh(op, meshRef);
  if (!mesh)
    return op->emitError() << "'" << op->getName() << "' names unknown mesh "
                           << meshRef;
  FailureOr<MeshTopology> topology = getMeshTopology(mesh);
  if (failed(topology))
    return failure();
  int64_t axisIndex = topology->axisIndex(axis);
  if (axisIndex < 0)
    return op->emitError() << "'" << op->getName() << "' uses unknown axis \""
                           << axis << "\" of mesh " << meshRef;
  if (peer < 0 || peer >= topology->axisSizes()[axisIndex])
    return op->emitError() << "'" << op->getName() << "' peer " << peer
                           << " is out of range for axis \"" << axis << "\"";
  if (deviceId < 0 || deviceId >= topology->numDevices())
    return op->emitError() << "device id " << deviceId << " is outside mesh "
                           << meshRef << " of " << topology->numDevices()
                           << " devices";
  llvm::SmallVector<int64_t> coords = topology->coordinates(deviceId);
  coords[axisIndex] = peer;
  return topology->deviceId(coords);
}

FailureOr<Tensor>
shardc::evaluatePointToPoint(Operation *op, ArrayRef<const Tensor *> operands,
                             Communicator *communicator) {
  if (!communicator)
    return op->emitError() << "'" << op->getName()
                           << "' needs a device mesh; run the pipeline with "
                              "`shardc pipeline`";
  int64_t device = communicator->deviceId();
  FailureOr<int64_t> peer = resolvePeerDevice(op, device);
  if (failed(peer))
    return failure();
  if (isa<SendOp>(op)) {
    if (failed(communicator->send(*peer, *operands.front())))
      return op->emitError() << "'" << op->getName() << "' to device " << *peer
                             << " failed on device " << device;
    return operands.front()->clone();
  }
  FailureOr<Tensor> received = communicator->receive(*peer);
  if (failed(received))
    return op->emitError() << "'" << op->getName() << "' from device " << *peer
                           << " failed on device " << device;
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (received->shape() != type.getShape() ||
      executableDType(type.getElementType()) != received->dtype())
    return op->emitError() << "'" << op->getName() << "' on device " << device
                           << " expected " << type << " from device " << *peer
                           << " but received " << received->describe();
  return std::move(*received);
}

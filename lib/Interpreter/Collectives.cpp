//===- Collectives.cpp - running collectives on one device ----------------===//
//
// The interpreter's side of a collective: find the mesh, resolve this
// device's group, check the op's attributes against the local operand and
// the group (CollectiveShapes.h, as the verifier does), and hand the data
// to the Communicator. all_slice moves no data, so it is computed
// here from the group index alone, as is axis_index (the group index
// itself).
//
//===----------------------------------------------------------------------===//

#include "KernelImpl.h"

#include "shardc/Dialect/CollectiveShapes.h"
#include "shardc/Dialect/ShardingVerifier.h"

using namespace mlir;
using namespace shardc;
using llvm::SmallVector;

FailureOr<MeshTopology> shardc::getMeshTopology(MeshOp mesh) {
  if (!mesh)
    return failure();
  SmallVector<StringRef> names = mesh.getAxisNameList();
  llvm::Expected<MeshTopology> topology =
      MeshTopology::create(names, mesh.getAxisSizes());
  if (!topology)
    return mesh.emitError() << "invalid mesh @" << mesh.getSymName() << ": "
                            << llvm::toString(topology.takeError());
  return std::move(*topology);
}

/// `t` with dim `dim` padded to `parts` blocks of ceil(size / parts): the
/// communicators split evenly, and the padding of an uneven dim
/// (docs/sharding.md#uneven-dims) goes to the last members.
static llvm::Expected<Tensor> padToBlocks(const Tensor &t, int64_t dim,
                                          int64_t parts) {
  if (parts <= 0 || t.dim(dim) % parts == 0)
    return t.clone();
  return tryResizeDim(t, dim, (t.dim(dim) + parts - 1) / parts * parts);
}

namespace {
/// Where a collective op runs on this device: its checked attributes and
/// this device's group.
struct CollectiveSite {
  CollectiveOpInterface collective;
  RankedTensorType resultType;
  const MeshTopology *topology = nullptr;
  SmallVector<StringRef> axes;
  int64_t device = 0;
  SmallVector<int64_t> group;
};
} // namespace

/// Checks `op`'s attributes against its mesh and `input`, and finds this
/// device's group.
static FailureOr<CollectiveSite>
resolveSite(Operation *op, const Tensor &input, Communicator *communicator,
            shardc::detail::MeshTopologyCache &meshes) {
  CollectiveSite site;
  auto collective = dyn_cast<CollectiveOpInterface>(op);
  FlatSymbolRefAttr meshRef = collective ? collective.getMeshAttr() : nullptr;
  ArrayAttr axesAttr = collective ? collective.getAxes() : nullptr;
  if (!meshRef || !axesAttr)
    return op->emitError() << "'" << op->getName() << "' is not a collective";
  if (!communicator)
    return op->emitError() << "collective '" << op->getName()
                           << "' needs a device mesh; run it with `shardc "
                              "simulate`";
  auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  auto operandType = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!resultType || !operandType || !resultType.hasStaticShape() ||
      executableDType(resultType.getElementType()) != input.dtype() ||
      operandType.getShape() != input.shape())
    return op->emitError() << "'" << op->getName()
                           << "' needs static f32, i1, i32 or i64 tensors "
                              "matching its operand type "
                           << operandType << "; got " << input.describe();

  MeshOp mesh = lookupMesh(op, meshRef);
  if (!mesh)
    return op->emitError() << "'" << op->getName() << "' names unknown mesh "
                           << meshRef;
  auto it = meshes.find(mesh.getOperation());
  if (it == meshes.end()) {
    FailureOr<MeshTopology> topology = getMeshTopology(mesh);
    if (failed(topology))
      return failure();
    it = meshes.try_emplace(mesh.getOperation(), std::move(*topology)).first;
  }
  const MeshTopology &topology = it->second;

  SmallVector<StringRef> axes;
  for (Attribute a : axesAttr) {
    auto name = dyn_cast<StringAttr>(a);
    if (!name)
      return op->emitError("collective axes must be strings");
    axes.push_back(name.getValue());
  }
  if (llvm::Error err = topology.checkAxes(axes))
    return op->emitError() << "'" << op->getName() << "' on mesh " << meshRef
                           << ": " << llvm::toString(std::move(err));
  int64_t device = communicator->deviceId();
  if (device < 0 || device >= topology.numDevices())
    return op->emitError() << "device id " << device << " is outside mesh "
                           << meshRef << " of " << topology.numDevices()
                           << " devices";
  SmallVector<int64_t> group = topology.groupOf(device, axes);
  if (std::optional<CollectiveProblem> problem = checkCollective(
          collective, input.shape(), static_cast<int64_t>(group.size())))
    return op->emitError() << "'" << op->getName() << "' " << problem->message;
  site.collective = collective;
  site.resultType = resultType;
  site.topology = &topology;
  site.axes = std::move(axes);
  site.device = device;
  site.group = std::move(group);
  return site;
}

/// `answer` of the communicator for `op` on `device`: a communicator
/// reports its own errors, this adds which op and device; the result must
/// have the op's result type.
static FailureOr<Tensor> checkAnswer(Operation *op, int64_t device,
                                     FailureOr<Tensor> answer) {
  if (failed(answer))
    return op->emitError() << "'" << op->getName() << "' failed on device "
                           << device;
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  if (answer->shape() != resultType.getShape())
    return op->emitError() << "'" << op->getName() << "' produced "
                           << answer->describe() << " on device " << device
                           << " but its result type is " << resultType;
  return answer;
}

bool shardc::detail::canStartCollective(Operation *op) {
  auto collective = dyn_cast<CollectiveOpInterface>(op);
  return collective &&
         (collective.getCollectiveKind() == CollectiveKind::AllReduce ||
          collective.getCollectiveKind() == CollectiveKind::ReduceScatter);
}

FailureOr<std::unique_ptr<PendingCollective>>
shardc::detail::startCollective(Operation *op, Tensor input,
                                Communicator *communicator,
                                MeshTopologyCache &meshes) {
  FailureOr<CollectiveSite> site = resolveSite(op, input, communicator, meshes);
  if (failed(site))
    return failure();
  CollectiveOpInterface collective = site->collective;
  Reduction kind = toCommunicatorReduction(collective.getCollectiveReduction());
  FailureOr<std::unique_ptr<PendingCollective>> pending = failure();
  if (collective.getCollectiveKind() == CollectiveKind::AllReduce) {
    pending = communicator->startAllReduce(std::move(input), site->group, kind);
  } else {
    int64_t dim = collective.getCollectiveDim();
    int64_t parts = static_cast<int64_t>(site->group.size());
    if (input.dim(dim) % parts != 0) {
      // An uneven dim: padded to equal blocks (padToBlocks).
      llvm::Expected<Tensor> padded = tryResizeDim(
          input, dim, (input.dim(dim) + parts - 1) / parts * parts);
      if (!padded)
        return op->emitError()
               << "'" << op->getName() << "' on device " << site->device << ": "
               << llvm::toString(padded.takeError());
      input = std::move(*padded);
    }
    pending = communicator->startReduceScatter(std::move(input), site->group,
                                               dim, kind);
  }
  if (failed(pending)) {
    (void)checkAnswer(op, site->device, failure());
    return failure();
  }
  return pending;
}

FailureOr<Tensor> shardc::detail::finishCollective(Operation *op,
                                                   int64_t device,
                                                   PendingCollective &pending) {
  return checkAnswer(op, device, pending.wait());
}

FailureOr<Tensor>
shardc::detail::evaluateCollective(Operation *op, const Tensor &input,
                                   Communicator *communicator,
                                   MeshTopologyCache &meshes) {
  FailureOr<CollectiveSite> site = resolveSite(op, input, communicator, meshes);
  if (failed(site))
    return failure();
  CollectiveOpInterface collective = site->collective;
  RankedTensorType resultType = site->resultType;
  const MeshTopology &topology = *site->topology;
  ArrayRef<StringRef> axes = site->axes;
  int64_t device = site->device;
  ArrayRef<int64_t> group = site->group;
  int64_t groupSize = static_cast<int64_t>(group.size());

  // A communicator reports its own errors; this adds which op and device.
  auto viaCommunicator = [&](FailureOr<Tensor> answer) -> FailureOr<Tensor> {
    if (failed(answer))
      return op->emitError()
             << "'" << op->getName() << "' failed on device " << device;
    return answer;
  };
  // Padding added before the communicator call or dropped after it, as a
  // diagnostic at the op.
  auto reshaped = [&](llvm::Expected<Tensor> t) -> FailureOr<Tensor> {
    if (!t)
      return op->emitError() << "'" << op->getName() << "' on device " << device
                             << ": " << llvm::toString(t.takeError());
    return std::move(*t);
  };
  // A gather concatenates the group's blocks; past the result's size they
  // are padding of an uneven dim, dropped.
  auto dropPadding = [&](FailureOr<Tensor> t, int64_t d) -> FailureOr<Tensor> {
    if (failed(t) || t->dim(d) == resultType.getDimSize(d))
      return t;
    return reshaped(tryResizeDim(*t, d, resultType.getDimSize(d)));
  };
  FailureOr<Tensor> result = failure();
  int64_t dim = collective.getCollectiveDim();
  switch (collective.getCollectiveKind()) {
  case CollectiveKind::AllGather:
    result = dropPadding(
        viaCommunicator(communicator->allGather(input, group, dim)), dim);
    break;
  case CollectiveKind::ReduceScatter: {
    FailureOr<Tensor> padded = reshaped(padToBlocks(input, dim, groupSize));
    if (succeeded(padded))
      result = viaCommunicator(communicator->reduceScatter(
          *padded, group, dim,
          toCommunicatorReduction(collective.getCollectiveReduction())));
    break;
  }
  case CollectiveKind::AllReduce:
    result = viaCommunicator(communicator->allReduce(
        input, group, toCommunicatorReduction(collective.getCollectiveReduction())));
    break;
  case CollectiveKind::AllToAll: {
    int64_t concatDim = collective.getCollectiveConcatDim();
    FailureOr<Tensor> padded = reshaped(padToBlocks(input, dim, groupSize));
    if (succeeded(padded))
      result = dropPadding(viaCommunicator(communicator->allToAll(
                               *padded, group, dim, concatDim)),
                           concatDim);
    break;
  }
  case CollectiveKind::CollectivePermute: {
    result = viaCommunicator(communicator->collectivePermute(
        input, group, collective.getCollectivePairs()));
    break;
  }
  case CollectiveKind::AllSlice: {
    llvm::Expected<Tensor> block = trySlicePaddedBlock(
        input, dim, groupSize, topology.groupIndex(device, axes));
    if (!block)
      result = op->emitError() << llvm::toString(block.takeError());
    else
      result = std::move(*block);
    break;
  }
  }
  if (failed(result))
    return failure();
  if (result->shape() != resultType.getShape())
    return op->emitError() << "'" << op->getName() << "' produced "
                           << result->describe() << " on device " << device
                           << " but its result type is " << resultType;
  return result;
}

bool shardc::isDeviceDependent(Operation *op) { return isa<AxisIndexOp>(op); }

FailureOr<Tensor> shardc::evaluateOnDevice(Operation *op, int64_t deviceId) {
  auto axisIndex = dyn_cast<AxisIndexOp>(op);
  if (!axisIndex)
    return op->emitError() << "'" << op->getName()
                           << "' does not depend on the device";
  MeshOp mesh = lookupMesh(op, axisIndex.getMeshAttr());
  if (!mesh)
    return op->emitError() << "'" << op->getName() << "' names unknown mesh "
                           << axisIndex.getMeshAttr();
  FailureOr<MeshTopology> topology = getMeshTopology(mesh);
  if (failed(topology))
    return failure();
  SmallVector<StringRef> axes;
  for (Attribute a : axisIndex.getAxes()) {
    auto name = dyn_cast<StringAttr>(a);
    if (!name)
      return op->emitError("axis_index axes must be strings");
    axes.push_back(name.getValue());
  }
  if (llvm::Error err = topology->checkAxes(axes))
    return op->emitError() << "'" << op->getName() << "' on mesh "
                           << axisIndex.getMeshAttr() << ": "
                           << llvm::toString(std::move(err));
  if (deviceId < 0 || deviceId >= topology->numDevices())
    return op->emitError() << "device id " << deviceId << " is outside mesh "
                           << axisIndex.getMeshAttr() << " of "
                           << topology->numDevices() << " devices";
  llvm::Expected<Tensor> result = Tensor::allocate({}, DType::I64);
  if (!result)
    return op->emitError() << llvm::toString(result.takeError());
  result->dataAs<int64_t>()[0] = topology->groupIndex(deviceId, axes);
  return std::move(*result);
}

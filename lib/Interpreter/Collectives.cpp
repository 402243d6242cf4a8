//===- Collectives.cpp - running collectives on one device ----------------===//
//
// The interpreter's side of a collective: find the mesh, resolve this
// device's group, validate the op's dims against the local operand, and hand
// the data to the Communicator. all_slice moves no data, so it is computed
// here from the group index alone.
//
//===----------------------------------------------------------------------===//

#include "KernelImpl.h"

#include "shardc/Dialect/ShardingVerifier.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

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

namespace {
/// The attributes every collective has.
struct CollectiveInfo {
  FlatSymbolRefAttr mesh;
  ArrayAttr axes;
};
} // namespace

static CollectiveInfo getInfo(Operation *op) {
  return llvm::TypeSwitch<Operation *, CollectiveInfo>(op)
      .Case<AllGatherOp, ReduceScatterOp, AllReduceOp, AllToAllOp, AllSliceOp,
            CollectivePermuteOp>([](auto c) {
        return CollectiveInfo{c.getMeshAttr(), c.getAxes()};
      })
      .Default([](Operation *) { return CollectiveInfo{}; });
}

/// Checks that `dim` indexes the operand and, if `parts` > 0, splits evenly.
static LogicalResult checkDim(Operation *op, const Tensor &input,
                              StringRef what, int64_t dim, int64_t parts) {
  if (dim < 0 || dim >= input.rank())
    return op->emitError() << "'" << op->getName() << "' " << what << " " << dim
                           << " is out of range for operand "
                           << input.describe();
  if (parts > 0 && input.dim(dim) % parts != 0)
    return op->emitError() << "'" << op->getName() << "' operand dim " << dim
                           << " of size " << input.dim(dim)
                           << " is not divisible by the group size " << parts;
  return success();
}

static LogicalResult checkPairs(CollectivePermuteOp op, int64_t groupSize) {
  auto pairs = op.getSourceTargetPairs();
  if (pairs.size() != op.getPairs().size())
    return op.emitError("pairs must be a list of [source, target] pairs");
  llvm::DenseSet<int64_t> sources, targets;
  for (auto [s, t] : pairs)
    if (s < 0 || s >= groupSize || t < 0 || t >= groupSize ||
        !sources.insert(s).second || !targets.insert(t).second)
      return op.emitError() << "pair [" << s << ", " << t
                            << "] is out of range or repeats a device of "
                               "the group of size "
                            << groupSize;
  return success();
}

FailureOr<Tensor>
shardc::detail::evaluateCollective(Operation *op, const Tensor &input,
                                   Communicator *communicator,
                                   MeshTopologyCache &meshes) {
  CollectiveInfo info = getInfo(op);
  if (!info.mesh || !info.axes)
    return op->emitError() << "'" << op->getName() << "' is not a collective";
  if (!communicator)
    return op->emitError() << "collective '" << op->getName()
                           << "' needs a device mesh; run it with `shardc "
                              "simulate`";
  auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  auto operandType = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!resultType || !operandType || !resultType.hasStaticShape() ||
      !resultType.getElementType().isF32() ||
      operandType.getShape() != input.shape())
    return op->emitError() << "'" << op->getName()
                           << "' needs static f32 tensors matching its "
                              "operand; got "
                           << input.describe();

  MeshOp mesh = lookupMesh(op, info.mesh);
  if (!mesh)
    return op->emitError() << "'" << op->getName() << "' names unknown mesh "
                           << info.mesh;
  auto it = meshes.find(mesh.getOperation());
  if (it == meshes.end()) {
    FailureOr<MeshTopology> topology = getMeshTopology(mesh);
    if (failed(topology))
      return failure();
    it = meshes.try_emplace(mesh.getOperation(), std::move(*topology)).first;
  }
  const MeshTopology &topology = it->second;

  SmallVector<StringRef> axes;
  for (Attribute a : info.axes) {
    auto name = dyn_cast<StringAttr>(a);
    if (!name)
      return op->emitError("collective axes must be strings");
    axes.push_back(name.getValue());
  }
  if (llvm::Error err = topology.checkAxes(axes))
    return op->emitError() << "'" << op->getName() << "' on mesh " << info.mesh
                           << ": " << llvm::toString(std::move(err));
  int64_t device = communicator->deviceId();
  if (device < 0 || device >= topology.numDevices())
    return op->emitError() << "device id " << device << " is outside mesh "
                           << info.mesh << " of " << topology.numDevices()
                           << " devices";
  SmallVector<int64_t> group = topology.groupOf(device, axes);
  int64_t groupSize = static_cast<int64_t>(group.size());

  // A communicator reports its own errors; this adds which op and device.
  auto viaCommunicator = [&](FailureOr<Tensor> answer) -> FailureOr<Tensor> {
    if (failed(answer))
      return op->emitError()
             << "'" << op->getName() << "' failed on device " << device;
    return answer;
  };
  FailureOr<Tensor> result =
      llvm::TypeSwitch<Operation *, FailureOr<Tensor>>(op)
          .Case([&](AllGatherOp g) -> FailureOr<Tensor> {
            if (failed(checkDim(op, input, "dim", g.getDim(), 0)))
              return failure();
            return viaCommunicator(
                communicator->allGather(input, group, g.getDim()));
          })
          .Case([&](ReduceScatterOp r) -> FailureOr<Tensor> {
            if (failed(checkDim(op, input, "dim", r.getDim(), groupSize)))
              return failure();
            return viaCommunicator(communicator->reduceScatter(
                input, group, r.getDim(), r.getReduction()));
          })
          .Case([&](AllReduceOp r) {
            return viaCommunicator(
                communicator->allReduce(input, group, r.getReduction()));
          })
          .Case([&](AllToAllOp a) -> FailureOr<Tensor> {
            if (failed(checkDim(op, input, "split_dim", a.getSplitDim(),
                                groupSize)) ||
                failed(checkDim(op, input, "concat_dim", a.getConcatDim(), 0)))
              return failure();
            if (a.getSplitDim() == a.getConcatDim())
              return a.emitError("split_dim and concat_dim must differ");
            return viaCommunicator(communicator->allToAll(
                input, group, a.getSplitDim(), a.getConcatDim()));
          })
          .Case([&](CollectivePermuteOp p) -> FailureOr<Tensor> {
            if (failed(checkPairs(p, groupSize)))
              return failure();
            return viaCommunicator(communicator->collectivePermute(
                input, group, p.getSourceTargetPairs()));
          })
          .Case([&](AllSliceOp s) -> FailureOr<Tensor> {
            if (failed(checkDim(op, input, "dim", s.getDim(), groupSize)))
              return failure();
            llvm::Expected<Tensor> block =
                trySliceBlock(input, s.getDim(), groupSize,
                              topology.groupIndex(device, axes));
            if (!block)
              return s.emitError() << llvm::toString(block.takeError());
            return std::move(*block);
          })
          .Default([](Operation *) { return failure(); });
  if (failed(result))
    return failure();
  if (result->shape() != resultType.getShape())
    return op->emitError() << "'" << op->getName() << "' produced "
                           << result->describe() << " on device " << device
                           << " but its result type is " << resultType;
  return result;
}

//===- SimulatedMesh.cpp - running an SPMD program on every device --------===//

#include "shardc/Runtime/SimulatedMesh.h"

#include "shardc/Analysis/ReshardPlanner.h"
#include "shardc/Dialect/CostOpInterface.h"
#include "shardc/Dialect/ShardingVerifier.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Interpreter/Kernels.h"
#include "shardc/Runtime/TensorBlocks.h"

#include "llvm/ADT/DenseMap.h"

#include <cstring>

using namespace mlir;
using namespace shardc;

namespace {

/// What the trace calls a value: its source name; an unnamed collective's
/// result after what it moves; otherwise the op that made it.
std::string nameOf(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return getArgumentName(cast<func::FuncOp>(arg.getOwner()->getParentOp()),
                           arg.getArgNumber());
  Operation *def = v.getDefiningOp();
  if (StringRef name = getSourceName(v); !name.empty())
    return name.str();
  // A collective's result: name it after what it moves.
  if (isa<CollectiveOpInterface>(def))
    return nameOf(def->getOperand(0));
  return def->getName().stripDialect().str();
}

class LockstepExecutor {
public:
  LockstepExecutor(func::FuncOp func, MeshOp mesh, MeshTopology topology,
                   const SimulationOptions &options, SimulationReport &report)
      : func(func), mesh(mesh), topology(std::move(topology)), options(options),
        report(report), numDevices(this->topology.numDevices()) {}

  FailureOr<std::vector<std::vector<Tensor>>>
  run(std::vector<std::vector<Tensor>> deviceArgs);

private:
  /// Where the group over `axes` lies on the machine's nodes.
  GroupSpan groupSpan(ArrayRef<StringRef> axes) const {
    SmallVector<int64_t> indices;
    for (StringRef a : axes)
      indices.push_back(topology.axisIndex(a));
    return options.machine.groupSpan(topology.axisSizes(), indices);
  }
  LogicalResult runCollective(Operation *op);
  void define(Value v, std::vector<Tensor> perDevice);
  void release(Value v);
  /// Runs `op` for `seconds` on its track of every device (the devices'
  /// timelines are identical: one SPMD program, the same local sizes):
  /// in program order on the track, once every operand is ready. Adds it
  /// to the serial total too.
  void schedule(Operation *op, StringRef name, StringRef category,
                double seconds);
  /// When `op`'s operands are all ready on the overlapped timeline.
  double operandsReady(Operation *op) const;

  func::FuncOp func;
  MeshOp mesh;
  MeshTopology topology;
  const SimulationOptions &options;
  SimulationReport &report;
  int64_t numDevices;
  llvm::DenseMap<Value, std::vector<Tensor>> values;
  std::vector<int64_t> liveBytes;
  /// The serial clock (estimatedSeconds).
  double now = 0;
  /// The overlapped timeline: when each value is ready, when the compute
  /// track is next free (it runs ops in program order) and the
  /// communication track's busy intervals, sorted (a collective takes the
  /// first idle interval long enough after its operand is ready, so a
  /// gradient's reduction starts when the gradient is final, not after a
  /// reduction that comes before it in the program but later in time).
  llvm::DenseMap<Value, double> readyAt;
  double computeFree = 0;
  std::vector<std::pair<double, double>> communicationBusy;
};

void LockstepExecutor::define(Value v, std::vector<Tensor> perDevice) {
  for (int64_t d = 0; d < numDevices; ++d) {
    liveBytes[d] += perDevice[d].byteSize();
    report.peakBytesPerDevice[d] =
        std::max(report.peakBytesPerDevice[d], liveBytes[d]);
  }
  values[v] = std::move(perDevice);
}

void LockstepExecutor::release(Value v) {
  auto it = values.find(v);
  if (it == values.end())
    return;
  for (int64_t d = 0; d < numDevices; ++d)
    liveBytes[d] -= it->second[d].byteSize();
  values.erase(it);
}

double LockstepExecutor::operandsReady(Operation *op) const {
  double ready = 0;
  for (Value v : op->getOperands())
    ready = std::max(ready, readyAt.lookup(v));
  return ready;
}

void LockstepExecutor::schedule(Operation *op, StringRef name,
                                StringRef category, double seconds) {
  now += seconds;
  bool communication = category == "communication";
  (communication ? report.communicationSeconds : report.computeSeconds) +=
      seconds;
  double start = operandsReady(op);
  if (!communication) {
    start = std::max(start, computeFree);
    computeFree = start + seconds;
  } else {
    auto it = communicationBusy.begin();
    for (; it != communicationBusy.end(); ++it) {
      if (it->second <= start)
        continue; // ends before we could start
      if (start + seconds <= it->first)
        break; // fits in the gap before it
      start = it->second;
    }
    communicationBusy.insert(it, {start, start + seconds});
  }
  report.stepSeconds = std::max(report.stepSeconds, start + seconds);
  for (Value v : op->getResults())
    readyAt[v] = start + seconds;
  for (int64_t d = 0; d < numDevices; ++d)
    report.trace.push_back({d, name.str(), category.str(), start, seconds});
}

} // namespace

FailureOr<std::vector<Tensor>>
shardc::combineCollectiveGroup(Operation *op, ArrayRef<const Tensor *> inputs,
                               uint64_t maxTensorBytes) {
  auto collective = dyn_cast<CollectiveOpInterface>(op);
  std::optional<ReshardStep> desc = describeCollective(op);
  if (!collective || !desc)
    return op->emitOpError("is not a collective");
  CollectiveKind kind = collective.getCollectiveKind();
  int64_t dim = desc->dim, concatDim = desc->concatDim;
  Reduction reduction =
      toCommunicatorReduction(collective.getCollectiveReduction());
  int64_t n = static_cast<int64_t>(inputs.size());
  std::vector<Tensor> out(n);
  ArrayRef<std::pair<int64_t, int64_t>> pairs = desc->pairs;

  // Block movement fails only on shapes the verifier already rejected;
  // report it at the op all the same.
  auto unwrap = [&](llvm::Expected<Tensor> t, Tensor &into) -> bool {
    if (!t) {
      op->emitError() << "simulating '" << op->getName()
                      << "': " << llvm::toString(t.takeError());
      return false;
    }
    into = std::move(*t);
    return true;
  };
  // An uneven dim (docs/sharding.md#uneven-dims): blocks are cut from the
  // input padded to n blocks, and what a gather concatenates past the
  // result's size is padding, dropped.
  ArrayRef<int64_t> resultShape =
      cast<RankedTensorType>(op->getResult(0).getType()).getShape();
  auto dropPadding = [&](Tensor &t, int64_t d) -> bool {
    if (t.dim(d) == resultShape[d])
      return true;
    return unwrap(tryResizeDim(t, d, resultShape[d], maxTensorBytes), t);
  };
  switch (kind) {
  case CollectiveKind::AllGather: {
    Tensor all;
    if (!unwrap(tryConcatenate(inputs, dim, maxTensorBytes), all) ||
        !dropPadding(all, dim))
      return failure();
    for (int64_t g = 0; g < n; ++g)
      out[g] = all.clone();
    break;
  }
  case CollectiveKind::AllReduce: {
    Tensor sum = reduceTensors(inputs, reduction);
    for (int64_t g = 0; g < n; ++g)
      out[g] = sum.clone();
    break;
  }
  case CollectiveKind::ReduceScatter: {
    Tensor sum = reduceTensors(inputs, reduction);
    for (int64_t g = 0; g < n; ++g)
      if (!unwrap(trySlicePaddedBlock(sum, dim, n, g), out[g]))
        return failure();
    break;
  }
  case CollectiveKind::AllToAll:
    for (int64_t j = 0; j < n; ++j) {
      std::vector<Tensor> pieces(inputs.size());
      SmallVector<const Tensor *> refs;
      for (auto [i, t] : llvm::enumerate(inputs)) {
        if (!unwrap(trySlicePaddedBlock(*t, dim, n, j), pieces[i]))
          return failure();
        refs.push_back(&pieces[i]);
      }
      if (!unwrap(tryConcatenate(refs, concatDim, maxTensorBytes), out[j]) ||
          !dropPadding(out[j], concatDim))
        return failure();
    }
    break;
  case CollectiveKind::AllSlice:
    for (int64_t g = 0; g < n; ++g)
      if (!unwrap(trySlicePaddedBlock(*inputs[g], dim, n, g), out[g]))
        return failure();
    break;
  case CollectiveKind::CollectivePermute: {
    for (int64_t g = 0; g < n; ++g) {
      out[g] = inputs.front()->clone();
      std::memset(out[g].rawData(), 0, out[g].byteSize());
    }
    for (auto [s, t] : pairs)
      out[t] = inputs[s]->clone();
    break;
  }
  }
  return out;
}

namespace {

LogicalResult LockstepExecutor::runCollective(Operation *op) {
  auto collective = dyn_cast<CollectiveOpInterface>(op);
  std::optional<ReshardStep> desc = describeCollective(op);
  if (!collective || !desc)
    return op->emitOpError("is not a collective");
  CollectiveKind kind = collective.getCollectiveKind();
  int64_t dim = desc->dim, concatDim = desc->concatDim;
  ArrayRef<StringRef> axes = desc->axes;
  int64_t n = topology.groupSize(axes);
  const std::vector<Tensor> &in = values[op->getOperand(0)];
  std::vector<Tensor> out(numDevices);
  std::vector<bool> done(numDevices, false);
  for (int64_t dev = 0; dev < numDevices; ++dev) {
    if (done[dev])
      continue;
    SmallVector<int64_t> group = topology.groupOf(dev, axes);
    SmallVector<const Tensor *> inputs;
    for (int64_t m : group) {
      inputs.push_back(&in[m]);
      done[m] = true;
    }
    FailureOr<std::vector<Tensor>> results =
        combineCollectiveGroup(op, inputs, options.maxTensorBytes);
    if (failed(results))
      return failure();
    for (auto [g, m] : llvm::enumerate(group))
      out[m] = std::move((*results)[g]);
  }

  int64_t localBytes = in.front().byteSize();
  CollectiveRecord record;
  record.kind = op->getName().stripDialect().str();
  for (StringRef a : axes)
    record.axes.push_back(a.str());
  record.dim = dim;
  record.concatDim = concatDim;
  record.groupSize = n;
  record.bytesPerDevice = collective.getBytesSentPerDevice(n, localBytes);
  record.seconds = record.bytesPerDevice
                       ? options.machine.collectiveSeconds(
                             kind, groupSpan(axes), double(localBytes))
                       : 0;
  record.value = nameOf(op->getOperand(0));
  for (int64_t d = 0; d < numDevices; ++d)
    report.commBytesPerDevice[d] += record.bytesPerDevice;
  if (record.seconds > 0)
    schedule(op, record.kind + " " + record.value, "communication",
             record.seconds);
  else
    readyAt[op->getResult(0)] = operandsReady(op);
  report.collectives.push_back(std::move(record));
  define(op->getResult(0), std::move(out));
  return success();
}

FailureOr<std::vector<std::vector<Tensor>>>
LockstepExecutor::run(std::vector<std::vector<Tensor>> deviceArgs) {
  report = SimulationReport();
  report.numDevices = numDevices;
  report.peakBytesPerDevice.assign(numDevices, 0);
  report.commBytesPerDevice.assign(numDevices, 0);
  report.flopsPerDevice.assign(numDevices, 0);
  liveBytes.assign(numDevices, 0);

  Block &body = func.getBody().front();
  if (static_cast<int64_t>(deviceArgs.size()) != numDevices)
    return func.emitError()
           << "simulation needs arguments for " << numDevices << " devices";
  // Last use of every value, so blocks are freed as soon as possible and
  // the peak-memory figure is what a careful runtime would reach.
  llvm::DenseMap<Value, Operation *> lastUse;
  for (Operation &op : body)
    for (Value v : op.getOperands())
      lastUse[v] = &op;

  report.trainingBytesPerDevice.assign(numDevices, TrainingMemory());
  for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
    int64_t TrainingMemory::*role = nullptr;
    if (func.getArgAttr(i, ShardcDialect::getParamAttrName()))
      role = &TrainingMemory::parameters;
    else if (func.getArgAttr(i, ShardcDialect::getOptimizerStateAttrName()))
      role = &TrainingMemory::optimizerState;
    if (role)
      for (int64_t d = 0; d < numDevices; ++d)
        report.trainingBytesPerDevice[d].*role += deviceArgs[d][i].byteSize();
    std::vector<Tensor> perDevice;
    for (int64_t d = 0; d < numDevices; ++d)
      perDevice.push_back(std::move(deviceArgs[d][i]));
    define(arg, std::move(perDevice));
  }

  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      std::vector<std::vector<Tensor>> results(numDevices);
      for (auto [r, v] : llvm::enumerate(ret.getOperands())) {
        bool gradient =
            func.getResultAttr(r, ShardcDialect::getGradientOfAttrName()) !=
            nullptr;
        for (int64_t d = 0; d < numDevices; ++d) {
          results[d].push_back(values[v][d].clone());
          if (gradient)
            report.trainingBytesPerDevice[d].gradients +=
                results[d].back().byteSize();
        }
      }
      report.estimatedSeconds = now;
      report.exposedCommunicationSeconds =
          report.stepSeconds - report.computeSeconds;
      return results;
    }
    if (isa<CollectiveOpInterface>(op)) {
      if (failed(runCollective(&op)))
        return failure();
    } else if (isDeviceDependent(&op)) {
      // Each device's own coordinate: no data moves and nothing computes.
      std::vector<Tensor> out;
      for (int64_t d = 0; d < numDevices; ++d) {
        FailureOr<Tensor> r = evaluateOnDevice(&op, d);
        if (failed(r))
          return failure();
        out.push_back(std::move(*r));
      }
      define(op.getResult(0), std::move(out));
    } else {
      std::vector<Tensor> out;
      for (int64_t d = 0; d < numDevices; ++d) {
        SmallVector<const Tensor *> operands;
        for (Value v : op.getOperands())
          operands.push_back(&values[v][d]);
        // The op was verified with its function; no need to per device.
        FailureOr<Tensor> r =
            evaluateTensorOp(&op, operands, options.maxTensorBytes,
                             /*verifyOp=*/d == 0);
        if (failed(r))
          return failure();
        out.push_back(std::move(*r));
      }
      // The op is local: its rule's factors are this device's sizes.
      double flops = getOpFlops(&op);
      for (int64_t d = 0; d < numDevices; ++d)
        report.flopsPerDevice[d] += flops;
      if (flops > 0)
        schedule(&op,
                 op.getName().stripDialect().str() + " " +
                     nameOf(op.getResult(0)),
                 "compute", flops / options.machine.flopsPerSecond);
      else // free (a view, a constant): ready with its operands
        for (Value v : op.getResults())
          readyAt[v] = operandsReady(&op);
      define(op.getResult(0), std::move(out));
    }
    for (Value v : op.getOperands())
      if (lastUse.lookup(v) == &op &&
          !(options.argumentsStayLive && isa<BlockArgument>(v)))
        release(v);
  }
  return func.emitError("function has no return");
}

} // namespace

FailureOr<std::vector<std::vector<Tensor>>> shardc::simulateOnMesh(
    func::FuncOp spmd, MeshOp mesh, std::vector<std::vector<Tensor>> deviceArgs,
    const SimulationOptions &options, SimulationReport &report) {
  FailureOr<MeshTopology> topology = getMeshTopology(mesh);
  if (failed(topology))
    return failure();
  return LockstepExecutor(spmd, mesh, std::move(*topology), options, report)
      .run(std::move(deviceArgs));
}

void shardc::writeChromeTrace(const SimulationReport &report,
                              llvm::raw_ostream &os) {
  std::vector<int64_t> devices;
  for (int64_t d = 0; d < report.numDevices; ++d)
    devices.push_back(d);
  writeChromeTrace(devices, report.trace, os);
}

//===- PipelineSimulator.cpp - stage programs on a simulated mesh ---------===//
//
// The devices run different programs, so the lockstep executor of
// SimulatedMesh.cpp does not apply. Here each device has a program counter
// and a clock: devices are visited in id order, and each runs ops until it
// reaches a recv whose message has not been sent yet; the sweep repeats
// until every device has returned. The order of the sweep only decides
// when the host computes, never what: a device sees its messages in the
// order they were sent, and its clock follows the cost model, so results,
// times and the trace are deterministic. A sweep in which no device moves
// is a deadlock, reported at each waiting recv.
//
// A stage sharded over the other mesh axes runs collectives among the
// devices of its stage (a group never spans two pipeline coordinates, since
// no sharding names the pipeline axis). A device reaching a collective
// leaves its operand and waits; the last member of the group to arrive
// combines them (combineCollectiveGroup, the lockstep simulator's code),
// and every member resumes when the slowest arrived plus the collective's
// time under the shared cost model (MachineModel::collectiveSeconds).
//
//===----------------------------------------------------------------------===//

#include "shardc/Runtime/PipelineExecution.h"

#include "shardc/Analysis/ReshardPlanner.h"
#include "shardc/Dialect/CostOpInterface.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Interpreter/Kernels.h"
#include "shardc/Interpreter/PointToPoint.h"

#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <deque>
#include <map>

using namespace mlir;
using namespace shardc;

namespace {

struct Message {
  Tensor tensor;
  double arrivalSeconds;
};

/// One collective of one group, while its members arrive and leave.
struct PendingCollective {
  SmallVector<int64_t> group;
  std::vector<Tensor> inputs, outputs;
  std::vector<bool> arrived;
  int64_t numArrived = 0, numLeft = 0;
  /// When the last member arrived, and how long the collective takes.
  double startSeconds = 0, seconds = 0;
  int64_t bytesPerDevice = 0;
  bool combined = false;
};

/// What the devices share: messages in flight and collectives under way.
struct SharedState {
  const MeshTopology &topology;
  const SimulationOptions &options;
  std::map<std::pair<int64_t, int64_t>, std::deque<Message>> mailboxes;
  /// By the op and the first device of its group.
  std::map<std::pair<Operation *, int64_t>, PendingCollective> collectives;
};

StringRef actionOf(Operation *op) {
  auto attr = op->getAttrOfType<StringAttr>(
      ShardcDialect::getPipelineActionAttrName());
  return attr ? attr.getValue() : StringRef();
}

StringRef categoryOf(StringRef action) {
  if (action.starts_with("F"))
    return "forward";
  if (action.starts_with("B"))
    return "backward";
  return "update";
}

class DeviceRun {
public:
  DeviceRun(int64_t device, func::FuncOp program, std::vector<Tensor> args,
            PipelineSimulation &report)
      : device(device), program(program), report(report),
        pc(program.getBody().front().begin()) {
    Block &body = program.getBody().front();
    for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
      liveBytes += args[i].byteSize();
      values[arg] = std::move(args[i]);
    }
    for (Operation &op : body)
      for (Value v : op.getOperands())
        lastUse[v] = &op;
    // An activation: what a forward computes for its micro-batch's
    // backward.
    for (Operation &op : body) {
      if (!actionOf(&op).starts_with("F") || op.getNumResults() != 1)
        continue;
      Value v = op.getResult(0);
      if (llvm::any_of(v.getUsers(), [](Operation *user) {
            return actionOf(user).starts_with("B");
          }))
        activations.insert(v);
    }
    report.peakBytesPerDevice[device] = liveBytes;
  }

  bool done() const { return finished; }
  std::vector<Tensor> takeResults() { return std::move(results); }
  /// The recv this device waits at, if it waits.
  Operation *current() { return &*pc; }

  /// Runs ops until the device returns or waits for a message. Sets
  /// `moved` when it ran at least one op.
  LogicalResult advance(SharedState &shared, bool &moved);

private:
  /// Runs collective `op` as far as it can: sets `waiting` while members
  /// of its group have not arrived.
  LogicalResult runCollective(Operation &op, SharedState &shared,
                              bool &moved, bool &waiting);
  void define(Value v, Tensor t) {
    liveBytes += t.byteSize();
    report.peakBytesPerDevice[device] =
        std::max(report.peakBytesPerDevice[device], liveBytes);
    if (activations.contains(v)) {
      activationBytes += t.byteSize();
      report.peakActivationBytesPerDevice[device] = std::max(
          report.peakActivationBytesPerDevice[device], activationBytes);
    }
    values[v] = std::move(t);
  }
  void releaseOperands(Operation &op) {
    for (Value v : llvm::concat<Value>(op.getOperands(), op.getResults())) {
      Operation *last = lastUse.lookup(v);
      if (last && last != &op)
        continue;
      auto it = values.find(v);
      if (it == values.end())
        continue;
      liveBytes -= it->second.byteSize();
      if (activations.contains(v))
        activationBytes -= it->second.byteSize();
      values.erase(it);
    }
  }
  /// Closes the span of the action that ran until now.
  void closeSpan() {
    if (!spanAction.empty() && spanEnd > spanStart)
      report.trace.push_back({device, spanAction.str(),
                              categoryOf(spanAction).str(), spanStart,
                              spanEnd - spanStart});
    spanAction = "";
  }
  void compute(Operation &op, double seconds) {
    StringRef action = actionOf(&op);
    if (action != spanAction) {
      closeSpan();
      spanAction = action;
      spanStart = clock;
    }
    clock += seconds;
    spanEnd = clock;
    report.busySecondsPerDevice[device] += seconds;
  }

  int64_t device;
  func::FuncOp program;
  PipelineSimulation &report;
  Block::iterator pc;
  llvm::DenseMap<Value, Tensor> values;
  llvm::DenseMap<Value, Operation *> lastUse;
  llvm::DenseSet<Value> activations;
  int64_t liveBytes = 0, activationBytes = 0;
  double clock = 0;
  StringRef spanAction;
  double spanStart = 0, spanEnd = 0;
  bool finished = false;
  std::vector<Tensor> results;
};

LogicalResult DeviceRun::runCollective(Operation &op, SharedState &shared,
                                       bool &moved, bool &waiting) {
  std::optional<ReshardStep> desc = describeCollective(&op);
  if (!desc)
    return op.emitOpError("is not a collective");
  SmallVector<int64_t> group = shared.topology.groupOf(device, desc->axes);
  auto key = std::make_pair(&op, group.front());
  PendingCollective &pending = shared.collectives[key];
  if (pending.group.empty()) {
    pending.group = group;
    pending.inputs.resize(group.size());
    pending.arrived.assign(group.size(), false);
  }
  int64_t g = llvm::find(group, device) - group.begin();
  if (!pending.arrived[g]) {
    pending.arrived[g] = true;
    pending.inputs[g] = values[op.getOperand(0)].clone();
    pending.startSeconds = std::max(pending.startSeconds, clock);
    ++pending.numArrived;
    moved = true;
  }
  int64_t n = static_cast<int64_t>(group.size());
  waiting = pending.numArrived < n;
  if (waiting)
    return success();
  if (!pending.combined) {
    SmallVector<const Tensor *> inputs;
    for (const Tensor &t : pending.inputs)
      inputs.push_back(&t);
    FailureOr<std::vector<Tensor>> out = combineCollectiveGroup(
        &op, inputs, shared.options.maxTensorBytes);
    if (failed(out))
      return failure();
    pending.outputs = std::move(*out);
    auto collective = cast<CollectiveOpInterface>(op);
    int64_t localBytes = pending.inputs.front().byteSize();
    pending.bytesPerDevice = collective.getBytesSentPerDevice(n, localBytes);
    pending.seconds = pending.bytesPerDevice
                          ? shared.options.machine.collectiveSeconds(
                                collective.getCollectiveKind(), n, localBytes)
                          : 0;
    pending.inputs.clear();
    pending.combined = true;
  }
  // The wait and the transfer are no part of the action's compute span.
  closeSpan();
  clock = pending.startSeconds + pending.seconds;
  report.sentBytesPerDevice[device] += pending.bytesPerDevice;
  if (pending.seconds > 0)
    report.trace.push_back(
        {device,
         op.getName().stripDialect().str() + " " + actionOf(&op).str(),
         "collective", pending.startSeconds, pending.seconds});
  define(op.getResult(0), std::move(pending.outputs[g]));
  if (++pending.numLeft == n)
    shared.collectives.erase(key);
  return success();
}

LogicalResult DeviceRun::advance(SharedState &shared, bool &moved) {
  const SimulationOptions &options = shared.options;
  auto &mailboxes = shared.mailboxes;
  while (!finished) {
    Operation &op = *pc;
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (Value v : ret.getOperands())
        results.push_back(values[v].clone());
      closeSpan();
      report.stepSeconds = std::max(report.stepSeconds, clock);
      finished = true;
      moved = true;
      return success();
    }
    std::optional<PointToPointSide> side = pointToPointSide(&op);
    if (side == PointToPointSide::Receive) {
      FailureOr<int64_t> peer = resolvePeerDevice(&op, device);
      if (failed(peer))
        return failure();
      std::deque<Message> &box = mailboxes[{*peer, device}];
      if (box.empty())
        return success(); // waits; another device moves first
      Message message = std::move(box.front());
      box.pop_front();
      auto type = cast<RankedTensorType>(op.getResult(0).getType());
      if (message.tensor.shape() != type.getShape())
        return op.emitError() << "device " << device << " expected " << type
                              << " from device " << *peer << " but received "
                              << message.tensor.describe();
      if (message.arrivalSeconds > clock) {
        closeSpan(); // the wait is no part of the action's span
        clock = message.arrivalSeconds;
      }
      define(op.getResult(0), std::move(message.tensor));
    } else if (side == PointToPointSide::Send) {
      FailureOr<int64_t> peer = resolvePeerDevice(&op, device);
      if (failed(peer))
        return failure();
      const Tensor &payload = values[op.getOperand(0)];
      int64_t bytes = payload.byteSize();
      double seconds = options.machine.transferSeconds(1, bytes);
      // Buffered: the sender goes on computing while the message travels.
      mailboxes[{device, *peer}].push_back({payload.clone(), clock + seconds});
      report.sentBytesPerDevice[device] += bytes;
      report.trace.push_back({device,
                              "send " + actionOf(&op).str() + " -> " +
                                  std::to_string(*peer),
                              "send", clock, seconds});
    } else if (isa<CollectiveOpInterface>(op)) {
      bool waiting = false;
      if (failed(runCollective(op, shared, moved, waiting)))
        return failure();
      if (waiting)
        return success(); // the rest of its group moves first
    } else if (isDeviceDependent(&op)) {
      FailureOr<Tensor> r = evaluateOnDevice(&op, device);
      if (failed(r))
        return failure();
      define(op.getResult(0), std::move(*r));
    } else {
      SmallVector<const Tensor *> operands;
      for (Value v : op.getOperands())
        operands.push_back(&values[v]);
      FailureOr<Tensor> r = evaluateTensorOp(&op, operands,
                                             options.maxTensorBytes,
                                             /*verifyOp=*/false);
      if (failed(r))
        return failure();
      double flops = getOpFlops(&op);
      report.flopsPerDevice[device] += flops;
      if (flops > 0)
        compute(op, flops / options.machine.flopsPerSecond);
      define(op.getResult(0), std::move(*r));
    }
    releaseOperands(op);
    ++pc;
    moved = true;
  }
  return success();
}

} // namespace

FailureOr<std::vector<std::vector<Tensor>>>
shardc::simulatePipeline(const PipelinePrograms &pipeline,
                         std::vector<std::vector<Tensor>> deviceArgs,
                         const SimulationOptions &options,
                         PipelineSimulation &report) {
  FailureOr<std::vector<int64_t>> stages = stagesOfDevices(pipeline);
  if (failed(stages))
    return failure();
  int64_t n = static_cast<int64_t>(stages->size());
  if (static_cast<int64_t>(deviceArgs.size()) != n)
    return pipeline.mesh.emitError()
           << "the pipeline simulation needs arguments for " << n
           << " devices";
  for (func::FuncOp program : pipeline.programs)
    if (failed(mlir::verify(program)))
      return failure();
  report = PipelineSimulation();
  report.numDevices = n;
  report.busySecondsPerDevice.assign(n, 0);
  report.peakActivationBytesPerDevice.assign(n, 0);
  report.peakBytesPerDevice.assign(n, 0);
  report.sentBytesPerDevice.assign(n, 0);
  report.flopsPerDevice.assign(n, 0);

  // Pointers: a device's state is not copied once its run began.
  std::vector<std::unique_ptr<DeviceRun>> devices;
  for (int64_t d = 0; d < n; ++d) {
    func::FuncOp program = pipeline.programs[(*stages)[d]];
    if (program.getNumArguments() != deviceArgs[d].size())
      return program.emitError()
             << "@" << program.getSymName() << " takes "
             << program.getNumArguments() << " inputs but device " << d
             << " was given " << deviceArgs[d].size();
    devices.push_back(std::make_unique<DeviceRun>(
        d, program, std::move(deviceArgs[d]), report));
  }
  FailureOr<MeshTopology> topology = getMeshTopology(pipeline.mesh);
  if (failed(topology))
    return failure();
  SharedState shared{*topology, options, {}, {}};
  while (llvm::any_of(devices, [](const auto &d) { return !d->done(); })) {
    bool moved = false;
    for (auto &device : devices)
      if (failed(device->advance(shared, moved)))
        return failure();
    if (moved)
      continue;
    for (auto [d, device] : llvm::enumerate(devices))
      if (!device->done())
        device->current()->emitError()
            << "pipeline deadlock: device " << d
            << " waits for a message or a collective no device will join";
    return failure();
  }

  double busy = 0;
  for (double b : report.busySecondsPerDevice)
    busy += b;
  if (report.stepSeconds > 0)
    report.bubbleFraction = 1 - busy / (double(n) * report.stepSeconds);
  std::vector<std::vector<Tensor>> results;
  for (auto &device : devices)
    results.push_back(device->takeResults());
  return results;
}

//===- StepEstimate.cpp - memory and time of a training step, unrun -------===//
//
// docs/estimate.md explains every figure. The walk classifies the ops of
// the SPMD program once:
//   forward   the ops the loss (result 0) depends on;
//   update    the ops that read the learning rate or the optimizer state
//             (the optimizer step, and ZeRO's gather of the new weights);
//   gradsync  collectives (and the layout ops between them) whose every
//             user is an update op, a returned value or another gradsync:
//             the gradient reductions, which overlap the backward pass;
//   backward  the rest.
// and prices each: GEMMs at the peak of the compute type times the
// machine's efficiency for their size, every other op as memory-bound,
// collectives on the links their groups span. Memory comes from one
// liveness pass over the same order. Recomputation is the program's
// (--shardc-recompute): its copies of forward ops are backward ops, their
// FLOPs counted as recompute FLOPs by their `shardc.recomputed` mark.
//
//===----------------------------------------------------------------------===//

#include "shardc/Analysis/StepEstimate.h"

#include "shardc/Analysis/ForwardPass.h"

#include "shardc/Dialect/RecomputedAttr.h"
#include "shardc/Dialect/ShardcOps.h"
#include "shardc/Dialect/ValueNames.h"

#include "llvm/Support/Regex.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace shardc;

namespace {

enum class Phase { Forward, Backward, GradSync, Update };

/// Ops a fusing compiler (XLA, torch.compile; Megatron-LM's fused
/// LayerNorm, softmax and bias-GeLU kernels) puts in one kernel with their
/// neighbours: elementwise ops and views, and reductions as the kernel's
/// last step.
bool isFusible(Operation *op) {
  KernelClass k = getKernelClass(op);
  return k == KernelClass::Fusible || k == KernelClass::View;
}

/// Ops that compute nothing: views and values a kernel makes on the fly.
bool isFree(Operation *op) { return isFreeKernel(getKernelClass(op)); }

bool isGemm(Operation *op) { return getKernelClass(op) == KernelClass::Gemm; }

int64_t numElements(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return 1;
  int64_t n = 1;
  for (int64_t d : tensor.getShape())
    n *= d;
  return n;
}

/// A view that keeps every element once (a reshape): between a gradient's
/// reductions it is part of its synchronization.
bool isRelayout(Operation *op) {
  return getKernelClass(op) == KernelClass::View && op->getNumOperands() == 1 &&
         op->getNumResults() == 1 &&
         numElements(op->getOperand(0).getType()) ==
             numElements(op->getResult(0).getType());
}

bool isFloat32(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

class Estimator {
public:
  Estimator(func::FuncOp func, MeshOp mesh, const MachineModel &machine,
            const EstimateOptions &options)
      : func(func), mesh(mesh), machine(machine), options(options),
        bytes(roleBytes(options.precision)) {}

  StepProfile profile();

private:
  void classify();
  /// Bytes of `v` as the policy stores it (`phase` of its producer).
  double valueBytes(Value v, Phase phase) const {
    double perElement = isFloat32(v.getType())
                            ? (phase == Phase::Update ? 4 : bytes.activation)
                            : double(cast<RankedTensorType>(v.getType())
                                         .getElementTypeBitWidth()) /
                                  8;
    return double(numElements(v.getType())) * perElement;
  }
  Phase phaseOf(Operation *op) const { return phases.lookup(op); }
  /// Whether `v` is written to memory: made by an op that does not fuse,
  /// read by one that does not, or kept for another phase (the forward
  /// values the backward pass reads). Inside a chain of fusible ops a
  /// value lives in registers (an ideal fusing compiler; docs/estimate.md).
  bool isMaterialized(Value v) const {
    Operation *def = v.getDefiningOp();
    if (!def || !fuses(def))
      return true;
    // Recomputed forward ops run as the forward kernels they copy: their
    // values the backward pass reads are written, as the originals were.
    auto kernelOf = [&](Operation *op) {
      return std::make_pair(phaseOf(op), op->hasAttr(kRecomputedAttrName));
    };
    auto kernel = kernelOf(def);
    return llvm::any_of(v.getUsers(), [&](Operation *u) {
      return u == def->getBlock()->getTerminator() || !fuses(u) ||
             kernelOf(u) != kernel;
    });
  }
  /// Whether `op` joins its neighbours' kernel on this machine.
  bool fuses(Operation *op) const {
    return machine.fusesElementwise && isFusible(op);
  }
  /// Whether `op` costs nothing on this machine: a machine that runs op by
  /// op makes views and generated values (iota, broadcasts) as kernels.
  bool costsNothing(Operation *op) const {
    return isFree(op) && (machine.fusesElementwise ||
                          getKernelClass(op) == KernelClass::None);
  }
  /// Seconds of `op`; sets the FLOPs it computes and the kernels (0 or 1)
  /// it launches.
  double opSeconds(Operation *op, double &flops, double &launches);
  double collectiveSeconds(Operation *op);
  double pipelineSendSeconds();
  void accountRoles(StepEstimate &e);
  void accountLiveness(StepEstimate &e);

  func::FuncOp func;
  MeshOp mesh;
  const MachineModel &machine;
  const EstimateOptions &options;
  RoleBytes bytes;
  SmallVector<Operation *> ops;
  llvm::DenseMap<Operation *, unsigned> position;
  llvm::DenseMap<Operation *, Phase> phases;
  /// Values computed from constants alone (masks, scales): fused into
  /// their users, never stored.
  llvm::DenseSet<Value> constantDerived;
  /// Collectives whose operand is a parameter (or a gathered one): FSDP's
  /// gathers, prefetched ahead of their use.
  llvm::DenseSet<Operation *> prefetchable;
};

} // namespace

void Estimator::classify() {
  Block &body = func.getBody().front();
  for (Operation &op : body.without_terminator()) {
    position[&op] = ops.size();
    ops.push_back(&op);
  }
  Operation *ret = body.getTerminator();

  llvm::DenseSet<Operation *> forward = collectForwardPass(ret);
  SmallVector<Operation *> work;

  // The gradients' slice (what the returned gradients need); the update
  // is everything else after the forward pass.
  llvm::DenseSet<Operation *> gradientSlice;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (func.getResultAttr(i, ShardcDialect::getGradientOfAttrName()))
      if (Operation *def = ret->getOperand(i).getDefiningOp())
        work.push_back(def);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (forward.contains(op) || !gradientSlice.insert(op).second)
      continue;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        work.push_back(def);
  }
  bool trainingStep = !gradientSlice.empty();
  llvm::DenseSet<Operation *> update;
  for (Operation *op : ops)
    if (trainingStep && !forward.contains(op) && !gradientSlice.contains(op))
      update.insert(op);

  // Gradient synchronization, from the end.
  llvm::DenseSet<Operation *> gradSync;
  for (Operation *op : llvm::reverse(ops)) {
    if (forward.contains(op) || update.contains(op))
      continue;
    if (!isa<CollectiveOpInterface>(op) && !isRelayout(op))
      continue;
    bool feedsUpdateOnly = llvm::all_of(op->getUsers(), [&](Operation *u) {
      return u == ret || update.contains(u) || gradSync.contains(u);
    });
    // A layout op alone is no reduction; it joins one that follows it.
    if (feedsUpdateOnly)
      gradSync.insert(op);
  }
  for (Operation *op : ops)
    phases[op] = forward.contains(op)    ? Phase::Forward
                 : update.contains(op)   ? Phase::Update
                 : gradSync.contains(op) ? Phase::GradSync
                                         : Phase::Backward;

  for (Operation *op : ops) {
    bool fromConstants =
        llvm::all_of(op->getOperands(),
                     [&](Value v) { return constantDerived.contains(v); }) &&
        (!isa<CollectiveOpInterface>(op) ||
         cast<CollectiveOpInterface>(op).getCollectiveKind() ==
             CollectiveKind::AllSlice);
    if (fromConstants)
      for (Value r : op->getResults())
        constantDerived.insert(r);
    if (isa<CollectiveOpInterface>(op)) {
      Value in = op->getOperand(0);
      Operation *def = in.getDefiningOp();
      if (isa<BlockArgument>(in) || (def && prefetchable.contains(def)))
        if (phaseOf(op) != Phase::Update)
          prefetchable.insert(op);
    }
  }
}

double Estimator::collectiveSeconds(Operation *op) {
  auto c = cast<CollectiveOpInterface>(op);
  SmallVector<int64_t, 2> axes;
  int64_t n = 1;
  for (Attribute a : c.getAxes()) {
    StringRef name = cast<StringAttr>(a).getValue();
    axes.push_back(mesh.getAxisIndex(name));
    n *= std::max<int64_t>(mesh.getAxisSize(name), 1);
  }
  Value in = op->getOperand(0);
  // What moves is stored as its producer's phase stores it: updated
  // parameters (ZeRO's gather) in the parameters' precision.
  Operation *def = in.getDefiningOp();
  Phase phase = def ? phaseOf(def) : phaseOf(op);
  double perElement =
      !isFloat32(in.getType())
          ? double(
                cast<RankedTensorType>(in.getType()).getElementTypeBitWidth()) /
                8
      : phase == Phase::Update || isa<BlockArgument>(in) ? bytes.parameter
                                                         : bytes.activation;
  double localBytes = double(numElements(in.getType())) * perElement;
  if (!c.getBytesSentPerDevice(n, int64_t(localBytes)))
    return 0;
  // Devices time-sharing the host's cores copy and rendezvous in turn,
  // and the cores may idle while a waiting device sleeps.
  int64_t devices = mesh.getNumDevices();
  return machine.timeSharing(devices) *
             machine.collectiveSeconds(
                 c.getCollectiveKind(),
                 machine.groupSpan(mesh.getAxisSizes(), axes), localBytes) +
         machine.timeSharedWaitSeconds(devices);
}

/// One micro-batch's activation crossing a stage boundary: the first layer
/// input (`layerInputs`) of the forward pass, as stored, sent to the next
/// stage on the link between them — between nodes when the pipeline axis
/// spans nodes. Its gradient comes back the same size. 0 with no pipeline
/// or no layer input to size it by.
double Estimator::pipelineSendSeconds() {
  if (options.pipelineAxis.empty() ||
      mesh.getAxisSize(options.pipelineAxis) <= 1)
    return 0;
  llvm::Regex layerInput(options.layerInputs);
  for (Operation *op : ops) {
    if (phaseOf(op) != Phase::Forward || op->getNumResults() != 1 ||
        !layerInput.match(getSourceName(op->getResult(0))))
      continue;
    int64_t axis = mesh.getAxisIndex(options.pipelineAxis);
    GroupSpan span = machine.groupSpan(mesh.getAxisSizes(), {axis});
    LinkModel link = span.outer > 1 ? machine.interNode : machine.intraNode();
    return machine.timeSharing(mesh.getNumDevices()) *
               (MachineModel::transferSeconds(
                    link, 1, valueBytes(op->getResult(0), Phase::Forward)) +
                link.syncSeconds) +
           machine.timeSharedWaitSeconds(mesh.getNumDevices());
  }
  return 0;
}

double Estimator::opSeconds(Operation *op, double &flops, double &launches) {
  flops = 0;
  launches = 0;
  if (costsNothing(op) || isa<CollectiveOpInterface>(op))
    return 0;
  flops = isFree(op) ? 0 : getOpFlops(op);
  Phase phase = phaseOf(op);
  // A kernel of its own pays the launch; a fused op rides in the kernel of
  // the op it fuses into (the one writing the chain's result).
  bool ownKernel = !fuses(op) || llvm::any_of(op->getResults(), [&](Value r) {
    return isMaterialized(r);
  });
  launches = ownKernel ? 1 : 0;
  // Devices sharing the host's cores run their kernels in turn, the
  // dispatch of each included: where a device is a thread, the overhead
  // is work on the shared cores too.
  double shared = machine.timeSharing(mesh.getNumDevices());
  double overhead = ownKernel ? shared * machine.opOverheadSeconds : 0;
  if (isGemm(op))
    return overhead + shared * machine.gemmSeconds(flops, phase == Phase::Update
                                                              ? ComputeType::F32
                                                              : bytes.compute);
  // Memory-bound: what the op reads from memory and writes back; a value
  // that is not materialized stays in registers (and values computed from
  // constants alone are made in the kernel, where the machine fuses).
  double moved = 0;
  for (Value v : op->getOperands()) {
    Operation *def = v.getDefiningOp();
    if ((machine.fusesElementwise && constantDerived.contains(v)) ||
        !isMaterialized(v))
      continue;
    moved += valueBytes(v, def ? phaseOf(def) : phase);
  }
  for (Value r : op->getResults())
    if (isMaterialized(r))
      moved += valueBytes(r, phase);
  return overhead + shared * machine.memoryBoundSeconds(moved, flops);
}

void Estimator::accountRoles(StepEstimate &e) {
  double paramElements = 0, masterElements = 0, stateBytes = 0;
  bool adam = false;
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    double n = double(numElements(arg.getType()));
    if (func.getArgAttr(i, ShardcDialect::getParamAttrName())) {
      paramElements += n;
    } else if (func.getArgAttr(i, ShardcDialect::getOptimizerStateAttrName())) {
      stateBytes += n * (isFloat32(arg.getType()) ? bytes.optimizerState : 4);
      if (StringRef(getSourceName(arg)).ends_with(".adam_m")) {
        adam = true;
        masterElements += n;
      }
    }
  }
  // The master copy is laid out like the optimizer state (split by ZeRO
  // as the moments are); SGD has no state, so it follows the parameters.
  if (!adam)
    masterElements = paramElements;
  double gradientElements = 0;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (func.getResultAttr(i, ShardcDialect::getGradientOfAttrName()))
      gradientElements += double(numElements(func.getResultTypes()[i]));
  if (options.zeroStage == 1)
    gradientElements = paramElements;
  e.parameters = paramElements * bytes.parameter;
  e.gradients = gradientElements * bytes.gradient;
  e.optimizerState = stateBytes + masterElements * bytes.masterWeight;
}

void Estimator::accountLiveness(StepEstimate &e) {
  // The values stored: results of ops that cost something, not computed
  // from constants alone, not returned (the returned gradients and new
  // state are the roles' buffers, counted above).
  Operation *ret = func.getBody().front().getTerminator();
  llvm::DenseSet<Value> returned(ret->getOperands().begin(),
                                 ret->getOperands().end());
  struct Stored {
    double bytes;
    bool forward;
    unsigned freeAt;
  };
  llvm::DenseMap<Value, Stored> stored;
  SmallVector<SmallVector<Value, 2>> freeing(ops.size());
  unsigned firstBackward = ops.size();
  for (Operation *op : ops) {
    unsigned at = position[op];
    Phase phase = phaseOf(op);
    // Where the backward pass starts: its first op that computes (the
    // partitioner hoists constants and their broadcasts to the top).
    if (phase == Phase::Backward && !isFree(op) &&
        firstBackward == ops.size() &&
        !llvm::all_of(op->getResults(),
                      [&](Value r) { return constantDerived.contains(r); }))
      firstBackward = at;
    // A fused optimizer (apex's, DeepSpeed's) updates in place.
    if (isFree(op) || phase == Phase::Update)
      continue;
    for (Value r : op->getResults()) {
      if (constantDerived.contains(r) || returned.contains(r))
        continue;
      if (!isMaterialized(r))
        continue;
      // The gradient buffer itself, reduced in place.
      if (!r.use_empty() && llvm::all_of(r.getUsers(), [&](Operation *u) {
            return u == ret || phaseOf(u) == Phase::GradSync;
          }))
        continue;
      unsigned last = at;
      for (Operation *u : r.getUsers())
        if (u != ret)
          last = std::max(last, position.lookup(u));
      double b = valueBytes(r, phase);
      stored[r] = {b, phase == Phase::Forward, last};
      freeing[last].push_back(r);
    }
  }

  double live = 0, liveForward = 0, peak = -1;
  for (Operation *op : ops) {
    unsigned at = position[op];
    if (at == firstBackward)
      e.savedActivationsPerMicrobatch = liveForward;
    for (Value r : op->getResults())
      if (auto it = stored.find(r); it != stored.end()) {
        live += it->second.bytes;
        if (it->second.forward)
          liveForward += it->second.bytes;
      }
    if (live > peak) {
      peak = live;
      e.activations = liveForward;
      e.temporaries = live - liveForward;
    }
    for (Value v : freeing[at]) {
      const Stored &s = stored[v];
      live -= s.bytes;
      if (s.forward)
        liveForward -= s.bytes;
    }
  }
  if (firstBackward == ops.size())
    e.savedActivationsPerMicrobatch = 0;
}

StepProfile Estimator::profile() {
  classify();
  StepProfile prof;
  StepEstimate &e = prof.shared;
  e.numDevices = mesh.getNumDevices();
  e.globalParameters = options.globalParameters;
  if (!options.pipelineAxis.empty())
    e.pipelineStages =
        std::max<int64_t>(mesh.getAxisSize(options.pipelineAxis), 1);
  e.peakFlopsPerSecond = machine.peakFlops[int(bytes.compute)];

  // One micro-batch's forward and backward, and the step's update.
  for (Operation *op : ops) {
    Phase phase = phaseOf(op);
    if (isa<CollectiveOpInterface>(op)) {
      double t = collectiveSeconds(op);
      double calls = t > 0 ? 1 : 0;
      if (phase == Phase::Update)
        prof.ku += t, prof.ncu += calls;
      else if (phase == Phase::GradSync)
        prof.kg += t, prof.nc += calls;
      else if (prefetchable.contains(op))
        prof.kp += t, prof.nc += calls;
      else
        prof.kc += t, prof.nc += calls;
      continue;
    }
    double flops = 0, launches = 0;
    double t = opSeconds(op, flops, launches);
    if (phase == Phase::Update)
      prof.nku += launches;
    else
      prof.nk += launches;
    switch (phase) {
    case Phase::Forward:
      prof.cf += t;
      prof.ff += flops;
      break;
    case Phase::Backward:
    case Phase::GradSync:
      prof.cb += t;
      (op->hasAttr(kRecomputedAttrName) ? prof.fr : prof.fb) += flops;
      break;
    case Phase::Update:
      prof.cu += t;
      prof.fu += flops;
      break;
    }
  }
  prof.sendSeconds = pipelineSendSeconds();
  prof.communicationOverlaps = machine.timeSharing(mesh.getNumDevices()) <= 1;
  accountRoles(e);
  accountLiveness(e);
  return prof;
}

StepProfile shardc::extrapolateInDepth(const StepProfile &one,
                                       const StepProfile &two, int64_t layers) {
  StepProfile p = two;
  double k = double(layers - 1);
  for (double StepProfile::*field :
       {&StepProfile::cf, &StepProfile::cb, &StepProfile::cu, &StepProfile::ff,
        &StepProfile::fb, &StepProfile::fu, &StepProfile::fr, &StepProfile::kc,
        &StepProfile::kp, &StepProfile::kg, &StepProfile::ku, &StepProfile::nk,
        &StepProfile::nku, &StepProfile::nc, &StepProfile::ncu})
    p.*field = one.*field + k * (two.*field - one.*field);
  for (double StepEstimate::*field :
       {&StepEstimate::globalParameters, &StepEstimate::parameters,
        &StepEstimate::gradients, &StepEstimate::optimizerState,
        &StepEstimate::activations, &StepEstimate::temporaries,
        &StepEstimate::savedActivationsPerMicrobatch})
    p.shared.*field =
        one.shared.*field + k * (two.shared.*field - one.shared.*field);
  return p;
}

StepEstimate shardc::scheduleStep(const StepProfile &prof,
                                  const EstimateOptions &options) {
  StepEstimate e = prof.shared;
  e.microbatches = std::max<int64_t>(options.microbatches, 1);
  double cf = prof.cf, cb = prof.cb, cu = prof.cu;
  double kc = prof.kc, kp = prof.kp, kg = prof.kg, ku = prof.ku;
  double p = double(e.pipelineStages), m = double(e.microbatches);
  // Communication `k` overlapped with compute `c` shows only beyond it,
  // where a device's core would otherwise idle while it waits. Devices
  // time-sharing the host's cores leave no core idle (another device's
  // work fills the wait), so their communication's own work (the
  // rendezvous, the copies) adds to the step whole.
  bool overlaps = prof.communicationOverlaps;
  auto beyond = [&](double k, double c) {
    return overlaps ? std::max(0.0, k - c) : k;
  };
  double perMicrobatch = cf + cb + kc + beyond(kp, cf + cb);
  // The interleaved schedule's devices hold v chunks, each of which sends
  // its micro-batch's activation on and receives its gradient back.
  double v = options.schedule == PipelineScheduleKind::Interleaved
                 ? double(options.virtualStages)
                 : 1.0;
  double send = prof.sendSeconds;
  double sends = 2 * v * send;
  // Once the pipeline is full the sends are asynchronous: a chunk's
  // activation travels while its device runs the next step of the
  // schedule, at least a chunk's backward (1F1B and interleaved alternate
  // forwards and backwards; GPipe's next step is a longer forward), and
  // its gradient while the device runs at least a chunk's forward. Only
  // what outlasts that compute is exposed (all of it when the devices
  // time-share the cores). The fill and drain wait for every hop (the
  // bubble, below).
  double chunkForward = cf / (p * v), chunkBackward = cb / (p * v);
  double exposedSends =
      v * (beyond(send, chunkBackward) + beyond(send, chunkForward));
  e.computeSeconds = (m * (cf + cb) + cu) / p;
  e.exposedCommunicationSeconds =
      (m * (kc + beyond(kp, cf + cb)) + beyond(kg, cb) + ku) / p +
      m * exposedSends;
  e.pipelineSendSeconds = m * sends;
  // A stage's share of a micro-batch is perMicrobatch / p, and its sends;
  // the first micro-batch reaches the last stage, and the last leaves the
  // first, p - 1 such shares late. Interleaving cuts each device's layers
  // into v chunks that take turns, so the fill and drain pass chunks 1/v
  // the size.
  e.bubbleSeconds = (p - 1) / v * (perMicrobatch / p + sends);
  e.criticalCommunicationSeconds = (m * kc + ku) / p;
  e.prefetchCommunicationSeconds = m * kp / p;
  e.gradientCommunicationSeconds = kg / p;
  e.flopsPerDevice = (m * (prof.ff + prof.fb + prof.fr) + prof.fu) / p;
  e.modelFlopsPerDevice = (m * (prof.ff + prof.fb) + prof.fu) / p;
  e.recomputeFlopsPerDevice = m * prof.fr / p;
  e.kernelsPerDevice = (m * prof.nk + prof.nku) / p;
  e.collectivesPerDevice = (m * prof.nc + prof.ncu) / p;

  // A stage holds 1/p of the layers; the schedule keeps micro-batches in
  // flight: GPipe all of them, 1F1B as many as there are stages. The
  // interleaved schedule's first device warms up with 2(p-1) + (v-1)p
  // chunk forwards before its first backward, so it holds vp + p - 1
  // chunks of 1/(pv) of the layers each: p micro-batches' worth times
  // 1 + (p-1)/(pv).
  double inFlight = std::min(m, p);
  if (options.schedule == PipelineScheduleKind::GPipe)
    inFlight = m;
  else if (options.schedule == PipelineScheduleKind::Interleaved)
    inFlight = std::min(m * v, v * p + p - 1) / v;
  if (options.pipelineAxis.empty())
    inFlight = 1;
  e.parameters /= p;
  e.gradients /= p;
  e.optimizerState /= p;
  e.activations =
      (e.activations + (inFlight - 1) * e.savedActivationsPerMicrobatch) / p;
  return e;
}

FailureOr<StepEstimate> shardc::estimateStep(func::FuncOp spmd, MeshOp mesh,
                                             const MachineModel &machine,
                                             const EstimateOptions &options) {
  // (The walk checks the pipeline axis the schedule's checks read.)
  FailureOr<StepProfile> prof = profileStep(spmd, mesh, machine, options);
  if (failed(prof))
    return failure();
  bool interleaved = options.schedule == PipelineScheduleKind::Interleaved;
  if (interleaved != (options.virtualStages > 1) || options.virtualStages < 1)
    return emitError(spmd.getLoc())
           << "the interleaved schedule takes 2 or more virtual stages, the "
              "others 1 (got "
           << options.virtualStages << " with "
           << stringifyPipelineSchedule(options.schedule) << ")";
  if (interleaved) {
    if (options.pipelineAxis.empty())
      return emitError(spmd.getLoc())
             << "the interleaved schedule needs a pipeline axis";
    // The schedule runs the micro-batches in rounds of p (Megatron-LM's
    // interleaved 1F1B asks the same).
    int64_t p = mesh.getAxisSize(options.pipelineAxis);
    if (options.microbatches % p != 0)
      return emitError(spmd.getLoc())
             << "the interleaved schedule runs micro-batches in rounds of "
                "the pipeline's "
             << p << " stages: " << options.microbatches
             << " micro-batches is not a multiple";
  }
  return scheduleStep(*prof, options);
}

FailureOr<StepProfile> shardc::profileStep(func::FuncOp spmd, MeshOp mesh,
                                           const MachineModel &machine,
                                           const EstimateOptions &options) {
  if (!options.pipelineAxis.empty() &&
      mesh.getAxisIndex(options.pipelineAxis) < 0)
    return emitError(spmd.getLoc())
           << "the pipeline axis \"" << options.pipelineAxis
           << "\" is not an axis of the mesh";
  if (spmd.getBody().getBlocks().size() != 1)
    return emitError(spmd.getLoc()) << "estimates a single-block function";
  return Estimator(spmd, mesh, machine, options).profile();
}

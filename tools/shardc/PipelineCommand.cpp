//===- PipelineCommand.cpp - shardc pipeline ------------------------------===//
//
// One pipelined training step (docs/pipeline.md): split the loss function
// into stages over --pipeline-axis, the batch into --microbatches, build
// each stage's program for --schedule, run it on --backend, and check the
// parameters after the step (and the loss) against the unsharded
// full-batch SGD step. On the simulator it also reports the step time, the
// bubble against (p-1)/(m+p-1), and the activations each stage holds.
//
//===----------------------------------------------------------------------===//

#include "JobDiagnostics.h"
#include "PipelineStep.h"
#include "ReferenceCheck.h"
#include "SharedOptions.h"
#include "ToolCommon.h"

#include "shardc/Analysis/ReshardPlanner.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Runtime/PipelineExecution.h"
#include "shardc/Runtime/TensorBlocks.h"
#include "shardc/Support/NumericCheck.h"
#include "shardc/Transforms/Pipeline.h"

#include "shardc/Dialect/ValueNames.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

#include <chrono>
#include <cmath>

using namespace mlir;
using namespace shardc;
namespace cl = llvm::cl;


// Shared with simulate and explain, where giving one pipelines the step.
static cl::opt<std::string>
    pipelineAxis("pipeline-axis",
                 cl::desc("The mesh axis whose coordinate is the stage"),
                 cl::init("pipe"), cl::sub(pipelineCommand),
                 cl::sub(simulateCommand), cl::sub(explainCommand));
static cl::opt<int64_t>
    microbatches("microbatches",
                 cl::desc("Micro-batches per step (default: one per stage)"),
                 cl::init(0), cl::sub(pipelineCommand),
                 cl::sub(simulateCommand), cl::sub(explainCommand));
static cl::opt<std::string>
    schedule("schedule", cl::desc("gpipe or 1f1b"), cl::init("1f1b"),
             cl::sub(pipelineCommand), cl::sub(simulateCommand),
             cl::sub(explainCommand));
static cl::opt<std::string> backendName("backend",
                                        cl::desc("sim, threads or mpi"),
                                        cl::init("sim"),
                                        cl::sub(pipelineCommand));
static cl::opt<std::string>
    optimizerName("optimizer",
                  cl::desc("The update after the micro-batches: sgd or adam"),
                  cl::init("sgd"), cl::sub(pipelineCommand));
static cl::opt<int64_t>
    steps("steps",
          cl::desc("Training steps, each fed the parameters (and optimizer "
                   "state) the previous one returned"),
          cl::init(1), cl::sub(pipelineCommand));
static cl::opt<double> learningRate("learning-rate",
                                    cl::desc("The optimizer's learning rate"),
                                    cl::init(0.01), cl::sub(pipelineCommand));
static cl::opt<std::string>
    emit("emit",
         cl::desc("mlir: print the stage programs instead of running them"),
         cl::init(""), cl::sub(pipelineCommand));
static cl::opt<bool> explain("explain",
                             cl::desc("Print the stage of every op and each "
                                      "stage's time per micro-batch"),
                             cl::init(false), cl::sub(pipelineCommand));
static cl::opt<std::string>
    reportJson("report-json", cl::desc("Write the simulation report here"),
               cl::value_desc("path"), cl::init(""), cl::sub(pipelineCommand));
static cl::opt<std::string>
    tracePath("trace", cl::desc("Write a Chrome trace (Perfetto) here"),
              cl::value_desc("path"), cl::init(""), cl::sub(pipelineCommand));
static cl::opt<int64_t>
    timeline("timeline",
             cl::desc("Print the simulated step as text this many columns "
                      "wide (0: not at all)"),
             cl::init(0), cl::sub(pipelineCommand));
static cl::opt<double> latency("link-latency",
                               cl::desc("Seconds per message (alpha)"),
                               cl::init(MachineModel().linkLatencySeconds),
                               cl::sub(pipelineCommand));
static cl::opt<double>
    bandwidth("link-bandwidth", cl::desc("Bytes per second per link (1/beta)"),
              cl::init(MachineModel().linkBytesPerSecond),
              cl::sub(pipelineCommand));
static cl::opt<double> flopRate("flops", cl::desc("FLOP/s per device"),
                                cl::init(MachineModel().flopsPerSecond),
                                cl::sub(pipelineCommand));
static cl::opt<double> tolerance(
    "tolerance",
    cl::desc("Largest accepted max_rel_err of a parameter after the step"),
    cl::init(1e-4), cl::sub(pipelineCommand));

namespace {

/// Argument `arg` of `fn`, an optimizer state, at its initial value
/// (initialOptimizerState, the interpreter's: Adam's moments 0, its beta
/// powers 1); a diagnostic when it is none.
FailureOr<Tensor> initialState(func::FuncOp fn, unsigned arg) {
  llvm::Expected<std::optional<Tensor>> state =
      initialOptimizerState(fn, arg);
  if (!state)
    return fn.emitError() << llvm::toString(state.takeError());
  if (!*state)
    return fn.emitError() << "argument #" << arg << " is no optimizer state";
  return std::move(**state);
}

/// Feeds a step's results back as the next step's arguments: each result
/// with `shardc.next = "<name>"` replaces `fn`'s argument named <name>.
void feedBack(func::FuncOp fn, std::vector<Tensor> &args,
              std::vector<Tensor> &results) {
  for (unsigned r = 0; r < fn.getNumResults(); ++r)
    if (auto name = fn.getResultAttrOfType<StringAttr>(
            r, ShardcDialect::getNextAttrName()))
      for (unsigned a = 0; a < fn.getNumArguments(); ++a)
        if (getArgumentName(fn, a) == name.getValue())
          args[a] = results[r].clone();
}

/// `numSteps` unsharded full-batch steps of `module`'s entry function on
/// `inputs` with `optimizer` (sgd or adam, from its initial state): the
/// last step's loss, and each parameter's value after the last step by
/// argument index.
struct ReferenceStep {
  Tensor loss;
  llvm::DenseMap<int64_t, Tensor> next;
};

FailureOr<ReferenceStep> runReferenceStep(ModuleOp reference,
                                          ArrayRef<Tensor> inputs,
                                          double learningRate,
                                          StringRef optimizer,
                                          int64_t numSteps) {
  // The optimizer rewrites the function in place: the original's argument
  // names are read first.
  std::vector<std::string> argNames;
  func::FuncOp original = getEntryFunction(reference);
  for (unsigned i = 0; i < original.getNumArguments(); ++i)
    argNames.push_back(getArgumentName(original, i));
  PassManager pm(reference.getContext(), ModuleOp::getOperationName());
  ShardcOptimizerOptions options;
  options.optimizer = optimizer.str();
  pm.addPass(createShardcOptimizer(options));
  if (failed(pm.run(reference)))
    return failure();
  func::FuncOp step = getEntryFunction(reference);
  std::vector<Tensor> args;
  for (const Tensor &t : inputs)
    args.push_back(t.clone());
  llvm::Expected<Tensor> lr = Tensor::allocate({});
  if (!lr)
    return step.emitError() << llvm::toString(lr.takeError());
  lr->values()[0] = float(learningRate);
  args.push_back(std::move(*lr));
  while (args.size() < step.getNumArguments()) {
    FailureOr<Tensor> state = initialState(step, args.size());
    if (failed(state))
      return failure();
    args.push_back(std::move(*state));
  }
  FailureOr<SmallVector<Tensor>> out = failure();
  for (int64_t s = 0; s < numSteps; ++s) {
    out = interpretFunction(step, args);
    if (failed(out))
      return failure();
    std::vector<Tensor> results(std::make_move_iterator(out->begin()),
                                std::make_move_iterator(out->end()));
    if (s + 1 < numSteps)
      feedBack(step, args, results);
    out->assign(std::make_move_iterator(results.begin()),
                std::make_move_iterator(results.end()));
  }
  ReferenceStep result;
  result.loss = std::move((*out)[0]);
  for (unsigned r = 0; r < step.getNumResults(); ++r)
    if (auto name = step.getResultAttrOfType<StringAttr>(
            r, ShardcDialect::getNextAttrName()))
      for (auto [i, argName] : llvm::enumerate(argNames))
        if (argName == name.getValue())
          result.next[i] = std::move((*out)[r]);
  return result;
}

/// The seconds of a stage's collectives in one micro-batch's forward and
/// backward (its actions F0 and B0) under the cost model: what a sharded
/// stage adds to its compute time.
std::pair<double, double> stageCollectiveSeconds(func::FuncOp stage,
                                                 const MeshTopology &topology,
                                                 const MachineModel &machine) {
  double forward = 0, backward = 0;
  for (Operation &op : stage.getBody().front()) {
    auto collective = dyn_cast<CollectiveOpInterface>(op);
    auto action = op.getAttrOfType<StringAttr>(
        ShardcDialect::getPipelineActionAttrName());
    std::optional<ReshardStep> desc = describeCollective(&op);
    if (!collective || !action || !desc)
      continue;
    auto type = cast<RankedTensorType>(op.getOperand(0).getType());
    int64_t n = topology.groupSize(desc->axes);
    int64_t localBytes =
        type.getNumElements() *
        std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
    double seconds =
        collective.getBytesSentPerDevice(n, localBytes)
            ? machine.collectiveSeconds(collective.getCollectiveKind(), n,
                                        localBytes)
            : 0;
    if (action.getValue() == "F0")
      forward += seconds;
    else if (action.getValue() == "B0")
      backward += seconds;
  }
  return {forward, backward};
}

void printExplanation(func::FuncOp func, const PipelineProgram &program,
                      const MachineModel &machine) {
  FailureOr<MeshTopology> topology = getMeshTopology(program.mesh);
  raw_ostream &os = llvm::outs();
  os << "stage assignment ("
     << (program.assignment.explicitStages ? "from \"stage\" annotations"
                                           : "balanced by forward FLOPs")
     << "):\n";
  for (int64_t s = 0; s < program.numStages; ++s) {
    os << "  stage " << s << ":";
    for (auto [i, op] :
         llvm::enumerate(func.getBody().front().without_terminator()))
      if (program.assignment.opStages[i] == s && op.getNumOperands() != 0)
        os << " " << getSourceName(op.getResult(0));
    os << "\n";
  }
  os << "per-stage time per micro-batch (" << program.numMicrobatches
     << " micro-batches):\n";
  for (auto [s, stage] : llvm::enumerate(program.stages)) {
    os << llvm::format("  stage %zu: forward %.3g s, backward %.3g s, "
                       "activations %lld B",
                       s, stage.forwardFlops / machine.flopsPerSecond,
                       stage.backwardFlops / machine.flopsPerSecond,
                       (long long)stage.activationBytesPerMicrobatch);
    if (succeeded(topology)) {
      auto [forward, backward] =
          stageCollectiveSeconds(stage.program, *topology, machine);
      if (forward > 0 || backward > 0)
        os << llvm::format("; its collectives forward %.3g s, backward %.3g s",
                           forward, backward);
    }
    os << "\n";
  }
}

} // namespace

bool shardc::pipelineRequested() {
  return pipelineAxis.getNumOccurrences() || microbatches.getNumOccurrences() ||
         schedule.getNumOccurrences();
}

int shardc::runPipelineCommand() {
  PipelineStepSettings settings;
  settings.backend = backendName;
  settings.learningRate = learningRate;
  settings.optimizer = optimizerName;
  settings.steps = steps;
  settings.emit = emit;
  settings.explain = explain;
  settings.reportJson = reportJson;
  settings.tracePath = tracePath;
  settings.timeline = timeline;
  settings.machine.linkLatencySeconds = latency;
  settings.machine.linkBytesPerSecond = bandwidth;
  settings.machine.flopsPerSecond = flopRate;
  settings.tolerance = tolerance;
  return runPipelineStep(settings);
}

int shardc::runPipelineStep(const PipelineStepSettings &settings) {
  const std::string &backendName = settings.backend;
  const std::string &emit = settings.emit;
  const std::string &reportJson = settings.reportJson;
  const std::string &tracePath = settings.tracePath;
  double learningRate = settings.learningRate;
  int64_t timeline = settings.timeline;
  double tolerance = settings.tolerance.value_or(1e-4);
  const MachineModel &machine = settings.machine;
  ToolSession session;
  func::FuncOp func;
  OwningOpRef<ModuleOp> module =
      session.loadInputModel(&func, /*expandComposites=*/true);
  if (!module)
    return 1;
  std::optional<PipelineScheduleKind> kind = parsePipelineSchedule(schedule);
  if (!kind) {
    llvm::errs() << "shardc: error: unknown --schedule '" << schedule
                 << "' (expected gpipe or 1f1b)\n";
    return 1;
  }
  std::optional<BackendKind> backend = parseBackendKind(backendName);
  if (!backend) {
    llvm::errs() << "shardc: error: unknown --backend '" << backendName
                 << "' (expected sim, threads or mpi)\n";
    return 1;
  }
  // simulate and explain take these for their own programs; a pipelined
  // step is a training step of its own, planned from the model's shardings.
  FailureOr<std::optional<ShardcAutoShardOptions>> autoShard =
      getAutoShardOptions();
  if (failed(autoShard))
    return 1;
  if (isAutodiffRequested() || *autoShard) {
    llvm::errs() << "shardc: error: --autodiff, --train-step and --auto-shard "
                    "do not combine with --pipeline-axis, --microbatches or "
                    "--schedule: the pipelined step is a training step of its "
                    "own (its optimizer: shardc pipeline --optimizer)\n";
    return 1;
  }
  if (settings.steps < 1) {
    llvm::errs() << "shardc: error: --steps must be at least 1\n";
    return 1;
  }
  if (microbatches < 0) {
    llvm::errs() << "shardc: error: --microbatches must be at least 1\n";
    return 1;
  }
  // The reference runs on the model as given, before the stage programs
  // join the module.
  OwningOpRef<ModuleOp> referenceModule = module->clone();
  // A second copy, for the reference's own sensitivity to rounding (below).
  OwningOpRef<ModuleOp> perturbedModule = module->clone();
  PipelineOptions options;
  options.axis = pipelineAxis;
  options.microbatches = microbatches;
  options.schedule = *kind;
  if (settings.optimizer != "sgd" && settings.optimizer != "adam") {
    llvm::errs() << "shardc: error: unknown --optimizer '" << settings.optimizer
                 << "' (expected sgd or adam)\n";
    return 1;
  }
  options.optimizer.optimizer = settings.optimizer;
  FailureOr<PipelineProgram> program = buildPipelineProgram(func, options);
  if (failed(program))
    return 1;
  if (emit == "mlir") {
    program->mesh->print(llvm::outs());
    llvm::outs() << "\n";
    for (const PipelineStage &stage : program->stages) {
      stage.program->print(llvm::outs());
      llvm::outs() << "\n";
    }
    return 0;
  }
  if (!emit.empty()) {
    llvm::errs() << "shardc: error: unknown --emit '" << emit
                 << "' (expected mlir)\n";
    return 1;
  }
  if (settings.explainOnly) {
    printExplanation(func, *program, machine);
    return 0;
  }
  FailureOr<SmallVector<Tensor>> inputs = gatherInputs(func);
  if (failed(inputs))
    return 1;
  FailureOr<ReferenceStep> reference =
      runReferenceStep(*referenceModule, *inputs, learningRate,
                       settings.optimizer, settings.steps);
  if (failed(reference))
    return 1;

  if (settings.explain && !settings.explainOnly)
    printExplanation(func, *program, machine);

  PipelinePrograms pipeline{program->mesh, program->axis, {}};
  for (const PipelineStage &stage : program->stages)
    pipeline.programs.push_back(stage.program);
  FailureOr<std::vector<int64_t>> stageOf = stagesOfDevices(pipeline);
  if (failed(stageOf))
    return 1;
  int64_t numDevices = static_cast<int64_t>(stageOf->size());
  FailureOr<MeshTopology> topology = getMeshTopology(program->mesh);
  if (failed(topology))
    return 1;
  // Device `device`'s block of `global` under result or argument `index`'s
  // sharding of its stage program (the whole tensor where it has none: the
  // stage is not sharded).
  auto blockOf = [&](int64_t device, const Tensor &global,
                     ShardingAttr sharding) -> FailureOr<Tensor> {
    if (!sharding)
      return global.clone();
    llvm::Expected<Tensor> block = extractDeviceBlock(
        global, sharding, program->mesh, *topology, device);
    if (!block)
      return program->mesh.emitError()
             << "device " << device << ": " << llvm::toString(block.takeError());
    return std::move(*block);
  };
  StringRef shardingName = ShardcDialect::getShardingAttrName();
  auto argsOf = [&](int64_t device) -> FailureOr<std::vector<Tensor>> {
    std::vector<Tensor> args;
    const PipelineStage &stage = program->stages[(*stageOf)[device]];
    for (auto [k, source] : llvm::enumerate(stage.argumentSources)) {
      if (source >= 0) {
        FailureOr<Tensor> block = blockOf(
            device, (*inputs)[source],
            func::FuncOp(stage.program).getArgAttrOfType<ShardingAttr>(k, shardingName));
        if (failed(block))
          return failure();
        args.push_back(std::move(*block));
        continue;
      }
      if (source == -2) { // a device's block of a state is its initial value
        FailureOr<Tensor> state = initialState(stage.program, k);
        if (failed(state))
          return failure();
        args.push_back(std::move(*state));
        continue;
      }
      Tensor lr = llvm::cantFail(Tensor::allocate({}));
      lr.values()[0] = float(learningRate);
      args.push_back(std::move(lr));
    }
    return args;
  };

  // Results by device; under mpi only this rank's.
  std::vector<std::vector<Tensor>> results(numDevices);
  std::vector<int64_t> local;
  PipelineSimulation simulation;
  double wallSeconds = 0;
  std::optional<MpiEnvironment> mpi;
  if (*backend == BackendKind::Mpi) {
    if (!startMpiForCommand(mpi))
      return 1;
    FailureOr<std::unique_ptr<MpiBackend>> ranks =
        createMpiBackend(program->mesh);
    if (failed(ranks))
      return 1;
    int64_t rank = mpi->rank();
    FailureOr<std::vector<Tensor>> args = argsOf(rank);
    if (failed(args))
      return 1;
    func::FuncOp rankProgram = program->stages[(*stageOf)[rank]].program;
    for (int64_t s = 0; s < settings.steps; ++s) {
      FailureOr<std::vector<Tensor>> out =
          runPipelineOnRank(pipeline, *args, (*ranks)->getCommunicator());
      if (failed(out))
        return 1;
      results[rank] = std::move(*out);
      feedBack(rankProgram, *args, results[rank]);
    }
    local.push_back(rank);
  } else {
    std::vector<std::vector<Tensor>> deviceArgs;
    for (int64_t d = 0; d < numDevices; ++d) {
      FailureOr<std::vector<Tensor>> args = argsOf(d);
      if (failed(args))
        return 1;
      deviceArgs.push_back(std::move(*args));
      local.push_back(d);
    }
    if (*backend == BackendKind::Threads)
      session.getContext().enableMultithreading();
    for (int64_t s = 0; s < settings.steps; ++s) {
      FailureOr<std::vector<std::vector<Tensor>>> out = failure();
      auto start = std::chrono::steady_clock::now();
      if (*backend == BackendKind::Sim) {
        SimulationOptions sim;
        sim.machine = machine;
        std::vector<std::vector<Tensor>> stepArgs;
        for (const std::vector<Tensor> &device : deviceArgs) {
          stepArgs.emplace_back();
          for (const Tensor &t : device)
            stepArgs.back().push_back(t.clone());
        }
        // The report is the last step's.
        out = simulatePipeline(pipeline, std::move(stepArgs), sim, simulation);
      } else {
        ThreadsOptions threads;
        threads.timeoutSeconds = 600;
        out = runPipelineOnThreads(pipeline, deviceArgs, threads);
      }
      if (failed(out))
        return 1;
      // The wall time is the last step's.
      wallSeconds = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start)
                        .count();
      results = std::move(*out);
      for (int64_t d = 0; d < numDevices; ++d)
        feedBack(program->stages[(*stageOf)[d]].program, deviceArgs[d],
                 results[d]);
    }
  }

  // Every local device's results against the reference step, judged on
  // the parameters' family scale (shardc/Support/NumericCheck.h) as train
  // does. A parameter beyond the tolerance may be one the steps make
  // sensitive to rounding (Adam moves one whose gradient is noise by the
  // learning rate): it then passes within kSensitivityMargin times how far
  // the reference moves when its inputs change by one ulp, measured by one
  // more reference run, only when needed.
  std::vector<Tensor> referenceParams;
  for (const auto &entry : reference->next)
    referenceParams.push_back(entry.second.clone());
  double scale = familyScale(referenceParams);
  std::optional<llvm::DenseMap<int64_t, double>> raisedTolerance;
  auto toleranceOf = [&](int64_t param) -> FailureOr<double> {
    // Only Adam amplifies rounding (shardc::hasAdaptiveOptimizerState).
    if (param < 0 || !(tolerance > 0) || settings.optimizer != "adam")
      return tolerance;
    if (!raisedTolerance) {
      SmallVector<Tensor> perturbed;
      for (const Tensor &t : *inputs)
        perturbed.push_back(perturbByOneUlp(t));
      FailureOr<ReferenceStep> moved =
          runReferenceStep(*perturbedModule, perturbed, learningRate,
                           settings.optimizer, settings.steps);
      if (failed(moved))
        return failure();
      raisedTolerance.emplace();
      for (const auto &[p, want] : reference->next) {
        double sensitivity =
            compareToReference(moved->next.find(p)->second, want, nullptr,
                               scale)
                .first;
        (*raisedTolerance)[p] =
            std::isfinite(sensitivity)
                ? std::max(tolerance, kSensitivityMargin * sensitivity)
                : double(tolerance);
      }
    }
    return raisedTolerance->lookup(param);
  };
  bool ok = true;
  double worst = 0;
  std::string amplified;
  std::string verdicts;
  llvm::raw_string_ostream vs(verdicts);
  for (int64_t d : local) {
    const PipelineStage &stage = program->stages[(*stageOf)[d]];
    for (auto [r, param] : llvm::enumerate(stage.resultParams)) {
      if (param == -2)
        continue; // optimizer state: it shows in the parameters
      // A sharded stage's device holds its block of each parameter.
      FailureOr<Tensor> want = blockOf(
          d, param < 0 ? reference->loss : reference->next.find(param)->second,
          func::FuncOp(stage.program).getResultAttrOfType<ShardingAttr>(r, shardingName));
      if (failed(want))
        return 1;
      std::string what = param < 0 ? std::string("loss")
                                   : getArgumentName(func, param) + ".next";
      double rel =
          compareToReference(results[d][r], *want, nullptr, scale).first;
      worst = std::max(worst, rel);
      if (rel <= tolerance)
        continue;
      FailureOr<double> allowed = toleranceOf(param);
      if (failed(allowed))
        return 1;
      if (rel <= *allowed) {
        if (!StringRef(amplified).contains(what))
          amplified += (amplified.empty() ? "" : ", ") + what +
                       llvm::formatv(" within {0}",
                                     llvm::format("%.3g", *allowed))
                           .str();
        continue;
      }
      ok = false;
      vs << "device " << d << ": " << what << " differs from the "
         << "unsharded full-batch step: max_rel_err=" << rel << "\n";
    }
  }

  if (mpi) {
    // Rank 0 speaks for the job.
    llvm::Expected<std::vector<std::string>> all = gatherTextFromEveryRank(
        (ok ? "1" : "0") + std::to_string(worst) + "\n" + verdicts);
    if (!all) {
      llvm::errs() << "shardc: error: " << llvm::toString(all.takeError())
                   << "\n";
      return 1;
    }
    for (const std::string &text : *all) {
      ok &= text.front() == '1';
      StringRef rest = StringRef(text).drop_front();
      auto [value, messages] = rest.split('\n');
      double w = 0;
      if (!value.getAsDouble(w))
        worst = std::max(worst, w);
      if (mpi->rank() == 0)
        llvm::errs() << messages;
    }
    if (mpi->rank() != 0)
      return ok ? 0 : 1;
  } else {
    llvm::errs() << verdicts;
  }

  llvm::outs() << "pipeline: " << program->numStages << " stages over \""
               << program->axis << "\", " << program->numMicrobatches
               << " micro-batches, " << stringifyPipelineSchedule(*kind)
               << ", " << numDevices << " devices ("
               << stringifyBackendKind(*backend) << ")\n";
  double ideal =
      idealBubbleFraction(program->numStages, program->numMicrobatches);
  std::vector<int64_t> peakPerStage(program->numStages, 0);
  if (*backend == BackendKind::Sim) {
    for (int64_t d = 0; d < numDevices; ++d)
      peakPerStage[(*stageOf)[d]] =
          std::max(peakPerStage[(*stageOf)[d]],
                   simulation.peakActivationBytesPerDevice[d]);
    llvm::outs() << llvm::format(
        "step %.4g s, bubble %.2f%% (ideal (p-1)/(m+p-1) = %.2f%%)\n",
        simulation.stepSeconds, 100 * simulation.bubbleFraction, 100 * ideal);
    llvm::outs() << "peak activations per stage:";
    for (auto [s, bytes] : llvm::enumerate(peakPerStage))
      llvm::outs() << " " << bytes << " B ("
                   << llvm::format(
                          "%.3g", double(bytes) /
                                      double(std::max<int64_t>(
                                          1, program->stages[s]
                                                 .activationBytesPerMicrobatch)))
                   << " micro-batches)";
    llvm::outs() << "\n";
    if (timeline > 0)
      llvm::outs() << drawPipelineTimeline(simulation, timeline);
  }
  if (*backend == BackendKind::Threads)
    llvm::outs() << llvm::format("wall time of the step: %.4f s\n",
                                 wallSeconds);
  if (!amplified.empty())
    llvm::outs() << "rounding amplified by the steps: " << amplified
                 << llvm::format(" (%gx how far ", kSensitivityMargin)
                 << "the unsharded steps move when their inputs change by "
                    "one ulp)\n";
  if (settings.steps == 1)
    llvm::outs() << llvm::format("parameters after the step vs the unsharded "
                                 "full-batch step: max_rel_err=%.3g %s\n",
                                 worst, ok ? "OK" : "MISMATCH");
  else
    llvm::outs() << llvm::format(
        "parameters after %lld steps vs %lld unsharded full-batch steps: "
        "max_rel_err=%.3g %s\n",
        (long long)settings.steps, (long long)settings.steps, worst,
        ok ? "OK" : "MISMATCH");

  if (!reportJson.empty()) {
    llvm::json::Array peaks, perMicrobatch, forward, backward,
        collectiveForward, collectiveBackward;
    for (auto [s, stage] : llvm::enumerate(program->stages)) {
      auto [cf, cb] =
          stageCollectiveSeconds(stage.program, *topology, machine);
      collectiveForward.push_back(cf);
      collectiveBackward.push_back(cb);
      peaks.push_back(peakPerStage[s]);
      perMicrobatch.push_back(stage.activationBytesPerMicrobatch);
      forward.push_back(stage.forwardFlops / machine.flopsPerSecond);
      backward.push_back(stage.backwardFlops / machine.flopsPerSecond);
    }
    llvm::json::Object pipelineJson{
        {"stages", program->numStages},
        {"microbatches", program->numMicrobatches},
        {"schedule", stringifyPipelineSchedule(*kind)},
        {"bubble_fraction", simulation.bubbleFraction},
        {"ideal_bubble_fraction", ideal},
        {"peak_activation_bytes_per_stage", std::move(peaks)},
        {"activation_bytes_per_microbatch", std::move(perMicrobatch)},
        {"stage_forward_s", std::move(forward)},
        {"stage_backward_s", std::move(backward)},
        {"stage_collective_forward_s", std::move(collectiveForward)},
        {"stage_collective_backward_s", std::move(collectiveBackward)},
        {"step_time_s", simulation.stepSeconds}};
    llvm::json::Array sent;
    for (int64_t bytes : simulation.sentBytesPerDevice)
      sent.push_back(bytes);
    llvm::json::Object root{
        {"devices", numDevices},
        {"backend", stringifyBackendKind(*backend)},
        {"max_rel_err", worst},
        {"pipeline", std::move(pipelineJson)},
        {"sent_bytes_per_device", std::move(sent)},
        {"machine",
         llvm::json::Object{{"link_latency_s", machine.linkLatencySeconds},
                            {"link_bytes_per_s", machine.linkBytesPerSecond},
                            {"flops_per_s", machine.flopsPerSecond}}}};
    if (failed(writeText(reportJson, [&](raw_ostream &os) {
          os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root)))
             << "\n";
        })))
      return 1;
  }
  if (!tracePath.empty()) {
    if (*backend != BackendKind::Sim) {
      llvm::errs() << "shardc: error: --trace needs --backend sim (the trace "
                      "is the simulator's timeline)\n";
      return 1;
    }
    if (failed(writeText(tracePath, [&](raw_ostream &os) {
          writePipelineTrace(simulation, os);
        })))
      return 1;
  }
  return ok ? 0 : 1;
}

//===- TrainWorkflow.cpp - training a model on a backend ------------------===//
//
// Compile once, train step by step on the backend, write what was asked,
// then check the final parameters against the same steps run unsharded
// (shardc/Driver/TrainWorkflow.h).
//
//===----------------------------------------------------------------------===//

#include "shardc/Driver/TrainWorkflow.h"

#include "shardc/Driver/OutputFile.h"
#include "shardc/Driver/ReferenceCheck.h"

#include "shardc/Dialect/FunctionInterface.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Export/CheckpointWriter.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Support/Npy.h"
#include "shardc/Transforms/Pipelines.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

#include <cmath>

using namespace mlir;
using namespace shardc;

namespace {
/// "step 7/50 loss 0.1234", or on a terminal a bar redrawn in place.
class ProgressPrinter {
public:
  ProgressPrinter(llvm::raw_ostream &os, unsigned total, bool bar)
      : os(os), total(total), bar(bar) {}

  void step(unsigned done, float loss) {
    if (!bar) {
      // One write per line: stdout on a pseudo-terminal (mpirun's) is
      // unbuffered, and a line written piece by piece may be cut by
      // another rank's output. (Elsewhere it stays buffered.)
      std::string line;
      llvm::raw_string_ostream(line)
          << "step " << done << "/" << total << llvm::format(" loss %.6g", loss)
          << "\n";
      os << line;
      return;
    }
    constexpr unsigned width = 30;
    unsigned filled = total ? done * width / total : width;
    os << "\r[" << std::string(filled, '#') << std::string(width - filled, '.')
       << "] step " << done << "/" << total << llvm::format(" loss %.6g", loss);
    if (done == total)
      os << "\n";
    os.flush();
  }

private:
  llvm::raw_ostream &os;
  unsigned total;
  bool bar;
};

/// What the training works on: the global program kept for the reference,
/// its inputs by name, and the compiled engine with its starting point.
struct TrainingSetup {
  OwningOpRef<ModuleOp> global;
  std::vector<std::string> argNames;
  llvm::StringMap<unsigned> argIndex;
  std::unique_ptr<ShardedEngine> engine;
  std::map<std::string, Tensor> initial;
  std::vector<Tensor> inputs;
  bool printing = false;
};
} // namespace

static LogicalResult reportError(llvm::Error error) {
  llvm::errs() << "shardc: error: " << llvm::toString(std::move(error)) << "\n";
  return failure();
}

/// A parameter not given by a file starts uniform in +-1/sqrt(fan_in)
/// (fan_in = its first dim), so activations keep their scale through the
/// layers; the generator's [-1, 1) values are scaled down accordingly.
static void scaleInitialParameter(Tensor &param) {
  if (param.rank() == 0 || param.dim(0) == 0)
    return;
  float scale = 1.0f / std::sqrt(float(param.dim(0)));
  for (float &v : param.values())
    v *= scale;
}

LogicalResult shardc::checkLossFunction(func::FuncOp func) {
  if (func.getNumResults() != 0 &&
      cast<RankedTensorType>(func.getResultTypes()[0]).getRank() == 0)
    return success();
  llvm::errs() << "shardc: error: train needs a model whose first output "
                  "is the scalar loss; @"
               << func.getSymName() << "'s is not\n";
  return failure();
}

/// The arguments of one unsharded step: the parameters from `initial`,
/// the other inputs from `args`, the learning rate, the optimizer state
/// at its initial value.
static FailureOr<SmallVector<Tensor>>
initialStepArguments(func::FuncOp step,
                     const std::map<std::string, Tensor> &initial,
                     ArrayRef<std::string> argNames, ArrayRef<Tensor> args,
                     float learningRate, llvm::StringMap<unsigned> &argIndex) {
  SmallVector<Tensor> call;
  for (auto [i, name] : llvm::enumerate(argNames))
    call.push_back(initial.count(name) ? initial.at(name).clone()
                                       : args[i].clone());
  call.push_back(llvm::cantFail(Tensor::allocate({}))); // a scalar fits
  call.back().data()[0] = learningRate;
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    argIndex[getArgumentName(step, i)] = i;
    llvm::Expected<std::optional<Tensor>> state =
        initialOptimizerState(step, i);
    if (!state)
      return step.emitError() << llvm::toString(state.takeError());
    if (*state)
      call.push_back(std::move(**state));
  }
  if (call.size() != step.getNumArguments())
    return step.emitError()
           << "the training step takes " << step.getNumArguments()
           << " inputs, expected " << call.size();
  return call;
}

FailureOr<std::map<std::string, Tensor>>
shardc::trainUnsharded(ModuleOp global, ArrayRef<std::string> paramNames,
                       const std::map<std::string, Tensor> &initial,
                       ArrayRef<std::string> argNames, ArrayRef<Tensor> args,
                       const OptimizerOptions &optimizer, unsigned numSteps,
                       const TrainingData *data, std::vector<float> &losses,
                       unsigned sumRoundingProbe) {
  OwningOpRef<ModuleOp> module = global.clone(); // `global` stays for reruns
  PassManager pm(global->getContext(), ModuleOp::getOperationName());
  buildTrainPipeline(pm, getOptimizerPassOptions(optimizer, paramNames),
                     /*propagateFirst=*/false, ShardingStage::None);
  if (failed(pm.run(*module)))
    return failure();
  func::FuncOp step = getEntryFunction(*module);
  llvm::StringMap<unsigned> argIndex;
  FailureOr<SmallVector<Tensor>> call = initialStepArguments(
      step, initial, argNames, args, optimizer.learningRate, argIndex);
  if (failed(call))
    return failure();
  for (unsigned s = 0; s < numSteps; ++s) {
    if (data)
      for (const std::string &name : data->names())
        (*call)[argIndex.lookup(name)] = data->batch(name, s);
    SmallVector<Tensor> in;
    for (const Tensor &t : *call)
      in.push_back(t.clone());
    InterpreterOptions interpreter;
    interpreter.sumRoundingProbe = sumRoundingProbe;
    FailureOr<SmallVector<Tensor>> results =
        interpretFunction(step, in, interpreter);
    if (failed(results))
      return failure();
    losses.push_back((*results)[0].data()[0]);
    for (unsigned r = 0; r < step.getNumResults(); ++r)
      if (auto next = step.getResultAttrOfType<StringAttr>(
              r, ShardcDialect::getNextAttrName()))
        (*call)[argIndex.lookup(next.getValue())] = std::move((*results)[r]);
  }
  // In the shapes checkpoints hold them in, as the engine's parameters()
  // returns them: a stacked view ([3, C, C]) is its checkpoint's [3C, C].
  func::FuncOp model = getEntryFunction(global);
  llvm::StringMap<SmallVector<int64_t>> stored;
  for (unsigned i = 0; i < model.getNumArguments(); ++i)
    stored[getArgumentName(model, i)] = getCheckpointShape(model, i);
  std::map<std::string, Tensor> params;
  for (const std::string &name : paramNames) {
    Tensor t = std::move((*call)[argIndex.lookup(name)]);
    if (auto it = stored.find(name); it != stored.end())
      if (llvm::Error e = t.reshape(it->second))
        return step.emitError() << name << ": " << llvm::toString(std::move(e));
    params.emplace(name, std::move(t));
  }
  return params;
}

/// Compiles the engine and loads its starting point: the parameters of
/// `args` (generated ones scaled), the other inputs as the first batch.
static FailureOr<TrainingSetup>
setUpTraining(OwningOpRef<ModuleOp> module, ArrayRef<Tensor> args,
              const TrainWorkflowOptions &options) {
  TrainingSetup setup;
  func::FuncOp func = getEntryFunction(*module);
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    setup.argNames.push_back(getArgumentName(func, i));
    setup.argIndex[setup.argNames.back()] = i;
  }
  setup.global = module->clone();
  EngineOptions engineOptions = options.engine;
  engineOptions.autoShardOptimizer = options.optimizer;
  FailureOr<std::unique_ptr<ShardedEngine>> compiled =
      ShardedEngine::compile(std::move(module), engineOptions);
  if (failed(compiled))
    return failure();
  setup.engine = std::move(*compiled);
  ShardedEngine &engine = *setup.engine;
  if (engine.parameterNames().empty()) {
    llvm::errs() << "shardc: error: the model has no parameters to train; "
                    "mark them \"param\": true or name them with --params\n";
    return failure();
  }
  for (const std::string &name : engine.parameterNames()) {
    Tensor t = args[setup.argIndex[name]].clone();
    if (!options.givenByFile || !options.givenByFile(name))
      scaleInitialParameter(t);
    setup.initial.emplace(name, std::move(t));
  }
  if (failed(engine.loadCheckpoint(setup.initial)))
    return failure();
  for (const std::string &name : engine.inputNames())
    setup.inputs.push_back(args[setup.argIndex[name]].clone());
  setup.printing =
      !engine.localDevices().empty() && engine.localDevices().front() == 0;
  return setup;
}

/// The steps on the engine; returns each step's loss.
static FailureOr<std::vector<float>>
trainSharded(TrainingSetup &setup, const TrainWorkflowOptions &options,
             llvm::raw_ostream &os) {
  ShardedEngine &engine = *setup.engine;
  const OptimizerOptions &optimizer = options.optimizer;
  if (setup.printing) {
    os << "training " << engine.parameterNames().size() << " parameters on "
       << engine.numDevices() << " devices ("
       << stringifyBackendKind(options.engine.backend) << "), "
       << (optimizer.kind == OptimizerOptions::Kind::Adam ? "adam" : "sgd")
       << " lr=" << optimizer.learningRate;
    if (!optimizer.zeroAxes.empty())
      os << ", optimizer state split over "
         << llvm::join(optimizer.zeroAxes, ",");
    os << "\n";
  }
  if (options.beforeSteps)
    options.beforeSteps(engine);
  ProgressPrinter progress(os, options.steps, options.progressBar);
  std::vector<float> losses;
  for (unsigned s = 0; s < options.steps; ++s) {
    if (options.data)
      for (auto [k, name] : llvm::enumerate(engine.inputNames()))
        if (options.data->feeds(name))
          setup.inputs[k] = options.data->batch(name, s);
    // Only the last step is traced: recording costs a clock read per
    // communicator call.
    if (!options.tracePath.empty() && s + 1 == options.steps)
      engine.backend().setTracing(true);
    FailureOr<float> loss = engine.trainStep(setup.inputs, optimizer);
    if (failed(loss))
      return failure();
    losses.push_back(*loss);
    // One process alone reports progress, whichever backend each runs.
    if (setup.printing && options.reportsProgress)
      progress.step(s + 1, *loss);
  }
  return losses;
}

/// The loss and memory lines, then --out-dir and --save.
static LogicalResult reportTraining(const TrainingSetup &setup,
                                    ArrayRef<float> losses,
                                    const std::map<std::string, Tensor> &final,
                                    const TrainWorkflowOptions &options,
                                    llvm::raw_ostream &os) {
  if (!setup.printing)
    return success();
  if (!losses.empty())
    os << llvm::format("loss %.6g -> %.6g\n", losses.front(), losses.back());
  // ZeRO's accounting, per device: what training keeps resident.
  int64_t total = 0;
  for (const auto &[name, t] : setup.initial)
    total += t.numElements();
  DeviceMemory first = setup.engine->memoryPerDevice().front();
  os << "memory/device (device 0): parameters " << first.parameters
     << " B, gradients " << first.gradients << " B, optimizer state "
     << first.optimizerState
     << " B = " << first.parameters + first.gradients + first.optimizerState
     << " B for " << total << " parameters in all\n";
  if (!options.outDir.empty()) {
    (void)llvm::sys::fs::create_directories(options.outDir);
    for (const auto &[name, t] : final) {
      SmallString<128> path(options.outDir);
      llvm::sys::path::append(path, name + ".npy");
      if (llvm::Error err = writeNpy(path, t))
        return reportError(std::move(err));
    }
  }
  if (!options.savePath.empty()) {
    if (llvm::Error err = writeCheckpoint(options.savePath, final))
      return reportError(std::move(err));
    os << "wrote " << final.size() << " parameters to " << options.savePath
       << "\n";
  }
  return success();
}

/// Each parameter's accepted error. One beyond the tolerance may be one
/// the training itself makes sensitive to rounding
/// (shardc/Support/NumericCheck.h): run the unsharded steps again under
/// probes — the initial parameters moved by one ulp, and every sum rounded
/// one ulp otherwise, kSensitivityProbes times each — and excuse each
/// element within kSensitivityMargin times how far they move it. Only when
/// needed, and only for Adam, the optimizer that amplifies
/// (hasAdaptiveOptimizerState).
static FailureOr<std::map<std::string, double>>
parameterTolerances(const TrainingSetup &setup, ArrayRef<Tensor> args,
                    const std::map<std::string, Tensor> &final,
                    const std::map<std::string, Tensor> &want, double scale,
                    double baseTolerance, std::optional<DType> working,
                    const TrainWorkflowOptions &options) {
  std::map<std::string, double> tolerance;
  for (const auto &[name, t] : want)
    tolerance[name] = baseTolerance;
  if (options.optimizer.kind != OptimizerOptions::Kind::Adam ||
      llvm::all_of(want, [&](const auto &entry) {
        return compareToReference(final.at(entry.first), entry.second, nullptr,
                                  scale)
                   .first <= baseTolerance;
      }))
    return tolerance;
  std::map<std::string, std::vector<double>> movement;
  for (const auto &[name, t] : want)
    movement[name].assign(t.numElements(), 0.0);
  for (unsigned probe = 0; probe < 2 * kSensitivityProbes; ++probe) {
    bool inputProbe = probe < kSensitivityProbes;
    std::map<std::string, Tensor> perturbed;
    for (const auto &[name, t] : setup.initial)
      perturbed.emplace(name, inputProbe ? perturbByOneUlp(t, working, probe)
                                         : t.clone());
    std::vector<float> perturbedLosses;
    FailureOr<std::map<std::string, Tensor>> moved =
        trainUnsharded(*setup.global, setup.engine->parameterNames(), perturbed,
                       setup.argNames, args, options.optimizer, options.steps,
                       options.data, perturbedLosses, inputProbe ? 0 : probe);
    if (failed(moved))
      return failure();
    for (const auto &[name, t] : want)
      noteElementMovement(moved->at(name), t, movement[name]);
  }
  for (const auto &[name, t] : want)
    tolerance[name] = excusedTolerance(final.at(name), t, movement[name], scale,
                                       baseTolerance);
  return tolerance;
}

/// The final parameters against the same steps run unsharded.
static FailureOr<bool> checkTraining(const TrainingSetup &setup,
                                     ArrayRef<Tensor> args,
                                     const std::map<std::string, Tensor> &final,
                                     const TrainWorkflowOptions &options,
                                     llvm::raw_ostream &os) {
  std::vector<float> referenceLosses;
  FailureOr<std::map<std::string, Tensor>> want =
      trainUnsharded(*setup.global, setup.engine->parameterNames(),
                     setup.initial, setup.argNames, args, options.optimizer,
                     options.steps, options.data, referenceLosses);
  if (failed(want))
    return failure();
  std::vector<Tensor> wanted;
  for (const auto &[name, t] : *want)
    wanted.push_back(t.clone());
  double scale = familyScale(wanted);
  // A mixed-precision training rounds its gradients to the working type:
  // judged by that type's rounding, and perturbed by one ulp of it.
  std::optional<DType> working;
  if (options.optimizer.precision == "bf16-mixed")
    working = DType::BF16;
  else if (options.optimizer.precision == "f16-mixed")
    working = DType::F16;
  double baseTolerance =
      working && options.tolerance > 0
          ? std::max<double>(options.tolerance, halfTolerance(*working))
          : options.tolerance;
  FailureOr<std::map<std::string, double>> tolerance = parameterTolerances(
      setup, args, final, *want, scale, baseTolerance, working, options);
  if (failed(tolerance))
    return failure();

  double worst = 0;
  bool ok = true;
  std::vector<std::string> names;
  SmallVector<double> errors, raisedTo;
  for (const auto &[name, t] : *want) {
    double rel = checkAgainstReference(
                     final.at(name), t, scale, tolerance->at(name),
                     "parameter '" + name + "'", "the unsharded run", ok)
                     .first;
    worst = std::max(worst, rel);
    names.push_back(name);
    errors.push_back(rel);
    raisedTo.push_back(tolerance->at(name));
    // Diverging alike in both runs is the training's doing, not the
    // sharding's: no mismatch, but worth a word.
    if (int64_t n = countNonFinite(t); n && setup.printing)
      llvm::errs() << "shardc: warning: parameter '" << name << "' has " << n
                   << " non-finite value" << (n == 1 ? "" : "s")
                   << " (NaN or infinite) after " << options.steps
                   << " steps of the unsharded run: the training diverged\n";
  }
  if (!setup.printing)
    return ok;
  printRoundingAmplified(os, "the training", "the unsharded run",
                         "its initial parameters or its sums", names, errors,
                         raisedTo, options.tolerance, wanted, working);
  os << llvm::format("final parameters vs the unsharded run: "
                     "max_rel_err=%.3g (unsharded loss %.6g) %s\n",
                     worst, referenceLosses.back(), ok ? "OK" : "MISMATCH");
  return ok;
}

/// --trace: the last step's spans, by each process for its local devices.
static LogicalResult writeTrace(ShardedEngine &engine,
                                const TrainWorkflowOptions &options) {
  if (options.tracePath.empty())
    return success();
  MeshBackend &backend = engine.backend();
  std::vector<TraceSpan> spans = backend.lastTrace();
  backend.setTracing(false);
  std::string path = options.tracePath;
  int64_t first = backend.localDevices().front();
  if (backend.kind() == BackendKind::Mpi && first != 0)
    path += ".rank" + std::to_string(first);
  return writeText(path, [&](llvm::raw_ostream &out) {
    writeChromeTrace(backend.localDevices(), spans, out);
  });
}

FailureOr<bool> shardc::runTrainWorkflow(OwningOpRef<ModuleOp> module,
                                         ArrayRef<Tensor> args,
                                         const TrainWorkflowOptions &options,
                                         llvm::raw_ostream &os) {
  FailureOr<TrainingSetup> setup =
      setUpTraining(std::move(module), args, options);
  if (failed(setup))
    return failure();
  FailureOr<std::vector<float>> losses = trainSharded(*setup, options, os);
  if (failed(losses) || failed(writeTrace(*setup->engine, options)))
    return failure();
  // The global parameters are assembled (gathered from every rank under
  // mpi) only for what reads them: the check, --out-dir, --save.
  FailureOr<std::map<std::string, Tensor>> final =
      std::map<std::string, Tensor>();
  if (options.check || !options.outDir.empty() || !options.savePath.empty())
    final = setup->engine->parameters();
  if (failed(final) ||
      failed(reportTraining(*setup, *losses, *final, options, os)))
    return failure();
  if (!options.check)
    return true;
  return checkTraining(*setup, args, *final, options, os);
}

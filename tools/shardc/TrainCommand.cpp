//===- TrainCommand.cpp - `shardc train` ----------------------------------===//
//
// Trains a model whose first output is a scalar loss: compiled once into a
// ShardedEngine (autodiff, propagation, partitioning), then one trainStep
// per step on the chosen backend. The data is a fixed regression set (the
// non-parameter inputs, from --inputs or the seed), fitted full-batch.
//
// The same steps then run unsharded, on the reference interpreter with the
// same optimizer, and the final parameters must agree: the sharded training
// run is checked the way every partitioned program here is, allowing for
// the rounding that training amplifies (shardc/Support/NumericCheck.h).
//
//===----------------------------------------------------------------------===//

#include "EngineSession.h"
#include "JobDiagnostics.h"
#include "ReferenceCheck.h"
#include "SharedOptions.h"
#include "ToolCommon.h"
#include "TrainingData.h"

#include "shardc/Dialect/ValueNames.h"
#include "shardc/Export/CheckpointWriter.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Support/Npy.h"
#include "shardc/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <cmath>

using namespace mlir;
using shardc::Tensor;
namespace cl = llvm::cl;

static shardc::BackendOptions trainBackend(shardc::trainCommand);
static cl::opt<unsigned> steps("steps", cl::desc("Optimizer steps"),
                               cl::init(50), cl::sub(shardc::trainCommand));
static cl::opt<std::string> optimizerName("optimizer", cl::desc("sgd or adam"),
                                          cl::init("adam"),
                                          cl::sub(shardc::trainCommand));
static cl::opt<float> learningRate("lr", cl::desc("Learning rate"),
                                   cl::init(0.01f),
                                   cl::sub(shardc::trainCommand));
static cl::list<std::string>
    paramList("params",
              cl::desc("The inputs that are parameters (default: those "
                       "marked \"param\": true / shardc.param)"),
              cl::CommaSeparated, cl::sub(shardc::trainCommand));
static cl::opt<bool>
    check("check",
          cl::desc("Repeat the steps unsharded and compare the final "
                   "parameters (default on; --check=false to skip)"),
          cl::init(true), cl::sub(shardc::trainCommand));
static cl::opt<double> trainTolerance(
    "tolerance",
    cl::desc("Largest accepted max_rel_err of the final parameters, unless "
             "the unsharded run itself moves that far under a one-ulp "
             "change (docs/cli.md, How results are checked)"),
    cl::init(1e-4), cl::sub(shardc::trainCommand));
static cl::opt<std::string>
    trainOutDir("out-dir", cl::desc("Write each final parameter as <name>.npy"),
                cl::init(""), cl::sub(shardc::trainCommand));
static cl::opt<std::string>
    dataPath("data",
             cl::desc("Train on mini-batches of a .npz file's arrays (one per "
                      "input it names, examples along the first dim, "
                      "shuffled with --seed) instead of one fixed batch"),
             cl::init(""), cl::sub(shardc::trainCommand));
static cl::opt<std::string>
    savePath("save",
             cl::desc("Write the final parameters to a checkpoint: .npz "
                      "(np.load) or .safetensors"),
             cl::init(""), cl::sub(shardc::trainCommand));

namespace {
/// "step 7/50 loss 0.1234", or on a terminal a bar redrawn in place.
class ProgressPrinter {
public:
  /// Under mpirun the bar is never drawn: Open MPI hands every rank a
  /// pseudo-terminal for stdout whatever mpirun's own stdout is (a log
  /// file, a pipe), so a rank cannot tell a terminal from a log.
  ProgressPrinter(unsigned total)
      : total(total), terminal(llvm::sys::Process::StandardOutIsDisplayed() &&
                               !shardc::mpirunRank()) {}

  void step(unsigned done, float loss) {
    if (!terminal) {
      // One write per line: stdout on a pseudo-terminal (mpirun's) is
      // unbuffered, and a line written piece by piece may be cut by
      // another rank's output. (Elsewhere it stays buffered.)
      std::string line;
      llvm::raw_string_ostream(line)
          << "step " << done << "/" << total
          << llvm::format(" loss %.6g", loss) << "\n";
      llvm::outs() << line;
      return;
    }
    llvm::raw_ostream &os = llvm::outs();
    constexpr unsigned width = 30;
    unsigned filled = total ? done * width / total : width;
    os << "\r[" << std::string(filled, '#') << std::string(width - filled, '.')
       << "] step " << done << "/" << total << llvm::format(" loss %.6g", loss);
    if (done == total)
      os << "\n";
    os.flush();
  }

private:
  unsigned total;
  bool terminal;
};
} // namespace

/// A parameter not given by --inputs starts uniform in +-1/sqrt(fan_in)
/// (fan_in = its first dim), so activations keep their scale through the
/// layers; the seed's [-1, 1) values are scaled down accordingly.
static void scaleInitialParameter(Tensor &param) {
  if (param.rank() == 0 || param.dim(0) == 0)
    return;
  float scale = 1.0f / std::sqrt(float(param.dim(0)));
  for (float &v : param.values())
    v *= scale;
}

/// The same training steps on the unsharded program: the step of
/// --shardc-optimizer on the reference interpreter, its state fed back.
static FailureOr<std::map<std::string, Tensor>>
trainUnsharded(ModuleOp global, ArrayRef<std::string> paramNames,
               const std::map<std::string, Tensor> &initial,
               ArrayRef<std::string> argNames, ArrayRef<Tensor> args,
               const shardc::OptimizerOptions &optimizer, unsigned numSteps,
               const shardc::TrainingData *data, std::vector<float> &losses) {
  OwningOpRef<ModuleOp> module = global.clone(); // `global` stays for reruns
  PassManager pm(global->getContext(), ModuleOp::getOperationName());
  shardc::buildTrainPipeline(
      pm, shardc::getOptimizerPassOptions(optimizer, paramNames),
      /*propagateFirst=*/false, shardc::ShardingStage::None);
  if (failed(pm.run(*module)))
    return failure();
  func::FuncOp step = shardc::getEntryFunction(*module);

  SmallVector<Tensor> call;
  for (auto [i, name] : llvm::enumerate(argNames))
    call.push_back(initial.count(name) ? initial.at(name).clone()
                                       : args[i].clone());
  call.push_back(llvm::cantFail(Tensor::allocate({}))); // a scalar fits
  call.back().data()[0] = optimizer.learningRate;
  llvm::StringMap<unsigned> argIndex;
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    argIndex[shardc::getArgumentName(step, i)] = i;
    llvm::Expected<std::optional<Tensor>> state =
        shardc::initialOptimizerState(step, i);
    if (!state)
      return step.emitError() << llvm::toString(state.takeError());
    if (*state)
      call.push_back(std::move(**state));
  }
  if (call.size() != step.getNumArguments())
    return step.emitError()
           << "the training step takes " << step.getNumArguments()
           << " inputs, expected " << call.size();
  for (unsigned s = 0; s < numSteps; ++s) {
    if (data)
      for (const std::string &name : data->names())
        call[argIndex.lookup(name)] = data->batch(name, s);
    SmallVector<Tensor> in;
    for (const Tensor &t : call)
      in.push_back(t.clone());
    FailureOr<SmallVector<Tensor>> results =
        shardc::interpretFunction(step, in);
    if (failed(results))
      return failure();
    losses.push_back((*results)[0].data()[0]);
    for (unsigned r = 0; r < step.getNumResults(); ++r)
      if (auto next = step.getResultAttrOfType<StringAttr>(
              r, shardc::ShardcDialect::getNextAttrName()))
        call[argIndex.lookup(next.getValue())] = std::move((*results)[r]);
  }
  // In the shapes checkpoints hold them in, as the engine's parameters()
  // returns them: a stacked view ([3, C, C]) is its checkpoint's [3C, C].
  func::FuncOp model = shardc::getEntryFunction(global);
  llvm::StringMap<SmallVector<int64_t>> stored;
  for (unsigned i = 0; i < model.getNumArguments(); ++i)
    stored[shardc::getArgumentName(model, i)] =
        shardc::getCheckpointShape(model, i);
  std::map<std::string, Tensor> params;
  for (const std::string &name : paramNames) {
    Tensor t = std::move(call[argIndex.lookup(name)]);
    if (auto it = stored.find(name); it != stored.end())
      if (llvm::Error e = t.reshape(it->second))
        return step.emitError() << name << ": " << llvm::toString(std::move(e));
    params.emplace(name, std::move(t));
  }
  return params;
}

int shardc::runTrainCommand() {
  ToolSession session;
  func::FuncOp func;
  OwningOpRef<ModuleOp> module =
      session.loadInputModel(&func, /*expandComposites=*/true);
  if (!module)
    return 1;
  EngineOptions options;
  std::optional<MpiEnvironment> mpi; // outlives the engine
  if (failed(trainBackend.apply(options, mpi, session.getContext(), func)))
    return 1;
  options.parameters.assign(paramList.begin(), paramList.end());
  FailureOr<std::optional<ShardcAutoShardOptions>> autoShard =
      getAutoShardOptions();
  if (failed(autoShard))
    return 1;
  options.autoShard = *autoShard;
  OptimizerOptions optimizer;
  optimizer.learningRate = learningRate;
  optimizer.zeroAxes.assign(getZeroAxes().begin(), getZeroAxes().end());
  FailureOr<std::string> precision = getPrecision();
  if (failed(precision))
    return 1;
  optimizer.precision = *precision;
  FailureOr<std::string> recomputed = getRecompute();
  if (failed(recomputed))
    return 1;
  optimizer.recompute = *recomputed;
  optimizer.layerInputs = getLayerInputs().str();
  if (optimizerName == "adam")
    optimizer.kind = OptimizerOptions::Kind::Adam;
  else if (optimizerName != "sgd") {
    llvm::errs() << "shardc: error: unknown --optimizer '" << optimizerName
                 << "' (expected sgd or adam)\n";
    return 1;
  }
  options.autoShardOptimizer = optimizer;
  if (func.getNumResults() == 0 ||
      cast<RankedTensorType>(func.getResultTypes()[0]).getRank() != 0) {
    llvm::errs() << "shardc: error: train needs a model whose first output "
                    "is the scalar loss; @"
                 << func.getSymName() << "'s is not\n";
    return 1;
  }
  std::optional<TrainingData> data;
  if (!dataPath.empty()) {
    llvm::Expected<TrainingData> loaded =
        TrainingData::load(dataPath, func, getSeed());
    if (!loaded) {
      llvm::errs() << "shardc: error: " << llvm::toString(loaded.takeError())
                   << "\n";
      return 1;
    }
    data = std::move(*loaded);
  }
  FailureOr<SmallVector<Tensor>> args =
      gatherInputs(func, data ? data->names() : std::vector<std::string>());
  if (failed(args))
    return 1;
  std::vector<std::string> argNames;
  llvm::StringMap<unsigned> argIndex;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    argNames.push_back(getArgumentName(func, i));
    argIndex[argNames.back()] = i;
  }
  OwningOpRef<ModuleOp> global = module->clone();

  FailureOr<std::unique_ptr<ShardedEngine>> compiled =
      ShardedEngine::compile(std::move(module), options);
  if (failed(compiled))
    return 1;
  ShardedEngine &engine = **compiled;
  if (engine.parameterNames().empty()) {
    llvm::errs() << "shardc: error: the model has no parameters to train; "
                    "mark them \"param\": true or name them with --params\n";
    return 1;
  }
  std::map<std::string, Tensor> initial;
  for (const std::string &name : engine.parameterNames()) {
    Tensor t = (*args)[argIndex[name]].clone();
    if (!isInputGivenByFile(name))
      scaleInitialParameter(t);
    initial.emplace(name, std::move(t));
  }
  if (failed(engine.loadCheckpoint(initial)))
    return 1;
  std::vector<Tensor> inputs;
  for (const std::string &name : engine.inputNames())
    inputs.push_back((*args)[argIndex[name]].clone());

  bool printing = isPrintingProcess(engine);
  if (printing) {
    llvm::outs() << "training " << engine.parameterNames().size()
                 << " parameters on " << engine.numDevices() << " devices ("
                 << stringifyBackendKind(options.backend) << "), "
                 << optimizerName << " lr=" << learningRate.getValue();
    if (!optimizer.zeroAxes.empty())
      llvm::outs() << ", optimizer state split over "
                   << llvm::join(optimizer.zeroAxes, ",");
    llvm::outs() << "\n";
  }
  trainBackend.injectTestFault(engine);
  ProgressPrinter progress(steps);
  std::vector<float> losses;
  for (unsigned s = 0; s < steps; ++s) {
    if (data)
      for (auto [k, name] : llvm::enumerate(engine.inputNames()))
        if (data->feeds(name))
          inputs[k] = data->batch(name, s);
    FailureOr<float> loss = engine.trainStep(inputs, optimizer);
    if (failed(loss))
      return 1;
    losses.push_back(*loss);
    // Rank 0 alone reports progress, whichever backend each rank runs.
    if (printing && shardc::mpirunRank().value_or(0) == 0)
      progress.step(s + 1, *loss);
  }
  // The global parameters are assembled (gathered from every rank under
  // mpi) only for what reads them: the check, --out-dir, --save.
  bool needFinal = check || !trainOutDir.empty() || !savePath.empty();
  FailureOr<std::map<std::string, Tensor>> final =
      std::map<std::string, Tensor>();
  if (needFinal)
    final = engine.parameters();
  if (failed(final))
    return 1;
  if (printing && !losses.empty())
    llvm::outs() << llvm::format("loss %.6g -> %.6g\n", losses.front(),
                                 losses.back());
  if (printing) {
    // ZeRO's accounting, per device: what training keeps resident.
    int64_t total = 0;
    for (const auto &[name, t] : initial)
      total += t.numElements();
    DeviceMemory first = engine.memoryPerDevice().front();
    llvm::outs() << "memory/device (device 0): parameters " << first.parameters
                 << " B, gradients " << first.gradients
                 << " B, optimizer state " << first.optimizerState << " B = "
                 << first.parameters + first.gradients + first.optimizerState
                 << " B for " << total << " parameters in all\n";
  }

  if (!trainOutDir.empty() && printing) {
    (void)llvm::sys::fs::create_directories(trainOutDir.getValue());
    for (const auto &[name, t] : *final) {
      SmallString<128> path(trainOutDir.getValue());
      llvm::sys::path::append(path, name + ".npy");
      if (llvm::Error err = writeNpy(path, t)) {
        llvm::errs() << "shardc: error: " << llvm::toString(std::move(err))
                     << "\n";
        return 1;
      }
    }
  }
  if (!savePath.empty() && printing) {
    if (llvm::Error err = writeCheckpoint(savePath, *final)) {
      llvm::errs() << "shardc: error: " << llvm::toString(std::move(err))
                   << "\n";
      return 1;
    }
    llvm::outs() << "wrote " << final->size() << " parameters to " << savePath
                 << "\n";
  }
  if (!check)
    return 0;

  std::vector<float> referenceLosses;
  FailureOr<std::map<std::string, Tensor>> want =
      trainUnsharded(*global, engine.parameterNames(), initial, argNames, *args,
                     optimizer, steps, data ? &*data : nullptr,
                     referenceLosses);
  if (failed(want))
    return 1;
  std::vector<Tensor> wanted;
  for (const auto &[name, t] : *want)
    wanted.push_back(t.clone());
  double scale = shardc::familyScale(wanted);

  // A parameter beyond the tolerance may be one the training itself makes
  // sensitive to rounding (shardc/Support/NumericCheck.h): measure how far
  // the unsharded run moves it under a one-ulp change of the initial
  // parameters, and accept a difference within shardc::kSensitivityMargin times
  // that. Runs the unsharded steps once more, only when needed.
  // A mixed-precision training rounds its gradients to the working type:
  // judged by that type's rounding, and perturbed by one ulp of it.
  std::optional<DType> working;
  if (optimizer.precision == "bf16-mixed")
    working = DType::BF16;
  else if (optimizer.precision == "f16-mixed")
    working = DType::F16;
  double baseTolerance =
      working && trainTolerance > 0
          ? std::max<double>(trainTolerance, shardc::halfTolerance(*working))
          : double(trainTolerance);
  std::map<std::string, double> tolerance;
  for (const auto &[name, t] : *want)
    tolerance[name] = baseTolerance;
  // Only Adam amplifies (shardc::hasAdaptiveOptimizerState).
  if (optimizer.kind == OptimizerOptions::Kind::Adam &&
      llvm::any_of(*want, [&](const auto &entry) {
        return !(shardc::compareToReference(final->at(entry.first), entry.second,
                                    nullptr, scale)
                     .first <= baseTolerance);
      })) {
    std::map<std::string, Tensor> perturbed;
    for (const auto &[name, t] : initial)
      perturbed.emplace(name, shardc::perturbByOneUlp(t, working));
    std::vector<float> perturbedLosses;
    FailureOr<std::map<std::string, Tensor>> moved = trainUnsharded(
        *global, engine.parameterNames(), perturbed, argNames, *args,
        optimizer, steps, data ? &*data : nullptr, perturbedLosses);
    if (failed(moved))
      return 1;
    for (const auto &[name, t] : *want) {
      double sensitivity =
          shardc::compareToReference(moved->at(name), t, nullptr, scale).first;
      tolerance[name] =
          std::max<double>(baseTolerance, shardc::kSensitivityMargin * sensitivity);
    }
  }

  double worst = 0;
  bool ok = true;
  std::vector<std::string> names;
  SmallVector<double> errors, raisedTo;
  for (const auto &[name, t] : *want) {
    double rel = checkAgainstReference(final->at(name), t, scale,
                                       tolerance[name],
                                       "parameter '" + name + "'",
                                       "the unsharded run", ok)
                     .first;
    worst = std::max(worst, rel);
    names.push_back(name);
    errors.push_back(rel);
    raisedTo.push_back(tolerance[name]);
    // Diverging alike in both runs is the training's doing, not the
    // sharding's: no mismatch, but worth a word.
    if (int64_t n = countNonFinite(t); n && printing)
      llvm::errs() << "shardc: warning: parameter '" << name << "' has " << n
                   << " non-finite value" << (n == 1 ? "" : "s")
                   << " (NaN or infinite) after " << steps
                   << " steps of the unsharded run: the training diverged\n";
  }
  if (printing)
    printRoundingAmplified(llvm::outs(), "the training", "the unsharded run",
                           "its initial parameters", names, errors, raisedTo,
                           trainTolerance, wanted, working);
  if (printing)
    llvm::outs() << llvm::format("final parameters vs the unsharded run: "
                                 "max_rel_err=%.3g (unsharded loss %.6g) %s\n",
                                 worst, referenceLosses.back(),
                                 ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
}

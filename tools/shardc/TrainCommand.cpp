//===- TrainCommand.cpp - `shardc train` ----------------------------------===//
//
// Trains a model whose first output is a scalar loss: the command line
// parsed into the training workflow's options (shardc/Driver/
// TrainWorkflow.h), which compiles the model, trains it on the backend and
// checks the final parameters against the same steps run unsharded. The
// data is a fixed regression set (the non-parameter inputs, from --inputs
// or the seed), fitted full-batch, or the mini-batches of --data.
//
//===----------------------------------------------------------------------===//

#include "EngineSession.h"
#include "JobDiagnostics.h"
#include "SharedOptions.h"
#include "ToolCommon.h"

#include "shardc/Driver/TrainWorkflow.h"

#include "llvm/Support/Process.h"

using namespace mlir;
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

static cl::opt<std::string> trainTracePath(
    "trace",
    cl::desc("Write the last step's timeline as a Chrome trace (Perfetto): "
             "each device's compute and communication tracks (mpi: rank R "
             "writes <path>.rank<R>)"),
    cl::init(""), cl::sub(shardc::trainCommand));

/// The training options of the command line, checked; fails after a
/// diagnostic.
static LogicalResult parseTrainOptions(shardc::TrainWorkflowOptions &options) {
  using namespace shardc;
  options.engine.parameters.assign(paramList.begin(), paramList.end());
  FailureOr<std::optional<ShardcAutoShardOptions>> autoShard =
      getAutoShardOptions();
  if (failed(autoShard))
    return failure();
  options.engine.autoShard = *autoShard;
  OptimizerOptions &optimizer = options.optimizer;
  optimizer.learningRate = learningRate;
  optimizer.zeroAxes.assign(getZeroAxes().begin(), getZeroAxes().end());
  FailureOr<std::string> precision = getPrecision();
  if (failed(precision))
    return failure();
  optimizer.precision = *precision;
  FailureOr<std::string> recomputed = getRecompute();
  if (failed(recomputed))
    return failure();
  optimizer.recompute = *recomputed;
  optimizer.layerInputs = getLayerInputs().str();
  if (optimizerName == "adam")
    optimizer.kind = OptimizerOptions::Kind::Adam;
  else if (optimizerName != "sgd") {
    llvm::errs() << "shardc: error: unknown --optimizer '" << optimizerName
                 << "' (expected sgd or adam)\n";
    return failure();
  }
  options.steps = steps;
  options.check = check;
  options.tolerance = trainTolerance;
  options.outDir = trainOutDir;
  options.savePath = savePath;
  options.tracePath = trainTracePath;
  options.givenByFile = isInputGivenByFile;
  // Rank 0 alone reports progress, whichever backend each rank runs. Under
  // mpirun the bar is never drawn: Open MPI hands every rank a
  // pseudo-terminal for stdout whatever mpirun's own stdout is (a log
  // file, a pipe), so a rank cannot tell a terminal from a log.
  options.reportsProgress = mpirunRank().value_or(0) == 0;
  options.progressBar =
      llvm::sys::Process::StandardOutIsDisplayed() && !mpirunRank();
  options.beforeSteps = [](ShardedEngine &engine) {
    trainBackend.injectTestFault(engine);
  };
  return success();
}

int shardc::runTrainCommand() {
  ToolSession session;
  func::FuncOp func;
  OwningOpRef<ModuleOp> module =
      session.loadInputModel(&func, /*expandComposites=*/true);
  if (!module)
    return 1;
  TrainWorkflowOptions options;
  std::optional<MpiEnvironment> mpi; // outlives the engine
  if (failed(trainBackend.apply(options.engine, mpi, session.getContext(),
                                func)) ||
      failed(parseTrainOptions(options)) || failed(checkLossFunction(func)))
    return 1;
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
    options.data = &*data;
  }
  FailureOr<SmallVector<Tensor>> args =
      gatherInputs(func, data ? data->names() : std::vector<std::string>());
  if (failed(args))
    return 1;
  FailureOr<bool> ok =
      runTrainWorkflow(std::move(module), *args, options, llvm::outs());
  return succeeded(ok) && *ok ? 0 : 1;
}

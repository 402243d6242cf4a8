//===- ToolCommon.cpp - what the shardc subcommands share -----------------===//

#include "ToolCommon.h"
#include "SharedOptions.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Transforms/AutoShard.h"
#include "shardc/Transforms/Passes.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace shardc;
namespace cl = llvm::cl;

static cl::opt<std::string> autodiff(
    "autodiff",
    cl::desc("First rewrite the model into its backward pass "
             "(--shardc-autodiff): outputs, then the gradient of each input "
             "named (--autodiff=w0,w1), else of each \"param\" input, else "
             "of all; one cotangent input <output>.grad per output"),
    cl::ValueOptional, cl::value_desc("input,..."), cl::init(""),
    cl::sub(shardc::compileCommand), cl::sub(shardc::runCommand),
    cl::sub(shardc::simulateCommand), cl::sub(shardc::explainCommand),
    cl::sub(shardc::execCommand));

static cl::opt<std::string> trainStep(
    "train-step",
    cl::desc(
        "First rewrite the model, whose first output is a scalar loss, "
        "into one optimizer step (--shardc-training-step): gradients of the "
        "\"param\" inputs, then the sgd or adam update; inputs "
        "learning_rate and the optimizer state, outputs the gradients "
        "and every parameter's and state's next value"),
    cl::value_desc("sgd|adam"), cl::init(""), cl::sub(shardc::compileCommand),
    cl::sub(shardc::runCommand), cl::sub(shardc::simulateCommand),
    cl::sub(shardc::explainCommand), cl::sub(shardc::execCommand));

static cl::list<std::string> zeroAxes(
    "zero-axes",
    cl::desc("Split the optimizer state (and the update) over these mesh "
             "axes as well, ZeRO-1/2 style: gradients are reduce-scattered "
             "and the new parameters all-gathered"),
    cl::CommaSeparated, cl::value_desc("axis,..."),
    cl::sub(shardc::compileCommand), cl::sub(shardc::runCommand),
    cl::sub(shardc::simulateCommand), cl::sub(shardc::explainCommand),
    cl::sub(shardc::execCommand), cl::sub(shardc::trainCommand));

ArrayRef<std::string> shardc::getZeroAxes() { return zeroAxes; }

static cl::opt<std::string> precision(
    "precision",
    cl::desc("The training step's precision (docs/precision.md): f32, or "
             "bf16-mixed / f16-mixed: the forward and backward passes in "
             "bf16 or f16 on working copies of f32 master weights, the "
             "optimizer state f32; f16-mixed scales the loss dynamically"),
    cl::value_desc("f32|bf16-mixed|f16-mixed"), cl::init("f32"),
    cl::sub(shardc::compileCommand), cl::sub(shardc::runCommand),
    cl::sub(shardc::simulateCommand), cl::sub(shardc::execCommand),
    cl::sub(shardc::trainCommand));

FailureOr<std::string> shardc::getPrecision() {
  if (precision != "f32" && precision != "bf16-mixed" &&
      precision != "f16-mixed") {
    llvm::errs() << "shardc: error: unknown --precision '" << precision
                 << "' (expected f32, bf16-mixed or f16-mixed)\n";
    return failure();
  }
  return precision.getValue();
}

static cl::opt<std::string> recompute(
    "recompute",
    cl::desc("Activation recomputation in the training step "
             "(docs/recompute.md): none, selective (the attention core) or "
             "full (all but each layer's input)"),
    cl::value_desc("none|selective|full"), cl::init("none"),
    cl::sub(shardc::compileCommand), cl::sub(shardc::runCommand),
    cl::sub(shardc::simulateCommand), cl::sub(shardc::execCommand),
    cl::sub(shardc::trainCommand), cl::sub(shardc::pipelineCommand));

static cl::opt<std::string> layerInputs(
    "layer-inputs",
    cl::desc("With --recompute=full: the regex naming each layer's input, "
             "the values kept (default: ^x0$|_res2$, examples/gpt's names)"),
    cl::value_desc("regex"), cl::init(""), cl::sub(shardc::compileCommand),
    cl::sub(shardc::runCommand), cl::sub(shardc::simulateCommand),
    cl::sub(shardc::execCommand), cl::sub(shardc::trainCommand),
    cl::sub(shardc::pipelineCommand));

llvm::StringRef shardc::getLayerInputs() { return layerInputs; }

FailureOr<std::string> shardc::getRecompute() {
  if (recompute != "none" && recompute != "selective" && recompute != "full") {
    llvm::errs() << "shardc: error: unknown --recompute '" << recompute
                 << "' (expected none, selective or full)\n";
    return failure();
  }
  return recompute.getValue();
}

static cl::opt<bool> autoShard(
    "auto-shard",
    cl::desc("Choose the sharding of every value the model does not annotate "
             "by cost (--shardc-auto-shard, docs/auto-sharding.md); the "
             "annotations it has are kept"),
    cl::init(false), cl::sub(shardc::compileCommand),
    cl::sub(shardc::simulateCommand), cl::sub(shardc::explainCommand),
    cl::sub(shardc::execCommand),
    cl::sub(shardc::trainCommand));

static cl::opt<std::string> memoryBudget(
    "memory-budget",
    cl::desc("With --auto-shard: the peak live bytes per device the plan may "
             "reach (K, M, G suffixes: 512K, 64M, 2G); default: the "
             "machine file's device memory; 'none': no budget"),
    cl::value_desc("bytes"), cl::init(""), cl::sub(shardc::compileCommand),
    cl::sub(shardc::simulateCommand), cl::sub(shardc::explainCommand),
    cl::sub(shardc::execCommand), cl::sub(shardc::trainCommand));

static cl::opt<double> autoShardTimeLimit(
    "auto-shard-time-limit",
    cl::desc("With --auto-shard: a wall-clock backstop on the solve (none "
             "by default: the solver's work limits bound it); then its best "
             "plan, or the local search's if it has none"),
    cl::value_desc("seconds"), cl::init(0), cl::sub(shardc::compileCommand),
    cl::sub(shardc::simulateCommand), cl::sub(shardc::explainCommand),
    cl::sub(shardc::execCommand),
    cl::sub(shardc::trainCommand));

// The machine every plan is priced on (docs/machines.md): the partitioner's
// reshard choices, the auto-sharder's costs and simulate's time model.
static cl::opt<std::string> machinePath(
    "machine",
    cl::desc("A machine description file (docs/machines.md) the partitioner, "
             "the auto-sharder and the simulator price on; "
             "--link-latency, --link-bandwidth and --flops override its "
             "intra-node link and f32 rate"),
    cl::value_desc("path"), cl::init(""), cl::sub(shardc::compileCommand),
    cl::sub(shardc::simulateCommand), cl::sub(shardc::explainCommand));
static cl::opt<double> linkLatency("link-latency",
                                   cl::desc("Seconds per message (alpha)"),
                                   cl::init(MachineModel().linkLatencySeconds),
                                   cl::sub(shardc::compileCommand),
                                   cl::sub(shardc::simulateCommand),
                                   cl::sub(shardc::explainCommand));
static cl::opt<double> linkBandwidth(
    "link-bandwidth", cl::desc("Bytes per second per link (1/beta)"),
    cl::init(MachineModel().linkBytesPerSecond),
    cl::sub(shardc::compileCommand), cl::sub(shardc::simulateCommand),
    cl::sub(shardc::explainCommand));
static cl::opt<double> flopRate("flops", cl::desc("FLOP/s per device"),
                                cl::init(MachineModel().flopsPerSecond),
                                cl::sub(shardc::compileCommand),
                                cl::sub(shardc::simulateCommand),
                                cl::sub(shardc::explainCommand));

/// The flags' figures, 0 where not given.
static double given(const cl::opt<double> &flag) {
  return flag.getNumOccurrences() ? double(flag) : 0;
}

static LogicalResult checkMachineFlags() {
  for (const cl::opt<double> *flag : {&linkLatency, &linkBandwidth, &flopRate})
    if (flag->getNumOccurrences() && !(*flag > 0)) {
      llvm::errs() << "shardc: error: --" << flag->ArgStr
                   << " must be positive\n";
      return failure();
    }
  return success();
}

FailureOr<MachineModel> shardc::getCommandMachine() {
  if (failed(checkMachineFlags()))
    return failure();
  llvm::Expected<MachineModel> machine = resolveMachineModel(
      machinePath, given(linkLatency), given(linkBandwidth), given(flopRate));
  if (!machine) {
    llvm::errs() << "shardc: error: " << llvm::toString(machine.takeError())
                 << "\n";
    return failure();
  }
  return std::move(*machine);
}

LogicalResult shardc::priceOnCommandMachine(OpPassManager &pm) {
  // Checked here, so a bad file is one message, not one per pass.
  if (failed(getCommandMachine()))
    return failure();
  std::string options;
  llvm::raw_string_ostream os(options);
  if (!machinePath.empty())
    os << "machine=\"" << machinePath << "\" ";
  if (double v = given(linkLatency))
    os << "link-latency=" << llvm::format("%.17g", v) << " ";
  if (double v = given(linkBandwidth))
    os << "link-bandwidth=" << llvm::format("%.17g", v) << " ";
  if (double v = given(flopRate))
    os << "flops=" << llvm::format("%.17g", v) << " ";
  if (options.empty())
    return success();
  auto report = [](const llvm::Twine &message) {
    llvm::errs() << "shardc: error: " << message << "\n";
    return failure();
  };
  for (Pass &pass : pm.getPasses())
    if (pass.getArgument() == "shardc-partition" &&
        failed(pass.initializeOptions(options, report)))
      return failure();
  return success();
}

FailureOr<std::optional<shardc::ShardcAutoShardOptions>>
shardc::getAutoShardOptions() {
  if (!autoShard) {
    if (memoryBudget.getNumOccurrences() ||
        autoShardTimeLimit.getNumOccurrences()) {
      llvm::errs() << "shardc: error: --memory-budget and "
                      "--auto-shard-time-limit need --auto-shard\n";
      return failure();
    }
    return std::optional<ShardcAutoShardOptions>();
  }
  if (!isMemoryBudgetSpelling(memoryBudget)) {
    llvm::errs() << "shardc: error: --memory-budget: expected a byte count "
                    "with an optional K, M or G suffix, or 'none', got '"
                 << memoryBudget << "'\n";
    return failure();
  }
  if (autoShardTimeLimit.getNumOccurrences() && !(autoShardTimeLimit > 0)) {
    llvm::errs() << "shardc: error: --auto-shard-time-limit must be positive\n";
    return failure();
  }
  if (failed(checkMachineFlags()))
    return failure();
  ShardcAutoShardOptions options;
  options.memoryBudget = memoryBudget;
  options.timeLimit = autoShardTimeLimit;
  options.machine = machinePath;
  options.linkLatency = given(linkLatency);
  options.linkBandwidth = given(linkBandwidth);
  options.flopRate = given(flopRate);
  return std::optional<ShardcAutoShardOptions>(options);
}

bool shardc::isAutodiffRequested() {
  return autodiff.getNumOccurrences() > 0 || trainStep.getNumOccurrences() > 0;
}

/// --zero-axes is only for --train-step.
static LogicalResult checkZeroAxes() {
  if (zeroAxes.empty() || trainStep.getNumOccurrences())
    return success();
  llvm::errs() << "shardc: error: --zero-axes shards optimizer state; it "
                  "needs --train-step\n";
  return failure();
}

/// addCommandPipeline, with --auto-shard left out unless `withAutoShard`.
static LogicalResult addPipeline(OpPassManager &pm, bool propagateFirst,
                                 ShardingStage then, bool explain,
                                 bool withAutoShard) {
  FailureOr<std::optional<ShardcAutoShardOptions>> requested =
      getAutoShardOptions();
  if (failed(requested))
    return failure();
  const ShardcAutoShardOptions *autoShard =
      withAutoShard && *requested ? &**requested : nullptr;
  // Without a sharding stage, --auto-shard alone writes the plan.
  auto addAutoShardAlone = [&] {
    if (autoShard && then == ShardingStage::None) {
      pm.addPass(createShardcDecompose());
      pm.addPass(createShardcAutoShard(*autoShard));
    }
  };
  if (failed(checkZeroAxes()))
    return failure();
  if (precision.getNumOccurrences() && !trainStep.getNumOccurrences()) {
    llvm::errs() << "shardc: error: --precision sets a training step's "
                    "precision; it needs --train-step\n";
    return failure();
  }
  FailureOr<std::string> stepPrecision = getPrecision();
  if (failed(stepPrecision))
    return failure();
  if (recompute.getNumOccurrences() && !trainStep.getNumOccurrences()) {
    llvm::errs() << "shardc: error: --recompute changes a training step; "
                    "it needs --train-step\n";
    return failure();
  }
  FailureOr<std::string> stepRecompute = getRecompute();
  if (failed(stepRecompute))
    return failure();
  if (!isAutodiffRequested()) {
    buildShardingStage(pm, then, explain, autoShard);
    addAutoShardAlone();
    return success();
  }
  if (autodiff.getNumOccurrences() && trainStep.getNumOccurrences()) {
    llvm::errs() << "shardc: error: give --autodiff (the backward pass) or "
                    "--train-step (backward and update), not both\n";
    return failure();
  }
  if (trainStep.getNumOccurrences()) {
    if (trainStep != "sgd" && trainStep != "adam") {
      llvm::errs() << "shardc: error: unknown --train-step '" << trainStep
                   << "' (expected sgd or adam)\n";
      return failure();
    }
    ShardcTrainingStepOptions options;
    options.optimizer = trainStep;
    options.zeroAxes.assign(zeroAxes.begin(), zeroAxes.end());
    options.precision = *stepPrecision;
    options.recompute = *stepRecompute;
    if (!layerInputs.empty())
      options.layerInputs = layerInputs;
    buildTrainPipeline(pm, options, propagateFirst, then, explain, autoShard);
    addAutoShardAlone();
    return success();
  }
  ShardcAutodiffOptions options;
  SmallVector<StringRef> names;
  StringRef(autodiff).split(names, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef name : names)
    options.wrt.push_back(name.trim().str());
  buildAutodiffPipeline(pm, options, propagateFirst, then, explain, autoShard);
  addAutoShardAlone();
  return success();
}

LogicalResult shardc::addCommandPipeline(OpPassManager &pm,
                                         bool propagateFirst,
                                         ShardingStage then, bool explain) {
  if (failed(addPipeline(pm, propagateFirst, then, explain,
                         /*withAutoShard=*/true)))
    return failure();
  return priceOnCommandMachine(pm);
}

LogicalResult shardc::applyAutodiff(ModuleOp module, bool propagateFirst) {
  if (!isAutodiffRequested() && precision.getNumOccurrences()) {
    llvm::errs() << "shardc: error: --precision sets a training step's "
                    "precision; it needs --train-step\n";
    return failure();
  }
  if (!isAutodiffRequested()) {
    if (failed(checkZeroAxes()))
      return failure();
    // Nothing to differentiate: the composites loadInputModel kept for
    // autodiff are expanded here, as the training pipelines expand them.
    PassManager pm(module.getContext(), ModuleOp::getOperationName());
    pm.addPass(createShardcDecompose());
    return pm.run(module);
  }
  // With --auto-shard, the whole differentiated program is planned
  // afterwards, by the command's sharding pipeline: nothing is propagated
  // before it, and it does not run here.
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  if (failed(addPipeline(pm, propagateFirst && !autoShard, ShardingStage::None,
                         /*explain=*/false, /*withAutoShard=*/false)))
    return failure();
  return pm.run(module);
}

OwningOpRef<ModuleOp> shardc::loadGlobalProgram(
    ToolSession &session, StringRef command, func::FuncOp *entry,
    function_ref<LogicalResult(ModuleOp)> beforeDifferentiating) {
  func::FuncOp func;
  OwningOpRef<ModuleOp> module =
      session.loadInputModel(&func, /*expandComposites=*/true);
  if (!module)
    return nullptr;
  if (func->hasAttr(ShardcDialect::getSpmdAttrName())) {
    llvm::errs() << "shardc: error: " << command
                 << " takes the global program; this one is already "
                    "partitioned\n";
    return nullptr;
  }
  if (beforeDifferentiating && failed(beforeDifferentiating(*module)))
    return nullptr;
  if (failed(applyAutodiff(*module, /*propagateFirst=*/true)))
    return nullptr;
  if (entry)
    *entry = getEntryFunction(*module);
  return module;
}

//===- CompileCommand.cpp - `shardc compile` ------------------------------===//
//
// Import a model, run a pass pipeline, print it as .mlir or .json.
//
//===----------------------------------------------------------------------===//

#include "SharedOptions.h"
#include "ToolCommon.h"

#include "shardc/Export/JsonExporter.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> outputPath("o",
                                       cl::desc("Output file (- for stdout)"),
                                       cl::value_desc("path"), cl::init("-"),
                                       cl::sub(shardc::compileCommand));

static cl::opt<std::string>
    emitFormat("emit",
               cl::desc("Output format: mlir or json (default: by the -o "
                        "extension, else mlir)"),
               cl::init(""), cl::sub(shardc::compileCommand));

static cl::opt<std::string> passPipeline(
    "pass-pipeline",
    cl::desc("A textual pass pipeline to run on the model's module, e.g. "
             "'builtin.module(canonicalize)' or "
             "'builtin.module(func.func(shardc-cleanup))'; the "
             "builtin.module(...) around it may be left out"),
    cl::init(""), cl::sub(shardc::compileCommand));

static cl::opt<bool>
    propagate("propagate",
              cl::desc("Run sharding propagation (--shardc-propagate)"),
              cl::init(false), cl::sub(shardc::compileCommand));

static cl::opt<bool> partition(
    "partition",
    cl::desc("Propagate, then partition into a per-device SPMD program"),
    cl::init(false), cl::sub(shardc::compileCommand));

static cl::opt<bool> explain(
    "explain",
    cl::desc("With --propagate/--partition: a remark per value saying where "
             "its sharding came from"),
    cl::init(false), cl::sub(shardc::compileCommand));

static cl::alias shardcExplain("shardc-explain",
                               cl::desc("Alias for --explain"),
                               cl::aliasopt(explain));

static cl::opt<bool>
    timing("mlir-timing",
           cl::desc("Print the time each phase takes (load, every pass, "
                    "verify, print) to stderr"),
           cl::init(false), cl::sub(shardc::compileCommand));

/// Builds the pipeline of --autodiff/--train-step and --propagate/--partition;
/// reports conflicting options and returns failure.
static LogicalResult buildPipeline(PassManager &pm) {
  shardc::ShardingStage stage =
      partition ? shardc::ShardingStage::Partition
      : propagate || explain ? shardc::ShardingStage::Propagate
                             : shardc::ShardingStage::None;
  // The backward pass is derived on the global program, so that
  // propagation and partitioning shard it with the forward pass.
  return shardc::addCommandPipeline(
      pm, /*propagateFirst=*/stage != shardc::ShardingStage::None, stage,
      explain);
}

/// `pipeline` without a `builtin.module(...)` around all of it.
static StringRef stripModuleAnchor(StringRef pipeline) {
  StringRef anchor = "builtin.module(";
  if (!pipeline.starts_with(anchor) || !pipeline.ends_with(")"))
    return pipeline;
  int depth = 0;
  for (size_t i = anchor.size() - 1; i < pipeline.size(); ++i) {
    depth += pipeline[i] == '(' ? 1 : pipeline[i] == ')' ? -1 : 0;
    if (depth == 0 && i + 1 != pipeline.size())
      return pipeline; // `builtin.module(a),builtin.module(b)`
  }
  return pipeline.drop_front(anchor.size()).drop_back();
}

/// Parses --pass-pipeline into `pm`, a pass manager on the model's module.
/// MLIR writes a pipeline anchored on the op it runs on,
/// `builtin.module(...)`; parsed as it is into a module pass manager, that
/// would be a pass manager for modules nested in the model's module, which
/// never exist, and run nothing. So the anchor is taken off and the passes
/// inside are added to `pm`. Function passes nest as in MLIR:
/// `func.func(shardc-cleanup)`. Reports a bad pipeline and returns failure.
static LogicalResult parseUserPipeline(PassManager &pm) {
  StringRef pipeline = stripModuleAnchor(StringRef(passPipeline).trim());
  auto bad = [](const Twine &why) {
    llvm::errs() << "shardc: error: bad --pass-pipeline: " << why << "\n";
    return failure();
  };
  if (pipeline.contains("builtin.module("))
    return bad("a model is one module, with no modules inside it: write "
               "builtin.module(...) once, around the whole pipeline, or "
               "leave it out");
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (failed(parsePassPipeline(pipeline, pm, os)))
    return bad(StringRef(errors).rtrim());
  return success();
}

int shardc::runCompileCommand() {
  StringRef emit = emitFormat;
  if (emit.empty())
    emit = llvm::sys::path::extension(outputPath) == ".json" ? "json" : "mlir";
  if (emit != "mlir" && emit != "json") {
    llvm::errs() << "shardc: error: --emit must be mlir or json, got '" << emit
                 << "'\n";
    return 1;
  }

  DefaultTimingManager timingManager;
  timingManager.setEnabled(timing);
  TimingScope rootTiming = timingManager.getRootScope();

  ToolSession session;
  TimingScope loadTiming = rootTiming.nest("load model (import, verify)");
  OwningOpRef<ModuleOp> module = session.loadInputModel();
  loadTiming.stop();
  if (!module)
    return 1;

  PassManager pm(&session.getContext(), ModuleOp::getOperationName());
  if (failed(buildPipeline(pm)))
    return 1;
  // Runs after ours, so that it sees the sharded program.
  PassManager userPm(&session.getContext(), ModuleOp::getOperationName());
  if (!passPipeline.empty() && failed(parseUserPipeline(userPm)))
    return 1;
  // The model was verified when loaded. Our own passes are tested to keep
  // it valid, so their output is verified once, after the last one, not
  // after each; a user's --pass-pipeline keeps MLIR's per-pass verification.
  pm.enableVerifier(false);
  TimingScope passTiming = rootTiming.nest("passes");
  pm.enableTiming(passTiming);
  if (failed(pm.run(*module)))
    return 1;
  passTiming.stop();
  if (!pm.empty()) {
    TimingScope verifyTiming = rootTiming.nest("verify the result");
    if (failed(verify(*module)))
      return 1;
  }
  if (!userPm.empty()) {
    TimingScope userTiming = rootTiming.nest("--pass-pipeline");
    userPm.enableTiming(userTiming);
    if (failed(userPm.run(*module)))
      return 1;
  }

  std::string error;
  auto output = openOutputFile(outputPath, &error);
  if (!output) {
    llvm::errs() << "shardc: error: cannot write '" << outputPath
                 << "': " << error << "\n";
    return 1;
  }
  TimingScope printTiming = rootTiming.nest("print");
  if (emit == "json") {
    if (failed(exportJsonGraph(*module, output->os())))
      return 1;
  } else {
    // Verified above: the printer need not verify it again.
    module->print(output->os(), OpPrintingFlags().assumeVerified());
  }
  output->keep();
  // The process ends here: tearing down the module op by op would only
  // return memory the exit returns anyway (1% of a large compile). Held
  // by a static, it stays reachable, so LeakSanitizer (make test-sanitize)
  // does not report this intended non-release as a leak.
  static Operation *keptUntilExit;
  keptUntilExit = module.release();
  return 0;
}

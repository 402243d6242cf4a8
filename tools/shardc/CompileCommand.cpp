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

static cl::opt<std::string>
    passPipeline("pass-pipeline",
                 cl::desc("A textual pass pipeline to run, e.g. "
                          "'builtin.module(canonicalize)'"),
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

/// Builds the pipeline from --pass-pipeline; reports a bad pipeline and
/// returns failure.
static LogicalResult buildPipeline(PassManager &pm) {
  // The backward pass is derived on the global program, so that
  // propagation and partitioning shard it with the forward pass.
  if (failed(shardc::addAutodiffPass(pm, /*propagateFirst=*/propagate ||
                                             partition || explain)))
    return failure();
  if (propagate || partition || explain)
    shardc::addShardingPipeline(pm, partition, explain);
  if (passPipeline.empty())
    return success();
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (failed(parsePassPipeline(passPipeline, pm, os))) {
    llvm::errs() << "shardc: error: bad --pass-pipeline: " << errors << "\n";
    return failure();
  }
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
  // The model was verified when loaded. Our own passes are tested to keep
  // it valid, so their output is verified once, after the last one, not
  // after each; a user's --pass-pipeline keeps MLIR's per-pass verification.
  bool verifyOnce = passPipeline.empty();
  pm.enableVerifier(!verifyOnce);
  TimingScope passTiming = rootTiming.nest("passes");
  pm.enableTiming(passTiming);
  if (failed(pm.run(*module)))
    return 1;
  passTiming.stop();
  if (verifyOnce && !pm.empty()) {
    TimingScope verifyTiming = rootTiming.nest("verify the result");
    if (failed(verify(*module)))
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

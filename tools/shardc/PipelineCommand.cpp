//===- PipelineCommand.cpp - shardc pipeline ------------------------------===//
//
// One pipelined training step (docs/pipeline.md): split the loss function
// into stages over --pipeline-axis, the batch into --microbatches, build
// each stage's program for --schedule, run it on --backend, and check the
// parameters after the step (and the loss) against the unsharded
// full-batch SGD step. On the simulator it also reports the step time, the
// bubble against (p-1)/(m+p-1), and the activations each stage holds.
// The workflow is the Driver's (shardc/Driver/PipelineTraining.h); this
// file parses the flags and prints.
//
//===----------------------------------------------------------------------===//

#include "JobDiagnostics.h"
#include "PipelineStep.h"
#include "SharedOptions.h"
#include "ToolCommon.h"

#include "shardc/Driver/PipelineTraining.h"
#include "shardc/Runtime/MpiBackend.h"
#include "shardc/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

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

/// The Driver's options from the shared pipeline flags and `settings`;
/// fails after a message naming the flag.
FailureOr<PipelineTrainingOptions>
getTrainingOptions(const PipelineStepSettings &settings) {
  PipelineTrainingOptions options;
  std::optional<PipelineScheduleKind> kind = parsePipelineSchedule(schedule);
  if (!kind) {
    llvm::errs() << "shardc: error: unknown --schedule '" << schedule
                 << "' (expected gpipe or 1f1b)\n";
    return failure();
  }
  std::optional<BackendKind> backend = parseBackendKind(settings.backend);
  if (!backend) {
    llvm::errs() << "shardc: error: unknown --backend '" << settings.backend
                 << "' (expected sim, threads or mpi)\n";
    return failure();
  }
  // simulate and explain take these for their own programs; a pipelined
  // step is a training step of its own, planned from the model's shardings.
  FailureOr<std::optional<ShardcAutoShardOptions>> autoShard =
      getAutoShardOptions();
  if (failed(autoShard))
    return failure();
  if (isAutodiffRequested() || *autoShard) {
    llvm::errs() << "shardc: error: --autodiff, --train-step and --auto-shard "
                    "do not combine with --pipeline-axis, --microbatches or "
                    "--schedule: the pipelined step is a training step of its "
                    "own (its optimizer: shardc pipeline --optimizer)\n";
    return failure();
  }
  if (settings.steps < 1) {
    llvm::errs() << "shardc: error: --steps must be at least 1\n";
    return failure();
  }
  if (microbatches < 0) {
    llvm::errs() << "shardc: error: --microbatches must be at least 1\n";
    return failure();
  }
  if (settings.optimizer != "sgd" && settings.optimizer != "adam") {
    llvm::errs() << "shardc: error: unknown --optimizer '" << settings.optimizer
                 << "' (expected sgd or adam)\n";
    return failure();
  }
  options.pipeline.axis = pipelineAxis;
  options.pipeline.microbatches = microbatches;
  options.pipeline.schedule = *kind;
  options.pipeline.optimizer.optimizer = settings.optimizer;
  FailureOr<std::string> recompute = getRecompute();
  if (failed(recompute))
    return failure();
  options.pipeline.optimizer.recompute = *recompute;
  if (!getLayerInputs().empty())
    options.pipeline.optimizer.layerInputs = getLayerInputs().str();
  options.backend = *backend;
  options.learningRate = settings.learningRate;
  options.steps = settings.steps;
  options.machine = settings.machine;
  options.tolerance = settings.tolerance.value_or(1e-4);
  return options;
}

/// --emit=mlir prints the stage programs; fails on another --emit.
LogicalResult emitStagePrograms(const PipelineProgram &program,
                                StringRef emit) {
  if (emit != "mlir") {
    llvm::errs() << "shardc: error: unknown --emit '" << emit
                 << "' (expected mlir)\n";
    return failure();
  }
  program.mesh->print(llvm::outs());
  llvm::outs() << "\n";
  for (const PipelineStage &stage : program.stages) {
    stage.program->print(llvm::outs());
    llvm::outs() << "\n";
  }
  return success();
}

/// The summary, --report-json and --trace of a finished training.
LogicalResult report(const PipelineTrainingPlan &plan,
                     const PipelineTraining &training,
                     const PipelineTrainingOptions &options,
                     const PipelineStepSettings &settings) {
  printPipelineSummary(plan, training, options, settings.timeline,
                       llvm::outs());
  if (!settings.reportJson.empty() &&
      failed(writeText(settings.reportJson, [&](raw_ostream &os) {
        os << llvm::formatv("{0:2}", llvm::json::Value(pipelineReportToJson(
                                         plan, training, options)))
           << "\n";
      })))
    return failure();
  if (settings.tracePath.empty())
    return success();
  if (options.backend != BackendKind::Sim) {
    llvm::errs() << "shardc: error: --trace needs --backend sim (the trace "
                    "is the simulator's timeline)\n";
    return failure();
  }
  return writeText(settings.tracePath, [&](raw_ostream &os) {
    writePipelineTrace(training.run.simulation, os);
  });
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
  ToolSession session;
  func::FuncOp func;
  OwningOpRef<ModuleOp> module =
      session.loadInputModel(&func, /*expandComposites=*/true);
  if (!module)
    return 1;
  // The stages' programs are differentiated op by op: every composite is
  // expanded first, as PipelinedModel.cpp does for Python.
  PassManager expand(module->getContext(), ModuleOp::getOperationName());
  expand.addPass(createShardcDecompose());
  if (failed(expand.run(*module)))
    return 1;
  FailureOr<PipelineTrainingOptions> options = getTrainingOptions(settings);
  if (failed(options))
    return 1;
  FailureOr<PipelineTrainingPlan> plan = planPipelineTraining(func, *options);
  if (failed(plan))
    return 1;
  if (!settings.emit.empty())
    return failed(emitStagePrograms(plan->program, settings.emit));
  if (settings.explainOnly) {
    printPipelineExplanation(*plan, options->machine, llvm::outs());
    return 0;
  }
  FailureOr<SmallVector<Tensor>> inputs = gatherInputs(func);
  if (failed(inputs))
    return 1;
  std::optional<MpiEnvironment> mpi;
  FailureOr<PipelineTraining> training =
      trainPipelined(*plan, *inputs, *options, [&]() -> LogicalResult {
        if (settings.explain)
          printPipelineExplanation(*plan, options->machine, llvm::outs());
        if (options->backend == BackendKind::Mpi && !startMpiForCommand(mpi))
          return failure();
        return success();
      });
  if (failed(training))
    return 1;
  // Under mpi rank 0 speaks for the job.
  bool speaks = !mpi || mpi->rank() == 0;
  if (speaks)
    llvm::errs() << training->check.verdicts;
  if (!speaks)
    return training->check.ok ? 0 : 1;
  if (failed(report(*plan, *training, *options, settings)))
    return 1;
  return training->check.ok ? 0 : 1;
}

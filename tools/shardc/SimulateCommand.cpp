//===- SimulateCommand.cpp - `shardc simulate` ----------------------------===//
//
// Propagate, partition, run the SPMD program on a simulated mesh, and check
// it against the reference interpreter on the unsharded program with the
// same inputs: the command line parsed into the simulation workflow's
// options (shardc/Driver/SimulateWorkflow.h). With --pipeline-axis, a
// pipelined training step instead (PipelineStep.h).
//
//===----------------------------------------------------------------------===//

#include "ParameterSave.h"
#include "PipelineStep.h"
#include "SharedOptions.h"
#include "ToolCommon.h"

#include "shardc/Driver/SimulateWorkflow.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string>
    reportJson("report-json", cl::desc("Write the simulation report here"),
               cl::value_desc("path"), cl::init(""),
               cl::sub(shardc::simulateCommand));
static cl::opt<std::string>
    tracePath("trace", cl::desc("Write a Chrome trace (Perfetto) here"),
              cl::value_desc("path"), cl::init(""),
              cl::sub(shardc::simulateCommand));
static cl::opt<std::string>
    spmdPath("emit-spmd", cl::desc("Write the partitioned program here"),
             cl::value_desc("path"), cl::init(""),
             cl::sub(shardc::simulateCommand));
static cl::opt<std::string>
    simOutDir("out-dir", cl::desc("Write each global output as <name>.npy"),
              cl::init(""), cl::sub(shardc::simulateCommand));
static cl::opt<double> tolerance(
    "tolerance",
    cl::desc("Largest accepted max_rel_err per output (max |sim - ref| / "
             "max(max |ref|, 1% of the largest |ref| of all outputs))"),
    cl::init(1e-5), cl::sub(shardc::simulateCommand));
static cl::opt<int> testDropAllReduce(
    "test-drop-all-reduce",
    cl::desc("Testing only: remove the Nth all_reduce (from 0) of the "
             "partitioned program, a wrong plan the check must catch"),
    cl::Hidden, cl::init(-1), cl::sub(shardc::simulateCommand));
static cl::opt<bool> quiet("quiet", cl::desc("Print only the summary line"),
                           cl::init(false), cl::sub(shardc::simulateCommand));

/// The pipelined training step of docs/pipeline.md.
static int runPipelinedSimulation() {
  shardc::PipelineStepSettings pipeline;
  pipeline.reportJson = reportJson;
  pipeline.tracePath = tracePath;
  FailureOr<shardc::MachineModel> machine = shardc::getCommandMachine();
  if (failed(machine))
    return 1;
  pipeline.machine = std::move(*machine);
  if (tolerance.getNumOccurrences())
    pipeline.tolerance = tolerance;
  return runPipelineStep(pipeline);
}

int shardc::runSimulateCommand() {
  if (pipelineRequested())
    return runPipelinedSimulation();
  ToolSession session;
  func::FuncOp func;
  // Differentiated before the reference is cloned: both runs execute the
  // backward program (or the training step).
  OwningOpRef<ModuleOp> module = loadGlobalProgram(session, "simulate", &func);
  if (!module)
    return 1;
  FailureOr<SmallVector<Tensor>> inputs = gatherInputs(func);
  if (failed(inputs))
    return 1;
  SimulateWorkflowOptions options;
  FailureOr<std::optional<ShardcAutoShardOptions>> autoShard =
      getAutoShardOptions();
  if (failed(autoShard))
    return 1;
  options.autoShard = *autoShard;
  // The machine the time model prices on: --machine and the old flags, the
  // same the partitioner chose its layouts with.
  FailureOr<MachineModel> machine = getCommandMachine();
  if (failed(machine))
    return 1;
  options.machine = std::move(*machine);
  options.configurePartition = priceOnCommandMachine;
  options.tolerance = tolerance;
  options.reportJson = reportJson;
  options.tracePath = tracePath;
  options.spmdPath = spmdPath;
  options.outDir = simOutDir;
  options.quiet = quiet;
  options.differentiated = isAutodiffRequested();
  options.dropAllReduce = testDropAllReduce;
  options.afterRun = saveParametersIfAsked;
  FailureOr<bool> ok =
      runSimulateWorkflow(std::move(module), *inputs, options, llvm::outs());
  return succeeded(ok) && *ok ? 0 : 1;
}

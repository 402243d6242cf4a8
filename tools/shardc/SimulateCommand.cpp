//===- SimulateCommand.cpp - `shardc simulate` ----------------------------===//
//
// Propagate, partition, run the SPMD program on a simulated mesh, and check
// it against the reference interpreter on the unsharded program with the
// same inputs. This is how every partitioning result is proven correct.
//
//===----------------------------------------------------------------------===//

#include "PipelineStep.h"
#include "ParameterSave.h"
#include "shardc/Driver/ReferenceCheck.h"
#include "SharedOptions.h"
#include "ToolCommon.h"

#include "shardc/Dialect/MeshLookup.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Runtime/ShardedExecution.h"
#include "shardc/Support/Npy.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

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
/// The machine the time model prices on: --machine and the old flags
/// (ToolCommon), the same the partitioner chose its layouts with.
static FailureOr<shardc::MachineModel> getSimulationMachine() {
  return shardc::getCommandMachine();
}

static cl::opt<int> testDropAllReduce(
    "test-drop-all-reduce",
    cl::desc("Testing only: remove the Nth all_reduce (from 0) of the "
             "partitioned program, a wrong plan the check must catch"),
    cl::Hidden, cl::init(-1), cl::sub(shardc::simulateCommand));
static cl::opt<bool> quiet("quiet", cl::desc("Print only the summary line"),
                           cl::init(false), cl::sub(shardc::simulateCommand));


int shardc::runSimulateCommand() {
  if (pipelineRequested()) { // docs/pipeline.md: a pipelined training step
    PipelineStepSettings pipeline;
    pipeline.reportJson = reportJson;
    pipeline.tracePath = tracePath;
    FailureOr<shardc::MachineModel> machine = getSimulationMachine();
    if (failed(machine))
      return 1;
    pipeline.machine = std::move(*machine);
    if (tolerance.getNumOccurrences())
      pipeline.tolerance = tolerance;
    return runPipelineStep(pipeline);
  }
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

  // The reference: the unsharded program on the same inputs.
  OwningOpRef<ModuleOp> reference = module->clone();
  FailureOr<SmallVector<Tensor>> expected =
      interpretFunction(getEntryFunction(*reference), *inputs);
  if (failed(expected))
    return 1;

  // Named from the global program: after partitioning, a returned value may
  // be a collective's result, which carries no user name.
  std::vector<std::string> names = getResultNames(func);
  warnAboutNonFiniteOutputs(getEntryFunction(*reference), *inputs, *expected,
                            names);

  FailureOr<std::optional<ShardcAutoShardOptions>> autoShard =
      getAutoShardOptions();
  if (failed(autoShard))
    return 1;
  PassManager pm(&session.getContext(), ModuleOp::getOperationName());
  buildPartitionPipeline(pm, /*explain=*/false,
                         *autoShard ? &**autoShard : nullptr);
  if (failed(priceOnCommandMachine(pm)))
    return 1;
  if (failed(pm.run(*module)))
    return 1;
  func = getEntryFunction(*module);
  if (testDropAllReduce >= 0) {
    // Each device then keeps its partial sum: the result of every device
    // is wrong, and the comparison below must say which output.
    auto allReduces = llvm::to_vector(func.getOps<AllReduceOp>());
    if (testDropAllReduce >= static_cast<int>(allReduces.size())) {
      llvm::errs() << "shardc: error: --test-drop-all-reduce="
                   << testDropAllReduce << ", but the program has "
                   << allReduces.size() << " all_reduce ops\n";
      return 1;
    }
    AllReduceOp dropped = allReduces[testDropAllReduce];
    dropped.getResult().replaceAllUsesWith(dropped.getInput());
    dropped.erase();
  }
  size_t numMeshes;
  MeshOp mesh = getOnlyMesh(*module, &numMeshes);
  if (!mesh) {
    llvm::errs() << "shardc: error: simulate needs exactly one mesh, the "
                    "model has "
                 << numMeshes << "\n";
    return 1;
  }
  if (!spmdPath.empty() &&
      failed(writeText(spmdPath, [&](raw_ostream &os) { module->print(os); })))
    return 1;

  SimulationOptions options;
  FailureOr<MachineModel> machine = getSimulationMachine();
  if (failed(machine))
    return 1;
  options.machine = std::move(*machine);
  // A training step's parameters and optimizer state are kept by their
  // owner for the whole step (and the next), not freed after last use.
  options.argumentsStayLive =
      llvm::any_of(llvm::seq(func.getNumArguments()), [&](unsigned i) {
        return func.getArgAttr(i, ShardcDialect::getParamAttrName()) ||
               func.getArgAttr(i, ShardcDialect::getOptimizerStateAttrName());
      });
  FailureOr<ShardedRun> run = runOnSimulatedMesh(func, mesh, *inputs, options);
  if (failed(run))
    return 1;
  const SimulationReport &report = run->report;
  int64_t numDevices = report.numDevices;

  double worstAbs = 0, worstRel = 0;
  llvm::json::Array outputsJson;
  bool ok = true;
  double scale = familyScale(*expected);
  FailureOr<SmallVector<double>> tolerances =
      roundingTolerances(getEntryFunction(*reference), *inputs, *expected,
                         run->outputs, scale, tolerance);
  if (failed(tolerances))
    return 1;
  SmallVector<double> errors;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    const Tensor &global = run->outputs[i];
    auto [rel, abs] = checkAgainstReference(global, (*expected)[i], scale,
                                            (*tolerances)[i],
                                            "output '" + names[i] + "'",
                                            "the unsharded program", ok);
    errors.push_back(rel);
    worstAbs = std::max(worstAbs, abs);
    worstRel = std::max(worstRel, rel);
    outputsJson.push_back(llvm::json::Object{
        {"name", names[i]}, {"max_abs_err", abs}, {"max_rel_err", rel}});
    if (!simOutDir.empty()) {
      (void)llvm::sys::fs::create_directories(simOutDir.getValue());
      SmallString<128> path(simOutDir.getValue());
      llvm::sys::path::append(path, names[i] + ".npy");
      if (llvm::Error err = writeNpy(path, global)) {
        llvm::errs() << "shardc: error: " << llvm::toString(std::move(err))
                     << "\n";
        return 1;
      }
    }
  }

  if (!quiet) {
    for (const CollectiveRecord &c : report.collectives) {
      llvm::outs() << c.kind << " " << c.value << " axes=[";
      llvm::interleaveComma(c.axes, llvm::outs());
      llvm::outs() << "]";
      if (c.dim >= 0)
        llvm::outs() << (c.concatDim >= 0 ? " split_dim=" : " dim=") << c.dim;
      if (c.concatDim >= 0)
        llvm::outs() << " concat_dim=" << c.concatDim;
      llvm::outs() << " bytes/device=" << c.bytesPerDevice << "\n";
    }
  }
  int64_t peak = 0, comm = 0;
  for (int64_t d = 0; d < numDevices; ++d) {
    peak = std::max(peak, report.peakBytesPerDevice[d]);
    comm = std::max(comm, report.commBytesPerDevice[d]);
  }
  // Only the backward pass or a training step (made here, or given: it
  // returns gradients or keeps optimizer state) trains: a forward
  // program's parameters are just inputs.
  const TrainingMemory &training = report.trainingBytesPerDevice.front();
  if (training.total() > 0 &&
      (isAutodiffRequested() || training.gradients + training.optimizerState))
    llvm::outs() << "training memory/device (device 0): parameters "
                 << training.parameters << " B, gradients "
                 << training.gradients << " B, optimizer state "
                 << training.optimizerState << " B = " << training.total()
                 << " B\n";
  printRoundingAmplified(llvm::outs(), "the program", "the unsharded program",
                         "its inputs", names, errors, *tolerances, tolerance,
                         *expected,
                         workingHalfType(getEntryFunction(*reference)));
  llvm::outs() << llvm::format(
      "devices=%lld collectives=%zu comm_bytes/device=%lld "
      "peak_bytes/device=%lld est_time=%.3gs max_abs_err=%.3g "
      "max_rel_err=%.3g %s\n",
      (long long)numDevices, report.collectives.size(), (long long)comm,
      (long long)peak, report.estimatedSeconds, worstAbs, worstRel,
      ok ? "OK" : "MISMATCH");
  if (failed(saveParametersIfAsked(getEntryFunction(*reference), *inputs,
                                   run->outputs)))
    return 1;

  if (!reportJson.empty()) {
    llvm::json::Array collectives;
    for (const CollectiveRecord &c : report.collectives) {
      llvm::json::Array axes;
      for (const std::string &a : c.axes)
        axes.push_back(a);
      llvm::json::Object o{{"kind", c.kind},
                           {"axes", std::move(axes)},
                           {"dim", c.dim},
                           {"bytes_per_device", c.bytesPerDevice},
                           {"group_size", c.groupSize},
                           {"value", c.value},
                           {"est_time_s", c.seconds}};
      if (c.concatDim >= 0)
        o["concat_dim"] = c.concatDim;
      collectives.push_back(std::move(o));
    }
    llvm::json::Array peakJson, commJson, flopsJson, trainingJson;
    for (int64_t d = 0; d < numDevices; ++d) {
      const TrainingMemory &m = report.trainingBytesPerDevice[d];
      trainingJson.push_back(
          llvm::json::Object{{"parameters", m.parameters},
                             {"gradients", m.gradients},
                             {"optimizer_state", m.optimizerState}});
      peakJson.push_back(report.peakBytesPerDevice[d]);
      commJson.push_back(report.commBytesPerDevice[d]);
      flopsJson.push_back(report.flopsPerDevice[d]);
    }
    llvm::json::Object root{
        {"max_abs_err", worstAbs},
        {"max_rel_err", worstRel},
        {"collectives", std::move(collectives)},
        {"devices", numDevices},
        {"peak_bytes_per_device", std::move(peakJson)},
        {"training_bytes_per_device", std::move(trainingJson)},
        {"comm_bytes_per_device", std::move(commJson)},
        {"flops_per_device", std::move(flopsJson)},
        {"est_time_s", report.estimatedSeconds},
        {"outputs", std::move(outputsJson)},
        {"machine",
         llvm::json::Object{
             {"link_latency_s", options.machine.linkLatencySeconds},
             {"link_bytes_per_s", options.machine.linkBytesPerSecond},
             {"flops_per_s", options.machine.flopsPerSecond}}}};
    if (failed(writeText(reportJson, [&](raw_ostream &os) {
          os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root)))
             << "\n";
        })))
      return 1;
  }
  if (!tracePath.empty() && failed(writeText(tracePath, [&](raw_ostream &os) {
        writeChromeTrace(report, os);
      })))
    return 1;
  return ok ? 0 : 1;
}

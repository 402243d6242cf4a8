//===- SimulateWorkflow.cpp - a sharded program on a simulated mesh -------===//
//
// Reference run, partitioning, the run on the simulated mesh, the check of
// every output, and the reports (shardc/Driver/SimulateWorkflow.h).
//
//===----------------------------------------------------------------------===//

#include "shardc/Driver/SimulateWorkflow.h"

#include "shardc/Driver/OutputFile.h"
#include "shardc/Driver/ReferenceCheck.h"

#include "shardc/Dialect/FunctionInterface.h"
#include "shardc/Dialect/MeshLookup.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Runtime/ShardedExecution.h"
#include "shardc/Support/Npy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace shardc;

namespace {
/// The sharded run's outputs against the reference's.
struct OutputCheck {
  bool ok = true;
  double worstAbs = 0, worstRel = 0;
  SmallVector<double> errors, tolerances;
  llvm::json::Array outputsJson;
};
} // namespace

/// Partitions `module` (propagated or auto-sharded first), then drops the
/// all_reduce a test asked to drop.
static LogicalResult partition(ModuleOp module,
                               const SimulateWorkflowOptions &options) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  buildPartitionPipeline(pm, /*explain=*/false,
                         options.autoShard ? &*options.autoShard : nullptr);
  if (options.configurePartition && failed(options.configurePartition(pm)))
    return failure();
  if (failed(pm.run(module)))
    return failure();
  if (options.dropAllReduce < 0)
    return success();
  // Each device then keeps its partial sum: the result of every device is
  // wrong, and the check must say which output.
  auto allReduces =
      llvm::to_vector(getEntryFunction(module).getOps<AllReduceOp>());
  if (options.dropAllReduce >= static_cast<int>(allReduces.size())) {
    llvm::errs() << "shardc: error: --test-drop-all-reduce="
                 << options.dropAllReduce << ", but the program has "
                 << allReduces.size() << " all_reduce ops\n";
    return failure();
  }
  AllReduceOp dropped = allReduces[options.dropAllReduce];
  dropped.getResult().replaceAllUsesWith(dropped.getInput());
  dropped.erase();
  return success();
}

/// Every output of the run against the reference's, written to
/// `options.outDir` when asked.
static FailureOr<OutputCheck>
checkOutputs(func::FuncOp reference, ArrayRef<Tensor> inputs,
             ArrayRef<Tensor> expected, ArrayRef<Tensor> outputs,
             ArrayRef<std::string> names,
             const SimulateWorkflowOptions &options) {
  OutputCheck check;
  double scale = familyScale(expected);
  FailureOr<SmallVector<double>> tolerances = roundingTolerances(
      reference, inputs, expected, outputs, scale, options.tolerance);
  if (failed(tolerances))
    return failure();
  check.tolerances = std::move(*tolerances);
  for (auto [i, global] : llvm::enumerate(outputs)) {
    auto [rel, abs] = checkAgainstReference(
        global, expected[i], scale, check.tolerances[i],
        "output '" + names[i] + "'", "the unsharded program", check.ok);
    check.errors.push_back(rel);
    check.worstAbs = std::max(check.worstAbs, abs);
    check.worstRel = std::max(check.worstRel, rel);
    check.outputsJson.push_back(llvm::json::Object{
        {"name", names[i]}, {"max_abs_err", abs}, {"max_rel_err", rel}});
    if (options.outDir.empty())
      continue;
    (void)llvm::sys::fs::create_directories(options.outDir);
    SmallString<128> path(options.outDir);
    llvm::sys::path::append(path, names[i] + ".npy");
    if (llvm::Error err = writeNpy(path, global)) {
      llvm::errs() << "shardc: error: " << llvm::toString(std::move(err))
                   << "\n";
      return failure();
    }
  }
  return check;
}

/// One line per collective the run executed.
static void printCollectives(const SimulationReport &report,
                             llvm::raw_ostream &os) {
  for (const CollectiveRecord &c : report.collectives) {
    os << c.kind << " " << c.value << " axes=[";
    llvm::interleaveComma(c.axes, os);
    os << "]";
    if (c.dim >= 0)
      os << (c.concatDim >= 0 ? " split_dim=" : " dim=") << c.dim;
    if (c.concatDim >= 0)
      os << " concat_dim=" << c.concatDim;
    os << " bytes/device=" << c.bytesPerDevice << "\n";
  }
}

/// The training memory line, the outputs within amplified rounding, and
/// the summary line.
static void printSummary(const SimulationReport &report,
                         const OutputCheck &check, func::FuncOp reference,
                         ArrayRef<Tensor> expected, ArrayRef<std::string> names,
                         const SimulateWorkflowOptions &options,
                         llvm::raw_ostream &os) {
  int64_t peak = 0, comm = 0;
  for (int64_t d = 0; d < report.numDevices; ++d) {
    peak = std::max(peak, report.peakBytesPerDevice[d]);
    comm = std::max(comm, report.commBytesPerDevice[d]);
  }
  // Only the backward pass or a training step (made on request, or given:
  // it returns gradients or keeps optimizer state) trains: a forward
  // program's parameters are just inputs.
  const TrainingMemory &training = report.trainingBytesPerDevice.front();
  if (training.total() > 0 &&
      (options.differentiated || training.gradients + training.optimizerState))
    os << "training memory/device (device 0): parameters "
       << training.parameters << " B, gradients " << training.gradients
       << " B, optimizer state " << training.optimizerState
       << " B = " << training.total() << " B\n";
  printRoundingAmplified(os, "the program", "the unsharded program",
                         "its inputs or its sums", names, check.errors,
                         check.tolerances, options.tolerance, expected,
                         workingHalfType(reference));
  os << llvm::format("devices=%lld collectives=%zu comm_bytes/device=%lld "
                     "peak_bytes/device=%lld est_time=%.3gs max_abs_err=%.3g "
                     "max_rel_err=%.3g %s\n",
                     (long long)report.numDevices, report.collectives.size(),
                     (long long)comm, (long long)peak, report.estimatedSeconds,
                     check.worstAbs, check.worstRel,
                     check.ok ? "OK" : "MISMATCH");
}

/// The report docs/cli.md lists the keys of.
static llvm::json::Object reportToJson(const SimulationReport &report,
                                       OutputCheck &check,
                                       const MachineModel &machine) {
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
  for (int64_t d = 0; d < report.numDevices; ++d) {
    const TrainingMemory &m = report.trainingBytesPerDevice[d];
    trainingJson.push_back(
        llvm::json::Object{{"parameters", m.parameters},
                           {"gradients", m.gradients},
                           {"optimizer_state", m.optimizerState}});
    peakJson.push_back(report.peakBytesPerDevice[d]);
    commJson.push_back(report.commBytesPerDevice[d]);
    flopsJson.push_back(report.flopsPerDevice[d]);
  }
  return llvm::json::Object{
      {"max_abs_err", check.worstAbs},
      {"max_rel_err", check.worstRel},
      {"collectives", std::move(collectives)},
      {"devices", report.numDevices},
      {"peak_bytes_per_device", std::move(peakJson)},
      {"training_bytes_per_device", std::move(trainingJson)},
      {"comm_bytes_per_device", std::move(commJson)},
      {"flops_per_device", std::move(flopsJson)},
      {"est_time_s", report.estimatedSeconds},
      {"step_time_s", report.stepSeconds},
      {"compute_s", report.computeSeconds},
      {"communication_s", report.communicationSeconds},
      {"exposed_communication_s", report.exposedCommunicationSeconds},
      {"outputs", std::move(check.outputsJson)},
      {"machine",
       llvm::json::Object{{"link_latency_s", machine.linkLatencySeconds},
                          {"link_bytes_per_s", machine.linkBytesPerSecond},
                          {"flops_per_s", machine.flopsPerSecond}}}};
}

/// Partitions `module` and runs it on the simulated mesh.
static FailureOr<ShardedRun> simulate(ModuleOp module, ArrayRef<Tensor> inputs,
                                      const SimulateWorkflowOptions &options) {
  if (failed(partition(module, options)))
    return failure();
  size_t numMeshes;
  MeshOp mesh = getOnlyMesh(module, &numMeshes);
  if (!mesh) {
    llvm::errs() << "shardc: error: simulate needs exactly one mesh, the "
                    "model has "
                 << numMeshes << "\n";
    return failure();
  }
  if (!options.spmdPath.empty() &&
      failed(writeText(options.spmdPath,
                       [&](raw_ostream &os) { module->print(os); })))
    return failure();
  func::FuncOp func = getEntryFunction(module);
  SimulationOptions simulation;
  simulation.machine = options.machine;
  // A training step's parameters and optimizer state are kept by their
  // owner for the whole step (and the next), not freed after last use.
  simulation.argumentsStayLive =
      llvm::any_of(llvm::seq(func.getNumArguments()), [&](unsigned i) {
        return func.getArgAttr(i, ShardcDialect::getParamAttrName()) ||
               func.getArgAttr(i, ShardcDialect::getOptimizerStateAttrName());
      });
  return runOnSimulatedMesh(func, mesh, inputs, simulation);
}

FailureOr<bool> shardc::runSimulateWorkflow(
    OwningOpRef<ModuleOp> module, ArrayRef<Tensor> inputs,
    const SimulateWorkflowOptions &options, llvm::raw_ostream &os) {
  // The reference: the unsharded program on the same inputs.
  OwningOpRef<ModuleOp> reference = module->clone();
  func::FuncOp referenceFunc = getEntryFunction(*reference);
  FailureOr<SmallVector<Tensor>> expected =
      interpretFunction(referenceFunc, inputs);
  if (failed(expected))
    return failure();
  // Named from the global program: after partitioning, a returned value may
  // be a collective's result, which carries no user name.
  std::vector<std::string> names = getResultNames(referenceFunc);
  warnAboutNonFiniteOutputs(referenceFunc, inputs, *expected, names);

  FailureOr<ShardedRun> run = simulate(*module, inputs, options);
  if (failed(run))
    return failure();
  FailureOr<OutputCheck> check = checkOutputs(referenceFunc, inputs, *expected,
                                              run->outputs, names, options);
  if (failed(check))
    return failure();
  const SimulationReport &report = run->report;
  if (!options.quiet)
    printCollectives(report, os);
  printSummary(report, *check, referenceFunc, *expected, names, options, os);
  if (options.afterRun &&
      failed(options.afterRun(referenceFunc, inputs, run->outputs)))
    return failure();
  if (!options.reportJson.empty() &&
      failed(writeText(options.reportJson, [&](raw_ostream &out) {
        out << llvm::formatv("{0:2}", llvm::json::Value(reportToJson(
                                          report, *check, options.machine)))
            << "\n";
      })))
    return failure();
  if (!options.tracePath.empty() &&
      failed(writeText(options.tracePath, [&](raw_ostream &out) {
        writeChromeTrace(report, out);
      })))
    return failure();
  return check->ok;
}

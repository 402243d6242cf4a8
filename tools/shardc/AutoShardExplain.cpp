//===- AutoShardExplain.cpp - explain --auto-shard: plan vs layouts -------===//
//
// The totals of the chosen plan against the standard hand-written layouts
// of the same model, each partitioned and run on the simulated mesh, so
// that all are priced by the one cost model `simulate` reports
// (docs/auto-sharding.md, "explain --auto-shard").
//
//===----------------------------------------------------------------------===//

#include "AutoShardExplain.h"
#include "ToolCommon.h"

#include "shardc/Dialect/FunctionInterface.h"
#include "shardc/Dialect/MeshLookup.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Runtime/ShardedExecution.h"
#include "shardc/Transforms/Pipelines.h"
#include "shardc/Transforms/StandardLayouts.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace shardc;

namespace {
/// The simulator's totals of `module` (annotated, not yet partitioned).
FailureOr<SimulationReport> simulateTotals(ModuleOp module,
                                           ArrayRef<Tensor> inputs) {
  // On the machine of the command line, as `simulate` prices: the plan
  // was chosen on it, so the layouts it is compared with are priced on it.
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  buildPartitionPipeline(pm);
  FailureOr<MachineModel> machine = getCommandMachine();
  if (failed(machine) || failed(priceOnCommandMachine(pm)) ||
      failed(pm.run(module)))
    return failure();
  func::FuncOp func = getEntryFunction(module);
  MeshOp mesh = getOnlyMesh(module);
  if (!func || !mesh)
    return failure();
  SimulationOptions options;
  options.machine = std::move(*machine);
  options.argumentsStayLive =
      llvm::any_of(llvm::seq(func.getNumArguments()), [&](unsigned i) {
        return func.getArgAttr(i, ShardcDialect::getParamAttrName()) ||
               func.getArgAttr(i, ShardcDialect::getOptimizerStateAttrName());
      });
  FailureOr<ShardedRun> run = runOnSimulatedMesh(func, mesh, inputs, options);
  if (failed(run))
    return failure();
  return std::move(run->report);
}
/// Zeros for every argument of `func` (the totals do not depend on the
/// values); none when an argument has no executable type.
std::optional<SmallVector<Tensor>> zeroInputs(func::FuncOp func) {
  SmallVector<Tensor> inputs;
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    std::optional<DType> dtype =
        type ? executableDType(type.getElementType()) : std::nullopt;
    if (!dtype)
      return std::nullopt;
    llvm::Expected<Tensor> zeros = Tensor::allocate(type.getShape(), *dtype);
    if (!zeros) {
      llvm::consumeError(zeros.takeError());
      return std::nullopt;
    }
    inputs.push_back(std::move(*zeros));
  }
  return inputs;
}

/// Whether any op, argument or result of `func` carries a sharding.
bool hasShardingAnnotations(func::FuncOp func) {
  StringRef sharding = ShardcDialect::getShardingAttrName();
  bool annotated = false;
  func.walk([&](Operation *op) { annotated |= bool(op->getAttr(sharding)); });
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    annotated |= bool(func.getArgAttr(i, sharding));
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    annotated |= bool(func.getResultAttr(i, sharding));
  return annotated;
}

/// One line of the totals: `module`'s simulated time, largest
/// communication and peak bytes per device on `inputs`.
void printLayoutTotals(StringRef name, ModuleOp module, ArrayRef<Tensor> inputs,
                       std::optional<int64_t> budget) {
  // A layout the partitioner cannot make is reported, not an error of
  // explain.
  std::string errors;
  auto simulateQuietly = [&] {
    ScopedDiagnosticHandler quiet(module.getContext(), [&](Diagnostic &d) {
      if (d.getSeverity() == DiagnosticSeverity::Error && errors.empty())
        errors = d.str();
      return success();
    });
    return simulateTotals(module, inputs);
  };
  FailureOr<SimulationReport> report = simulateQuietly();
  llvm::outs() << llvm::format("  %-16s", (name + ":").str().c_str());
  if (failed(report)) {
    llvm::outs() << "cannot be laid out (" << errors << ")\n";
    return;
  }
  int64_t comm = 0, peak = 0;
  for (int64_t b : report->commBytesPerDevice)
    comm = std::max(comm, b);
  for (int64_t b : report->peakBytesPerDevice)
    peak = std::max(peak, b);
  llvm::outs() << llvm::format("est_time=%.3gs comm_bytes=%lld "
                               "peak_bytes=%lld",
                               report->estimatedSeconds, (long long)comm,
                               (long long)peak)
               << (budget && peak > *budget ? " (over budget)" : "") << "\n";
}

} // namespace

void shardc::printAutoShardTotals(ModuleOp original, ModuleOp planned,
                                  std::optional<int64_t> budget) {
  func::FuncOp func = getEntryFunction(original);
  MeshOp mesh = getOnlyMesh(original);
  if (!func || !mesh)
    return;
  std::optional<SmallVector<Tensor>> inputs = zeroInputs(func);
  if (!inputs)
    return;
  bool annotated = hasShardingAnnotations(func);
  llvm::outs() << "auto-shard plan (with the model's annotations) vs "
                  "hand-written layouts of the model (simulated: est_time, "
                  "comm and peak bytes per device):\n";
  OwningOpRef<ModuleOp> plan = planned.clone();
  printLayoutTotals("auto-shard", *plan, *inputs, budget);
  if (annotated) {
    OwningOpRef<ModuleOp> copy = original.clone();
    printLayoutTotals("annotated", *copy, *inputs, budget);
  }
  for (const NamedStandardLayout &layout : getStandardLayouts()) {
    OwningOpRef<ModuleOp> copy = original.clone();
    // A layout that does not apply to the model is left out.
    if (applyStandardLayout(getEntryFunction(*copy), getOnlyMesh(*copy),
                            layout.layout))
      printLayoutTotals(layout.name, *copy, *inputs, budget);
  }
}

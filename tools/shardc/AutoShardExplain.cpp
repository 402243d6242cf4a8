//===- AutoShardExplain.cpp - explain --auto-shard: plan vs layouts -------===//
//
// The totals of the chosen plan against the standard hand-written layouts
// of the same model, each partitioned and run on the simulated mesh, so
// that all are priced by the one cost model `simulate` reports
// (docs/auto-sharding.md, "explain --auto-shard").
//
//===----------------------------------------------------------------------===//

#include "AutoShardExplain.h"

#include "shardc/Dialect/FunctionInterface.h"
#include "shardc/Dialect/MeshLookup.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/TensorOpBuilders.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Runtime/ShardedExecution.h"
#include "shardc/Transforms/Pipelines.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace shardc;

namespace {
enum class Layout { Annotated, Replicated, DataParallel, Fsdp };

/// Drops every user sharding but the sharding_constraints (the program's
/// own reshards).
void stripAnnotations(func::FuncOp func) {
  StringRef key = ShardcDialect::getShardingAttrName();
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    func.removeArgAttr(i, key);
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    func.removeResultAttr(i, StringAttr::get(func.getContext(), key));
  func.walk([&](Operation *op) {
    if (!getConstrainedSharding(op))
      op->removeAttr(key);
  });
}

/// Lays `func` out as `layout`: data parallel splits every input that is
/// not a weight by rows over the data axis ("data", else the mesh's first);
/// FSDP the weights too. A weight is a `shardc.param` argument or, in a
/// model marking none, every argument but the first.
void applyLayout(func::FuncOp func, MeshOp mesh, Layout layout) {
  if (layout == Layout::Annotated)
    return;
  stripAnnotations(func);
  if (layout == Layout::Replicated)
    return;
  SmallVector<StringRef> axes = mesh.getAxisNameList();
  StringRef axis = llvm::is_contained(axes, "data") ? "data" : axes.front();
  int64_t size = mesh.getAxisSize(axis);
  bool anyParam = false;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    anyParam |= bool(func.getArgAttr(i, ShardcDialect::getParamAttrName()));
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
    if (!type || type.getRank() == 0 || type.getDimSize(0) % size != 0)
      continue;
    bool weight = anyParam
                      ? bool(func.getArgAttr(i, ShardcDialect::getParamAttrName()))
                      : i > 0;
    if (weight && layout != Layout::Fsdp)
      continue;
    SmallVector<SmallVector<StringRef>> dims(type.getRank());
    dims[0].push_back(axis);
    func.setArgAttr(i, ShardcDialect::getShardingAttrName(),
                    ShardingAttr::get(func.getContext(),
                                      FlatSymbolRefAttr::get(
                                          mesh.getSymNameAttr()),
                                      dims, {}));
  }
}

/// The simulator's totals of `module` (annotated, not yet partitioned).
FailureOr<SimulationReport> simulateTotals(ModuleOp module,
                                           ArrayRef<Tensor> inputs) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  buildPartitionPipeline(pm);
  if (failed(pm.run(module)))
    return failure();
  func::FuncOp func = getEntryFunction(module);
  MeshOp mesh = getOnlyMesh(module);
  if (!func || !mesh)
    return failure();
  SimulationOptions options;
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
} // namespace

void shardc::printAutoShardTotals(ModuleOp original, ModuleOp planned,
                                  std::optional<int64_t> budget) {
  func::FuncOp func = getEntryFunction(original);
  MeshOp mesh = getOnlyMesh(original);
  if (!func || !mesh)
    return;
  // Zeros: the totals do not depend on the values.
  SmallVector<Tensor> inputs;
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    std::optional<DType> dtype =
        type ? executableDType(type.getElementType()) : std::nullopt;
    if (!dtype)
      return;
    llvm::Expected<Tensor> zeros = Tensor::allocate(type.getShape(), *dtype);
    if (!zeros) {
      llvm::consumeError(zeros.takeError());
      return;
    }
    inputs.push_back(std::move(*zeros));
  }
  bool annotated = false;
  func.walk([&](Operation *op) {
    annotated |= bool(op->getAttr(ShardcDialect::getShardingAttrName()));
  });
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    annotated |= bool(func.getArgAttr(i, ShardcDialect::getShardingAttrName()));
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    annotated |=
        bool(func.getResultAttr(i, ShardcDialect::getShardingAttrName()));

  llvm::outs() << "auto-shard plan (with the model's annotations) vs "
                  "hand-written layouts of the model (simulated: est_time, "
                  "comm and peak bytes per device):\n";
  auto print = [&](StringRef name, ModuleOp module) {
    // A layout the partitioner cannot make is reported, not an error of
    // explain.
    std::string errors;
    FailureOr<SimulationReport> report = failure();
    {
      ScopedDiagnosticHandler quiet(module.getContext(), [&](Diagnostic &d) {
        if (d.getSeverity() == DiagnosticSeverity::Error && errors.empty())
          errors = d.str();
        return success();
      });
      report = simulateTotals(module, inputs);
    }
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
  };
  OwningOpRef<ModuleOp> plan = planned.clone();
  print("auto-shard", *plan);
  std::pair<StringRef, Layout> layouts[] = {
      {"annotated", Layout::Annotated},
      {"replicated", Layout::Replicated},
      {"data parallel", Layout::DataParallel},
      {"fsdp", Layout::Fsdp}};
  for (auto [name, layout] : layouts) {
    if (layout == Layout::Annotated && !annotated)
      continue;
    OwningOpRef<ModuleOp> copy = original.clone();
    applyLayout(getEntryFunction(*copy), getOnlyMesh(*copy), layout);
    print(name, *copy);
  }
}

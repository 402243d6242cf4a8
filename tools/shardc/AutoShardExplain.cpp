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
#include "shardc/Dialect/ShardingRule.h"
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
enum class Layout { Annotated, Replicated, DataParallel, Fsdp, Megatron, TwoD };

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

/// Whether argument `i` is a weight: a `shardc.param` argument or, in a
/// model marking none, every argument but the first.
bool isWeight(func::FuncOp func, unsigned i) {
  bool anyParam = false;
  for (unsigned a = 0; a < func.getNumArguments(); ++a)
    anyParam |= bool(func.getArgAttr(a, ShardcDialect::getParamAttrName()));
  return anyParam ? bool(func.getArgAttr(i, ShardcDialect::getParamAttrName()))
                  : i > 0;
}

/// Annotates argument `i` split on dim `dim` over `axis`.
void splitArgument(func::FuncOp func, MeshOp mesh, unsigned i, int64_t dim,
                   StringRef axis) {
  auto type = cast<RankedTensorType>(func.getArgument(i).getType());
  SmallVector<SmallVector<StringRef>> dims(type.getRank());
  dims[dim].push_back(axis);
  func.setArgAttr(
      i, ShardcDialect::getShardingAttrName(),
      ShardingAttr::get(func.getContext(),
                        FlatSymbolRefAttr::get(mesh.getSymNameAttr()), dims,
                        {}));
}

/// Megatron's weights over `axis`: the weights that ops read as
/// `activation x weight` (every weight dim a single factor, one of them
/// summed away, the row, and one kept in the result, the column) are split
/// by columns where the activation has passed an even number of such ops
/// since the inputs, and by rows where odd: q, k and v by heads, the
/// attention output projection by heads (rows), an MLP's up-projection by
/// columns and its down-projection by rows. A weight read so twice is split
/// for its first read; one whose dim the axis does not divide is left to
/// propagation. Returns how many were split.
int splitMatmulWeights(func::FuncOp func, MeshOp mesh, StringRef axis) {
  int64_t size = mesh.getAxisSize(axis);
  llvm::SmallDenseSet<unsigned> seen;
  // How many weighted matmuls lie on the longest path to each value.
  llvm::DenseMap<Value, int64_t> depth;
  int split = 0;
  func.walk([&](Operation *op) {
    int64_t in = 0;
    for (Value v : op->getOperands())
      in = std::max(in, depth.lookup(v));
    for (Value r : op->getResults())
      depth[r] = in;
    auto ruled = dyn_cast<ShardingRuleOpInterface>(op);
    if (!ruled || op->getNumOperands() != 2 || op->getNumResults() != 1)
      return;
    ShardingRule rule = ruled.getShardingRule();
    for (unsigned w = 0; w < 2; ++w) {
      auto arg = dyn_cast<BlockArgument>(op->getOperand(w));
      auto other = dyn_cast<BlockArgument>(op->getOperand(1 - w));
      // Both floats: an embedding's gather reads ids, not an activation.
      auto isFloat = [](Value v) {
        return isa<FloatType>(getElementTypeOrSelf(v.getType()));
      };
      if (!arg || (other && isWeight(func, other.getArgNumber())) ||
          !isWeight(func, arg.getArgNumber()) || !isFloat(op->getOperand(0)) ||
          !isFloat(op->getOperand(1)))
        continue;
      ArrayRef<DimFactors> dims = rule.getOperand(w);
      int64_t row = -1, column = -1;
      for (auto [d, factors] : llvm::enumerate(dims)) {
        if (factors.size() != 1) {
          row = column = -1;
          break;
        }
        const Factor &f = rule.getFactor(factors[0]);
        bool inResult = llvm::any_of(rule.getResult(0), [&](auto &r) {
          return llvm::is_contained(r, factors[0]);
        });
        if (f.kind == FactorKind::Reduction && row < 0)
          row = d;
        if (f.kind == FactorKind::Parallel && inResult && column < 0)
          column = d;
      }
      if (row < 0 || column < 0)
        continue;
      int64_t level = depth.lookup(op->getOperand(1 - w));
      depth[op->getResult(0)] = level + 1;
      if (!seen.insert(arg.getArgNumber()).second)
        continue;
      int64_t dim = level % 2 == 0 ? column : row;
      auto type = cast<RankedTensorType>(arg.getType());
      if (type.getDimSize(dim) % size != 0)
        continue;
      splitArgument(func, mesh, arg.getArgNumber(), dim, axis);
      ++split;
    }
  });
  return split;
}

/// Lays `func` out as `layout`: data parallel splits every input that is
/// not a weight by rows over the data axis ("data", else the mesh's first);
/// FSDP the weights too; Megatron splits the matmul weights by columns and
/// rows alternately over the model axis ("model", else the mesh's last
/// axis that is not the data axis; the only axis of a 1-D mesh); 2-D is
/// data parallel and Megatron on two axes. Returns false if the layout does
/// not apply (Megatron: no such weight; 2-D: a 1-D mesh).
bool applyLayout(func::FuncOp func, MeshOp mesh, Layout layout) {
  if (layout == Layout::Annotated)
    return true;
  stripAnnotations(func);
  if (layout == Layout::Replicated)
    return true;
  SmallVector<StringRef> axes = mesh.getAxisNameList();
  StringRef axis = llvm::is_contained(axes, "data") ? "data" : axes.front();
  if (layout == Layout::Megatron || layout == Layout::TwoD) {
    StringRef model = axes.back();
    if (llvm::is_contained(axes, "model"))
      model = "model";
    else if (model == axis && axes.size() > 1)
      model = axes[axes.size() - 2];
    if (layout == Layout::TwoD && model == axis)
      return false;
    if (splitMatmulWeights(func, mesh, model) == 0)
      return false;
    if (layout == Layout::Megatron)
      return true;
  }
  int64_t size = mesh.getAxisSize(axis);
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
    if (!type || type.getRank() == 0 || type.getDimSize(0) % size != 0)
      continue;
    if (isWeight(func, i) && layout != Layout::Fsdp)
      continue;
    splitArgument(func, mesh, i, 0, axis);
  }
  return true;
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
  std::pair<StringRef, Layout> layouts[] = {
      {"annotated", Layout::Annotated},
      {"replicated", Layout::Replicated},
      {"data parallel", Layout::DataParallel},
      {"fsdp", Layout::Fsdp},
      {"megatron", Layout::Megatron},
      {"2d", Layout::TwoD}};
  for (auto [name, layout] : layouts) {
    if (layout == Layout::Annotated && !annotated)
      continue;
    OwningOpRef<ModuleOp> copy = original.clone();
    // A layout that does not apply to the model is left out.
    if (applyLayout(getEntryFunction(*copy), getOnlyMesh(*copy), layout))
      printLayoutTotals(name, *copy, *inputs, budget);
  }
}

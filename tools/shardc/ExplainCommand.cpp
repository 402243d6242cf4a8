//===- ExplainCommand.cpp - `shardc explain` ------------------------------===//
//
// Why each value got its sharding, and what the partitioner will move: the
// questions users of sharding tools ask most. Prints the propagation
// remarks (one per value, one per resolved conflict), then every collective
// of the partitioned program with its bytes, and optionally which device
// holds which tile of a value.
//
//===----------------------------------------------------------------------===//

#include "AutoShardExplain.h"
#include "CollectiveExplain.h"
#include "PipelineStep.h"
#include "SharedOptions.h"
#include "ToolCommon.h"

#include "shardc/Analysis/ReshardPlanner.h"
#include "shardc/Dialect/MeshLookup.h"
#include "shardc/Dialect/ShardingVerifier.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Interpreter/Kernels.h"
#include "shardc/Transforms/AutoShard.h"
#include "shardc/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <set>

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> showLayout(
    "show-layout",
    cl::desc("Draw which device holds which tile of this (1-D or 2-D) value"),
    cl::value_desc("value"), cl::init(""), cl::sub(shardc::explainCommand));

namespace {

/// Finds the value named `name` (an input or an op result).
Value findValue(func::FuncOp func, StringRef name) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (shardc::getArgumentName(func, i) == name)
      return func.getArgument(i);
  Value found;
  func.walk([&](Operation *op) {
    if (!found && op->getNumResults() == 1 &&
        shardc::getNameFromLoc(op->getLoc()) == name)
      found = op->getResult(0);
  });
  return found;
}

shardc::ShardingAttr shardingOf(func::FuncOp func, Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return func.getArgAttrOfType<shardc::ShardingAttr>(
        arg.getArgNumber(), shardc::ShardcDialect::getShardingAttrName());
  return v.getDefiningOp()->getAttrOfType<shardc::ShardingAttr>(
      shardc::ShardcDialect::getShardingAttrName());
}

/// `rows 4-7` style range label of block `b` of `n` over a dim of `size`;
/// blocks of an uneven dim are ceil(size / n) long, the last ones ending
/// in padding (docs/sharding.md#uneven-dims): `189-249+2pad`, `pad`.
std::string rangeLabel(int64_t b, int64_t n, int64_t size) {
  int64_t len = (size + n - 1) / n;
  int64_t first = b * len, last = std::min(b * len + len, size) - 1;
  if (first >= size)
    return "pad";
  std::string label = std::to_string(first) + "-" + std::to_string(last);
  if (last - first + 1 < len)
    label += "+" + std::to_string(len - (last - first + 1)) + "pad";
  return label;
}

/// "device 3", "devices 2, 3".
/// Runs of three or more consecutive ids print as a range (`devices 0,
/// 64-127`), so a large mesh's list stays one short line.
std::string deviceList(ArrayRef<int64_t> devices) {
  std::string s = devices.size() == 1 ? "device " : "devices ";
  for (size_t i = 0, e = devices.size(); i < e;) {
    size_t j = i;
    while (j + 1 < e && devices[j + 1] == devices[j] + 1)
      ++j;
    s += (i ? ", " : "") + std::to_string(devices[i]);
    if (j - i >= 2) {
      s += "-" + std::to_string(devices[j]);
      i = j + 1;
    } else {
      ++i;
    }
  }
  return s;
}

/// One line per dim split unevenly: how much padding it costs and which
/// devices hold it (a user sizing a vocabulary wants to know which device
/// carries the dead rows), e.g. `2 padded columns on device 3`.
std::vector<std::string> describePadding(Value v,
                                         shardc::ShardingAttr sharding,
                                         shardc::MeshOp mesh,
                                         const shardc::MeshTopology &topology) {
  std::vector<std::string> lines;
  auto type = cast<RankedTensorType>(v.getType());
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t n = 1;
    for (StringRef a : sharding.getDimAxes(d))
      n *= mesh.getAxisSize(a);
    int64_t size = type.getDimSize(d), len = (size + n - 1) / n;
    if (n <= 1 || size % n == 0)
      continue;
    // The devices holding each amount of padding, by the block they hold.
    std::map<int64_t, SmallVector<int64_t>> byPadding;
    for (int64_t dev = 0; dev < topology.numDevices(); ++dev) {
      SmallVector<int64_t> coords = topology.coordinates(dev);
      int64_t b = 0;
      for (StringRef a : sharding.getDimAxes(d))
        b = b * mesh.getAxisSize(a) + coords[topology.axisIndex(a)];
      int64_t pad = std::min(len, (b + 1) * len - size);
      if (pad > 0)
        byPadding[pad].push_back(dev);
    }
    StringRef unit = d == 0 ? "row" : (d == 1 && type.getRank() == 2)
                                          ? "column"
                                          : "element";
    std::string where;
    for (auto &[pad, devices] : byPadding)
      where += (where.empty() ? "" : ", ") + std::to_string(pad) +
               " padded " + unit.str() + (pad == 1 ? "" : "s") +
               (devices.size() > 1 ? " on each of " : " on ") +
               deviceList(devices);
    int64_t padding = len * n - size;
    lines.push_back(llvm::formatv("dim {0} of size {1} over {2}: blocks of "
                                  "{3}; {4} ({5:F2} %)",
                                  d, size, n, len, where,
                                  100.0 * double(padding) / double(len * n))
                        .str());
  }
  return lines;
}

/// The padding of every value with an uneven dim (none for a program
/// without one): what the padded layout costs, value by value.
void describeAllPadding(func::FuncOp func) {
  std::vector<std::string> lines;
  auto add = [&](Value v, StringRef name, shardc::ShardingAttr sharding) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!sharding || !type || name.empty() ||
        sharding.getRank() != type.getRank())
      return;
    shardc::MeshOp mesh = shardc::lookupMesh(func, sharding.getMesh());
    if (!mesh)
      return;
    FailureOr<shardc::MeshTopology> topology = shardc::getMeshTopology(mesh);
    if (failed(topology))
      return;
    for (const std::string &line :
         describePadding(v, sharding, mesh, *topology))
      lines.push_back("  " + name.str() + ": " + line);
  };
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    add(func.getArgument(i), shardc::getArgumentName(func, i),
        shardingOf(func, func.getArgument(i)));
  func.walk([&](Operation *op) {
    if (op->getNumResults() == 1)
      add(op->getResult(0), shardc::getNameFromLoc(op->getLoc()),
          shardingOf(func, op->getResult(0)));
  });
  if (lines.empty())
    return;
  llvm::outs() << "\npadding (dims the mesh axes do not divide):\n";
  for (const std::string &line : lines)
    llvm::outs() << line << "\n";
}

void drawLayout(StringRef name, Value v, shardc::ShardingAttr sharding,
                shardc::MeshOp mesh, const shardc::MeshTopology &topology) {
  auto type = cast<RankedTensorType>(v.getType());
  llvm::outs() << "\nlayout of " << name << ": " << type << " " << sharding
               << "\n";
  if (type.getRank() < 1 || type.getRank() > 2) {
    llvm::outs() << "  (only 1-D and 2-D values are drawn)\n";
    return;
  }
  auto parts = [&](int64_t d) -> int64_t {
    if (d >= type.getRank())
      return 1;
    int64_t n = 1;
    for (StringRef a : sharding.getDimAxes(d))
      n *= mesh.getAxisSize(a);
    return n;
  };
  int64_t rows = type.getRank() == 2 ? parts(0) : 1;
  int64_t cols = type.getRank() == 2 ? parts(1) : parts(0);
  std::vector<std::vector<std::string>> cells(rows,
                                              std::vector<std::string>(cols));
  for (int64_t dev = 0; dev < topology.numDevices(); ++dev) {
    SmallVector<int64_t> coords = topology.coordinates(dev);
    SmallVector<int64_t, 2> block;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      int64_t b = 0;
      for (StringRef a : sharding.getDimAxes(d))
        b = b * mesh.getAxisSize(a) + coords[topology.axisIndex(a)];
      block.push_back(b);
    }
    int64_t r = type.getRank() == 2 ? block[0] : 0;
    int64_t c = type.getRank() == 2 ? block[1] : block[0];
    std::string &cell = cells[r][c];
    cell += (cell.empty() ? "D" : ",D") + std::to_string(dev);
  }
  int64_t colSize = type.getDimSize(type.getRank() - 1);
  size_t width = 6;
  for (auto &row : cells)
    for (auto &cell : row)
      width = std::max(width, cell.size() + 2);
  for (int64_t c = 0; c < cols; ++c)
    width = std::max(width, rangeLabel(c, cols, colSize).size() + 2);
  std::string rowHead = type.getRank() == 2 ? "rows " : "";
  size_t headWidth = 0;
  for (int64_t r = 0; r < rows; ++r)
    headWidth = std::max(
        headWidth, (rowHead + (type.getRank() == 2
                                   ? rangeLabel(r, rows, type.getDimSize(0))
                                   : std::string()))
                       .size());
  llvm::outs() << std::string(headWidth + 2, ' ');
  for (int64_t c = 0; c < cols; ++c) {
    std::string label = rangeLabel(c, cols, colSize);
    llvm::outs() << label
                 << std::string(width > label.size() ? width - label.size() : 1,
                                ' ');
  }
  llvm::outs() << "\n";
  for (int64_t r = 0; r < rows; ++r) {
    std::string head = type.getRank() == 2
                           ? rowHead + rangeLabel(r, rows, type.getDimSize(0))
                           : "";
    llvm::outs() << head << std::string(headWidth + 2 - head.size(), ' ');
    for (int64_t c = 0; c < cols; ++c)
      llvm::outs() << cells[r][c]
                   << std::string(width > cells[r][c].size()
                                      ? width - cells[r][c].size()
                                      : 1,
                                  ' ');
    llvm::outs() << "\n";
  }
  for (const std::string &line : describePadding(v, sharding, mesh, topology))
    llvm::outs() << "  " << line << "\n";
  if (sharding.isPartial()) {
    llvm::outs() << "  (each block is a partial sum over";
    for (StringRef a : sharding.getPartialAxes())
      llvm::outs() << " \"" << a << "\"";
    llvm::outs() << ")\n";
  }
}

/// One remark of the propagation's explain mode.
struct PropagationRemark {
  Location loc;
  std::string text;
  /// What it is about: `input "x"` of `input "x" is ...`; the whole text
  /// for a conflict.
  std::string subject() const {
    StringRef t = text;
    size_t is = t.find(" is ");
    return (is == StringRef::npos ? t : t.take_front(is)).str();
  }
};

/// Runs the propagate pipeline on `module` in explain mode, collecting its
/// remarks rather than printing them as diagnostics, so they read as a
/// report.
LogicalResult propagateWithRemarks(ModuleOp module,
                                   std::vector<PropagationRemark> &remarks) {
  MLIRContext *ctx = module.getContext();
  ScopedDiagnosticHandler collect(ctx, [&](Diagnostic &diag) -> LogicalResult {
    if (diag.getSeverity() != DiagnosticSeverity::Remark)
      return failure();
    remarks.push_back({diag.getLocation(), diag.str()});
    return success();
  });
  PassManager pm(ctx, ModuleOp::getOperationName());
  shardc::buildPropagatePipeline(pm, /*explain=*/true);
  return pm.run(module);
}

/// --auto-shard: plans the model, prints each value's choice against the
/// next best, and writes the plan into `module` for the rest of explain.
LogicalResult explainAutoShard(ModuleOp module,
                               const shardc::ShardcAutoShardOptions &flags) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  pm.addPass(shardc::createShardcDecompose());
  if (failed(pm.run(module)))
    return failure();
  OwningOpRef<ModuleOp> original = module.clone();
  func::FuncOp func = shardc::getEntryFunction(module);
  if (!func)
    return failure();
  FailureOr<shardc::MeshOp> mesh = shardc::getFunctionMesh(func);
  if (failed(mesh))
    return failure();
  // The machine, its overrides and the budget as `compile --auto-shard`
  // takes them, so explain shows the plan compile makes.
  FailureOr<shardc::AutoShardOptions> resolved =
      shardc::resolveAutoShardOptions(flags, module);
  if (failed(resolved))
    return failure();
  const shardc::AutoShardOptions &options = *resolved;
  FailureOr<shardc::AutoShardPlan> plan =
      shardc::planAutoSharding(func, *mesh, options);
  if (failed(plan))
    return failure();
  std::string fromLayout = "the " + plan->startLayout + " layout, improved";
  llvm::outs() << llvm::format(
      "auto-shard plan (%s): est_time=%.3gs peak_bytes/device=%lld\n",
      plan->memoryPriced           ? "bytes priced to fit the budget"
      : !plan->startLayout.empty() ? fromLayout.c_str()
      : plan->heuristic            ? "local search"
      : plan->clustered            ? "CBC on clustered layers, improved"
      : plan->optimal              ? "CBC, optimal"
      : plan->movesPerConsumer     ? "moves priced per consumer, improved"
      : plan->timedOut             ? "CBC, time limit"
      : plan->workLimited          ? "CBC, work limit"
                                   : "CBC, unproven",
      plan->estimatedSeconds, (long long)plan->peakBytes);
  if (plan->clustered)
    llvm::outs() << "  (repeated layers clustered: " << plan->solvedNodes
                 << " of " << plan->numNodes << " nodes solved)\n";
  llvm::outs() << "  (seconds: the value's op and the reshards into and out "
                  "of it; the next best gives the value another sharding)\n";
  for (const shardc::AutoShardChoice &c : plan->choices) {
    llvm::outs() << "  " << c.value << ": " << c.chosen;
    if (c.isUser) {
      llvm::outs() << " (annotated)\n";
      continue;
    }
    llvm::outs() << llvm::format(" %.3gs", c.seconds);
    if (c.alternative)
      llvm::outs() << "; next best " << c.alternative
                   << llvm::format(" %.3gs", c.alternativeSeconds);
    llvm::outs() << "\n";
  }
  shardc::applyAutoShardPlan(func, *plan);
  shardc::printAutoShardTotals(*original, module, options.memoryBudgetBytes);
  return success();
}

/// Propagates `module` and prints every value's sharding with its reason:
/// first those of the forward program (`forwardRemarks`, when it was
/// differentiated), then those the differentiated program adds.
LogicalResult
explainShardings(ModuleOp module,
                 const std::vector<PropagationRemark> &forwardRemarks) {
  std::vector<PropagationRemark> remarks;
  if (failed(propagateWithRemarks(module, remarks)))
    return failure();
  llvm::outs() << "shardings:\n";
  std::set<std::pair<const void *, std::string>> forwardSubjects;
  for (const PropagationRemark &r : forwardRemarks) {
    llvm::outs() << "  " << r.text << "\n";
    forwardSubjects.insert({r.loc.getAsOpaquePointer(), r.subject()});
  }
  if (!forwardRemarks.empty())
    llvm::outs() << "shardings the differentiated program adds (the "
                    "backward pass, and the update of a training step):\n";
  for (const PropagationRemark &r : remarks)
    if (!forwardSubjects.count({r.loc.getAsOpaquePointer(), r.subject()}))
      llvm::outs() << "  " << r.text << "\n";
  return success();
}

/// Partitions a copy of the propagated `module` and prints the collectives
/// it inserts, then the padding of unevenly split dims.
LogicalResult explainCollectives(ModuleOp module) {
  using namespace shardc;
  OwningOpRef<ModuleOp> spmd = module.clone();
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  // With the cleanup `simulate` runs: a splat constant's slice folds into
  // a smaller constant, which is no reshard worth listing.
  pm.addPass(createShardcPartition(ShardcPartitionOptions{/*explain=*/true}));
  pm.addNestedPass<func::FuncOp>(createShardcCleanup());
  if (failed(priceOnCommandMachine(pm)))
    return failure();
  if (failed(pm.run(*spmd)))
    return failure();
  func::FuncOp spmdFunc = getEntryFunction(*spmd);
  if (!spmdFunc)
    return failure();
  printCollectives(spmdFunc);
  if (func::FuncOp func = getEntryFunction(module))
    describeAllPadding(func);
  return success();
}

/// --show-layout: draws which device holds which block of the value.
LogicalResult showLayoutOf(ModuleOp module) {
  using namespace shardc;
  func::FuncOp func = getEntryFunction(module);
  if (!func)
    return failure();
  Value v = findValue(func, showLayout);
  if (!v) {
    llvm::errs() << "shardc: error: --show-layout: the model has no value "
                    "named '"
                 << showLayout << "'\n";
    return failure();
  }
  ShardingAttr sharding = shardingOf(func, v);
  MeshOp mesh = lookupMesh(func, sharding.getMesh());
  FailureOr<MeshTopology> topology = getMeshTopology(mesh);
  if (failed(topology))
    return failure();
  drawLayout(showLayout, v, sharding, mesh, *topology);
  return success();
}
} // namespace

int shardc::runExplainCommand() {
  if (pipelineRequested()) { // the stage assignment and per-stage time
    PipelineStepSettings pipeline;
    pipeline.explain = pipeline.explainOnly = true;
    return runPipelineStep(pipeline);
  }
  ToolSession session;
  FailureOr<std::optional<ShardcAutoShardOptions>> autoShard =
      getAutoShardOptions();
  if (failed(autoShard))
    return 1;
  // The program simulate runs: with --autodiff or --train-step, the
  // backward pass or the whole step, whose collectives are explained too.
  // Differentiating propagates the forward program first and fixes its
  // shardings, which would then read as annotations: its remarks are
  // taken before (unless --auto-shard plans the whole program at once).
  std::vector<PropagationRemark> forwardRemarks;
  OwningOpRef<ModuleOp> module = loadGlobalProgram(
      session, "explain", nullptr, [&](ModuleOp loaded) -> LogicalResult {
        if (!isAutodiffRequested() || *autoShard)
          return success();
        OwningOpRef<ModuleOp> forward = loaded.clone();
        return propagateWithRemarks(*forward, forwardRemarks);
      });
  if (!module)
    return 1;
  if (*autoShard && failed(explainAutoShard(*module, **autoShard)))
    return 1;

  if (failed(explainShardings(*module, forwardRemarks)) ||
      failed(explainCollectives(*module)))
    return 1;
  if (!showLayout.empty() && failed(showLayoutOf(*module)))
    return 1;
  return 0;
}

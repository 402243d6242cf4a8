//===- AutoShard.h - choosing every sharding by cost ------------*- C++ -*-===//
//
// Auto-sharding (docs/auto-sharding.md): every value without a user
// annotation gets the sharding that minimizes the plan's estimated time (the
// `est_time_s` the simulator reports: compute at the local sizes plus the
// alpha-beta time of every collective), under a per-device memory budget.
// Each op chooses one strategy (an assignment of mesh axes to the factors
// of its sharding rule); each producer/consumer pair pays the reshard from
// what the producer's strategy makes to what the consumer's needs. The
// integer program is solved with CBC; a local search stands in when CBC
// finds nothing in the time limit. The plan becomes annotations (and a
// `sharding_constraint` wherever a consumer needs another layout), which
// the usual propagate and partition passes then follow.
//
//   AutoShardOptions options;
//   options.memoryBudgetBytes = 1 << 20;
//   FailureOr<AutoShardPlan> plan = planAutoSharding(func, mesh, options);
//   if (succeeded(plan)) applyAutoShardPlan(func, *plan);
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_TRANSFORMS_AUTOSHARD_H
#define SHARDC_TRANSFORMS_AUTOSHARD_H

#include "shardc/Analysis/CostModel.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>
#include <vector>

namespace shardc {

struct AutoShardOptions {
  /// Peak live bytes per device the plan may reach; none when unset.
  std::optional<int64_t> memoryBudgetBytes;
  /// The budget is the machine file's device memory (no --memory-budget
  /// was given): the diagnostics say so.
  bool memoryBudgetFromMachine = false;
  /// The wall-clock backstop, none when 0 (the default): past it, the best
  /// plan found so far (or the local search's, if CBC found none). The
  /// solver's deterministic work limits (docs/auto-sharding.md, "Limits")
  /// bound the solve either way.
  double timeLimitSeconds = 0;
  MachineModel machine;
};

/// One value's choice, for `explain --auto-shard`.
struct AutoShardChoice {
  /// "h", "output #0", "argument w0".
  std::string value;
  ShardingAttr chosen;
  bool isUser = false;
  /// Seconds the choice costs locally: the op's compute and the reshards
  /// into and out of it, with its neighbours as planned.
  double seconds = 0;
  /// The cheapest strategy giving the value another sharding, all else as
  /// planned (null when there is none).
  ShardingAttr alternative;
  double alternativeSeconds = 0;
};

/// A solved plan: a strategy per node of the problem, and what it costs.
struct AutoShardPlan {
  /// The objective: estimated seconds of the step (compute + collectives).
  double estimatedSeconds = 0;
  /// Peak live bytes per device the model predicts.
  int64_t peakBytes = 0;
  /// CBC proved it optimal (else time limit or the local search).
  bool optimal = false;
  /// Found by the local search, not by CBC.
  bool heuristic = false;
  /// Solved with each consumer paying its own moves, an upper bound the
  /// solver uses when sharing them would make the problem too large
  /// (docs/auto-sharding.md), then improved on the exact cost.
  bool movesPerConsumer = false;
  /// --auto-shard-time-limit, the wall-clock backstop, cut the solve short
  /// (planAutoSharding warns).
  bool timedOut = false;
  /// The solver's deterministic work limits (simplex iterations,
  /// branch-and-bound nodes) stopped it before proving the plan optimal
  /// (planAutoSharding warns); the same on any machine.
  bool workLimited = false;
  /// The program had this many columns, more than branch-and-bound takes,
  /// and its relaxation was fractional: the plan is the best found, not
  /// proven optimal (planAutoSharding warns). 0 otherwise.
  int64_t unbranchedColumns = 0;
  /// The budget was met by pricing bytes (a program too large for its
  /// memory rows; docs/auto-sharding.md, "Memory at scale"): the plan fits,
  /// unproven optimal.
  bool memoryPriced = false;
  /// Repeated layers were clustered: CBC solved `solvedNodes` nodes of the
  /// problem's `numNodes` (docs/auto-sharding.md, "Clustering").
  bool clustered = false;
  size_t solvedNodes = 0, numNodes = 0;
  /// The standard layout (StandardLayouts.h) whose plan, improved node by
  /// node, beat the solver's own and is this one; empty otherwise.
  std::string startLayout;
  /// Wall seconds spent solving.
  double solveSeconds = 0;
  std::vector<AutoShardChoice> choices;

  /// What applyAutoShardPlan writes: argument, op result and function
  /// result shardings, and the layouts consumers need.
  struct Assignment {
    std::vector<ShardingAttr> arguments;
    std::vector<std::pair<mlir::Operation *, ShardingAttr>> results;
    std::vector<ShardingAttr> functionResults;
    /// (consumer, operand index, layout) where it differs from the
    /// producer's.
    std::vector<std::tuple<mlir::Operation *, unsigned, ShardingAttr>> moves;
  } assignment;
};

/// Plans `func` on `mesh`. Fails after a diagnostic at `func` (an op
/// without a sharding rule, no plan within the budget: then the least
/// memory any plan needs is in the message).
mlir::FailureOr<AutoShardPlan>
planAutoSharding(mlir::func::FuncOp func, MeshOp mesh,
                 const AutoShardOptions &options);

/// What `memory-budget` (--memory-budget, memory_budget=) may say: bytes
/// with an optional K, M or G ("80G"); "none", no budget at all; or
/// nothing, the machine file's device memory (`memory_bytes`), or no
/// budget where the file gives none.
bool isMemoryBudgetSpelling(llvm::StringRef text);

/// The `memory-budget` of no budget, whatever the machine's memory.
inline constexpr llvm::StringLiteral kNoMemoryBudget = "none";

/// The planner's options from the pass's (and the command line's): the
/// machine model resolved from its file and link/FLOP overrides, the
/// budget parsed, or taken from the machine's device memory. Fails after a
/// diagnostic at `diagnosticsAt` (an unreadable machine file, a malformed
/// budget).
mlir::FailureOr<AutoShardOptions>
resolveAutoShardOptions(const ShardcAutoShardOptions &flags,
                        mlir::Operation *diagnosticsAt);

/// Writes `plan` into `func` as annotations: user annotations stay, every
/// other value gets its planned sharding, and a consumer needing another
/// layout reads it through a `shardc.sharding_constraint` (one per value
/// and layout).
void applyAutoShardPlan(mlir::func::FuncOp func, const AutoShardPlan &plan);

/// Plans `module`'s entry function by cost — its whole training step under
/// `step` (forward, backward, update), or the function itself when null —
/// and writes the shardings the plan gives its arguments and results onto
/// them, where the model has none: what the engine compiles each of its
/// programs from.
mlir::LogicalResult pinAutoShardPlan(mlir::ModuleOp module,
                                     const ShardcTrainingStepOptions *step,
                                     const ShardcAutoShardOptions &autoShard);

} // namespace shardc

#endif // SHARDC_TRANSFORMS_AUTOSHARD_H

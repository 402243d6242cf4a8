//===- AutoShardProblem.h - the auto-sharding integer program ---*- C++ -*-===//
//
// The auto-sharding problem with the IR taken out: nodes choosing one
// strategy each, values each strategy lays out one way, uses each consumer
// strategy needs one way, and the costs between. AutoShard.cpp builds it
// from a function; AutoShardSolver.cpp solves it (CBC, or a local search).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_TRANSFORMS_AUTOSHARDPROBLEM_H
#define SHARDC_LIB_TRANSFORMS_AUTOSHARDPROBLEM_H

#include "mlir/Support/LLVM.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace shardc::detail {

constexpr double kNoPlan = std::numeric_limits<double>::infinity();

struct AutoShardProblem {
  struct Node {
    /// Seconds of each strategy: compute, plus the all_reduce max of a
    /// split max-reduction.
    std::vector<double> cost;
  };
  /// A tensor some node produces.
  struct Value {
    unsigned producer;
    /// The layout (index into `layoutBytes`) each producer strategy makes.
    std::vector<unsigned> layoutOf;
    /// Local bytes per device of each layout.
    std::vector<int64_t> layoutBytes;
    /// Layouts its consumers may need: local bytes of each, and the
    /// seconds (kNoPlan: impossible) and held bytes of moving each layout
    /// there (0 and 0 when the layout is the target).
    std::vector<int64_t> targetBytes;
    std::vector<std::vector<double>> moveSeconds; // [layout][target]
    std::vector<std::vector<bool>> isSame;        // [layout][target]
    /// Program points where it is alive: [defPoint, endPoint].
    int64_t defPoint = 0, endPoint = 0;
    /// A constant: cleanup hoists it to the top of the function and folds
    /// the slice each consumer takes into it, so what is held is one
    /// constant per target, from the start to its last consumer (the
    /// layout itself holds nothing).
    bool hoisted = false;
    /// Alive to endPoint whatever its consumers read (a training step's
    /// argument, a value nothing reads). Otherwise it dies at its last
    /// consumer reading it as it is, or once its first copy is made.
    bool heldToEnd = false;
    /// How many values of the model it stands for (a clustered problem's
    /// value stands for one per repeated layer): its moves cost that many
    /// times their seconds.
    double weight = 1;
  };
  /// A consumer reading a value.
  struct Use {
    unsigned value;
    unsigned consumer;
    /// The target (index into the value's targets) each consumer strategy
    /// needs.
    std::vector<unsigned> targetOf;
    int64_t point = 0;
    /// How many uses of the model it stands for (see Value::weight).
    double weight = 1;
  };
  std::vector<Node> nodes;
  std::vector<Value> values;
  std::vector<Use> uses;
  /// Pairs of nodes that must choose the same strategy index (a training
  /// step's next parameter and its parameter).
  std::vector<std::pair<unsigned, unsigned>> ties;
  int64_t numPoints = 0;
  std::optional<int64_t> memoryBudget;
  /// Its relaxation starts from Clp's all-slack basis, not a crashed one
  /// (AutoShardRelaxation.cpp): the byte-priced probes under a budget
  /// (AutoShardBudget.cpp), whose plans are their relaxations rounded. At
  /// the dearest price the crash's optimum rounded to a plan of 168.9 GB
  /// on the 96-layer GPT-3-shaped step, which then found none within
  /// 150G; from the slack basis one fits.
  bool slackBasis = false;
  /// Per node, the uses it produces or consumes (indexUses fills it), so
  /// that a node's local seconds need not scan every use.
  std::vector<std::vector<unsigned>> usesOfNode;
};

/// Fills `p.usesOfNode`.
void indexUses(AutoShardProblem &p);

/// Calls `fn` on each use node `n` produces or consumes: from
/// `p.usesOfNode` once indexUses has filled it, else on every use, so `fn`
/// must itself skip the uses of other nodes.
template <typename Fn>
void forEachUseNear(const AutoShardProblem &p, unsigned n, Fn &&fn) {
  if (p.usesOfNode.size() == p.nodes.size()) {
    for (unsigned ui : p.usesOfNode[n])
      fn(p.uses[ui]);
    return;
  }
  for (const AutoShardProblem::Use &u : p.uses)
    fn(u);
}

/// Calls `fn(value, layout, target)` on each move `strategy` makes: a value
/// moved out of its producer's layout into a target its consumers need,
/// once per value and target however many consumers need it.
template <typename Fn>
void forEachMove(const AutoShardProblem &p,
                 const std::vector<unsigned> &strategy, Fn &&fn) {
  std::vector<std::vector<bool>> moved(p.values.size());
  for (const AutoShardProblem::Use &u : p.uses) {
    const AutoShardProblem::Value &v = p.values[u.value];
    unsigned l = v.layoutOf[strategy[v.producer]];
    unsigned t = u.targetOf[strategy[u.consumer]];
    std::vector<bool> &done = moved[u.value];
    done.resize(v.targetBytes.size());
    if (v.isSame[l][t] || done[t])
      continue;
    done[t] = true;
    fn(v, l, t);
  }
}

struct AutoShardSolution {
  std::vector<unsigned> strategy;
  bool optimal = false;
  bool heuristic = false;
  /// Each consumer paid its own moves (the problem was too large to share
  /// them): the plan solves that upper bound, then was improved.
  bool movesPerConsumer = false;
  /// --auto-shard-time-limit cut the solve short (the wall-clock backstop).
  bool timedOut = false;
  /// The solver's work limits (kRelaxationIterations, kBranchAndBoundNodes)
  /// stopped it before a plan was proven optimal: deterministic, whatever
  /// the machine's speed.
  bool workLimited = false;
  /// The program's columns when its relaxation was solved, fractional, but
  /// the program had more than kMaxBranchAndBoundColumns, so CBC did not
  /// branch: the plan is unproven. 0 otherwise.
  int64_t unbranchedColumns = 0;
  /// Solved on the clustered problem (repeated layers choosing alike),
  /// then improved node by node on the whole one.
  bool clustered = false;
  /// Under a budget too large for the exact program: found by pricing
  /// bytes (AutoShardBudget.cpp), checked against the budget, not proven.
  bool memoryPriced = false;
  /// Nodes of the program CBC solved (the clustered one's, if clustered).
  size_t solvedNodes = 0;
  /// The start (index into the PlanStarts) the plan was improved from,
  /// when one beat the solver's own; -1 otherwise.
  int start = -1;
};

/// The estimated seconds of `strategy` (a value moved into a layout once
/// serves all its consumers needing it).
double evaluateSeconds(const AutoShardProblem &p,
                       const std::vector<unsigned> &strategy);
/// The peak live bytes per device of `strategy`, as the program runs.
int64_t evaluatePeakBytes(const AutoShardProblem &p,
                          const std::vector<unsigned> &strategy);
/// The bytes per device `strategy` holds, summed over the values rather
/// than at its peak: each value's layout and each copy moved out of it.
/// What a node's move changes of it is local, so the rounds lower it among
/// equally fast plans.
int64_t evaluateHeldBytes(const AutoShardProblem &p,
                          const std::vector<unsigned> &strategy);
/// Plans whose seconds differ by at most this fraction of them are equally
/// fast: the one holding fewer bytes is the plan (docs/auto-sharding.md,
/// "Equally fast plans"), so that which of them the relaxation ends on
/// does not decide the plan.
/// (A femtosecond at least: the rounds' own threshold before.)
constexpr double kEqualSeconds = 1e-12;
inline double equalSecondsTolerance(double seconds) {
  return std::max(kEqualSeconds * std::abs(seconds), 1e-15);
}
/// Whether `a` is a better plan than `b`: faster by more than
/// kEqualSeconds, or equally fast and holding fewer bytes at its peak,
/// then in all (evaluateHeldBytes).
bool isBetterPlan(const AutoShardProblem &p, const std::vector<unsigned> &a,
                  const std::vector<unsigned> &b);
/// Node `n`'s own seconds with strategy `s` and its neighbours as in
/// `strategy`: its cost and the moves into and out of it.
double localSeconds(const AutoShardProblem &p,
                    const std::vector<unsigned> &strategy, unsigned n,
                    unsigned s);

/// Greedy in program order, then rounds of `improvePlan`'s moves (from
/// `start` if given, else from every node making its smallest layout when
/// `smallest`, else from the greedy plan). AutoShardSearch.cpp.
std::vector<unsigned> localSearch(const AutoShardProblem &p, bool smallest,
                                  const std::vector<unsigned> *start = nullptr);

/// Moves one node at a time (with the nodes tied to it) to its cheapest
/// strategy given its neighbours until no move helps (the local search's
/// rounds), from `strategy`; among strategies equally fast (kEqualSeconds),
/// to the one holding fewer bytes (evaluateHeldBytes). Without a budget
/// only.
void improvePlan(const AutoShardProblem &p, std::vector<unsigned> &strategy);

/// The plan of a layout that fixes what each node makes: each node with a
/// non-empty `allowed` list chooses among those strategies only (how it
/// computes what the layout gives it), in program order, the one reading
/// its producers' layouts with the fewest moves, then the cheapest. A
/// standard layout's plan as the solver prices it (AutoShardStarts.h).
std::vector<unsigned>
followLayout(const AutoShardProblem &p,
             const std::vector<std::vector<unsigned>> &allowed);

/// Plans the solver starts from (the standard layouts', followLayout), each
/// a strategy per node of the problem: whatever else it finds, its plan is
/// never slower than the fastest of them, improved by the local search's
/// rounds (docs/auto-sharding.md, "Against the standard layouts").
using PlanStarts = std::vector<std::vector<unsigned>>;

/// The repeated layers of `p` (docs/auto-sharding.md, "Clustering"): nodes
/// alike up to a few edges away (same strategies, costs, neighbours) are
/// classes, and the members of a class, in program order, alternate
/// between two groups, so a plan may alternate layer by layer (Megatron's
/// columns and rows) but otherwise repeats. Returns the problem with one
/// node per group (costs and moves weighted by the group's size) and each
/// node's group; none when it would not be smaller than half of `p`.
struct ClusteredProblem {
  AutoShardProblem reduced;
  std::vector<unsigned> groupOf;
};
std::optional<ClusteredProblem>
clusterRepeatedLayers(const AutoShardProblem &p);

/// `p` with the nodes that only follow their neighbours eliminated
/// (AutoShardReduce.cpp, docs/auto-sharding.md "Reduction"): a node whose
/// only edge is one use, or that reads one single-use value and makes one.
/// Its optimum is `p`'s. None under a budget, or when nothing goes.
struct ReducedProblem {
  AutoShardProblem reduced;
  /// Each node's node in `reduced`; -1 when eliminated.
  std::vector<int> nodeOf;
  /// The seconds between an eliminated node's strategy and a neighbour's,
  /// as they were when it went.
  struct Term {
    unsigned neighbour;
    bool eliminatedIsProducer;
    std::vector<unsigned> layoutOf, targetOf;
    std::vector<std::vector<double>> seconds; // [layout][target]
    std::vector<std::vector<bool>> same;      // [layout][target]
    double between(unsigned mine, unsigned theirs) const;
    /// The value crosses unchanged (no move, not even a free slice).
    bool unchanged(unsigned mine, unsigned theirs) const;
  };
  struct Elimination {
    unsigned node;
    std::vector<double> cost;
    /// Per strategy, the bytes of the layout it makes (0: none): the
    /// tie-break among equally fast strategies.
    std::vector<int64_t> bytes;
    std::vector<Term> terms;
  };
  /// In the order they went.
  std::vector<Elimination> eliminated;
};
std::optional<ReducedProblem> reduceFollowers(const AutoShardProblem &p);
/// A plan of the whole problem from one of `r.reduced`: each eliminated
/// node its cheapest strategy given its neighbours, last eliminated first.
std::vector<unsigned> expandReduced(const ReducedProblem &r,
                                    const std::vector<unsigned> &strategy);

/// `p` without the strategies another strategy of the same node is at
/// least as fast as whatever its neighbours choose, nor the layouts and
/// targets only those made or needed (AutoShardDominance.cpp,
/// docs/auto-sharding.md "Dominated strategies"). Its optimum is `p`'s.
/// None under a budget, or when nothing goes.
struct PrunedProblem {
  AutoShardProblem reduced;
  /// Per node, the strategy of `p` each of `reduced`'s is.
  std::vector<std::vector<unsigned>> strategiesOf;
};
/// `movesPerConsumer`: the program prices each consumer's move on its own
/// (sharesMoves is false), and so do the bounds.
std::optional<PrunedProblem> pruneDominated(const AutoShardProblem &p,
                                            bool movesPerConsumer);
/// Whether `p`'s program prices a move once for all the consumers needing
/// it (else once per consumer: it has too many such moves;
/// AutoShardSolver.cpp).
bool sharesMoves(const AutoShardProblem &p);
/// A plan of `p` from one of `r.reduced`.
std::vector<unsigned> expandPruned(const PrunedProblem &r,
                                   const std::vector<unsigned> &strategy);

using SolveClock = std::chrono::steady_clock;

/// A linear program, column by column (CBC's and Clp's layout).
struct LinearProgram {
  int numColumns = 0, numRows = 0;
  const int *starts = nullptr, *rows = nullptr;
  const double *values = nullptr;
  const double *columnLower = nullptr, *columnUpper = nullptr,
               *objective = nullptr, *rowLower = nullptr, *rowUpper = nullptr;
  /// A second objective, minimized among the first's optima (none: any
  /// optimum).
  const double *tieBreak = nullptr;
  /// Clp's dual simplex starts from a crashed basis (else all-slack).
  bool crash = true;
};
/// The solver's work, bounded by counts rather than seconds, so that the
/// plan and every message are the same on a machine twice as slow
/// (docs/auto-sharding.md, "Limits"): the relaxation's simplex iterations,
/// and CBC's branch-and-bound nodes. --auto-shard-time-limit is only a
/// backstop past them.
/// A node costs about one LP of the program, so CBC's nodes are bounded by
/// kBranchAndBoundWork over its columns, between 20 and 2000 (a 4-layer
/// Llama step's clustered program, 200k columns, ran minutes on 2000).
constexpr int kRelaxationIterations = 200000;
constexpr int kBranchAndBoundNodes = 2000;
constexpr int kMinBranchAndBoundNodes = 20;
constexpr int64_t kBranchAndBoundWork = 20000000;
/// Past this many columns CBC does not run at all: its own first LP
/// (primal simplex) and root cuts alone took minutes on such programs; the
/// relaxation rounded and improved, or the local search's plan, is taken.
constexpr int kMaxBranchAndBoundColumns = 50000;

enum class Relaxation { Solved, Infeasible, WorkLimit, TimedOut };
/// Solves `program` as an LP by Clp's dual simplex within `maxIterations`
/// (WorkLimit past them), stopped at `deadline` (TimedOut); `solution`
/// gets the column values when solved (AutoShardRelaxation.cpp): with a
/// tie-break, the optimum least by it, when its primal simplex on the
/// optimal face ends within the same limits (else the first optimum).
Relaxation solveRelaxation(const LinearProgram &program,
                           SolveClock::time_point deadline, int maxIterations,
                           std::vector<double> &solution);

/// When no plan fits the budget: the smallest peak a plan was found to
/// reach (-1: none found), a peak no plan goes below (-1: none known),
/// whether no plan reaches less than `bytes` (proven), and whether the
/// wall-clock backstop (rather than the work limits) ended the search.
struct LeastPeak {
  int64_t bytes = -1;
  int64_t lowerBound = -1;
  bool proven = false;
  bool timedOut = false;
};

/// The wall-clock backstop (--auto-shard-time-limit): a deadline, and its
/// length, which the least-peak search gets anew; none (the default: the
/// work limits bound the solve) when the length is zero.
struct Backstop {
  SolveClock::time_point deadline;
  SolveClock::duration length;
  static Backstop after(SolveClock::duration length) {
    if (length <= SolveClock::duration::zero())
      return {SolveClock::time_point::max(), SolveClock::duration::zero()};
    return {SolveClock::now() + length, length};
  }
  /// As long again, from now.
  Backstop renewed() const { return after(length); }
  bool passed() const { return SolveClock::now() >= deadline; }
};

/// Solves `p` with CBC within the work limits above (and, as a backstop,
/// `timeLimitSeconds`), falling back to a local search. Fails when no plan
/// fits the budget; then `leastPeak` says what the least-peak search found.
mlir::FailureOr<AutoShardSolution>
solveAutoShard(const AutoShardProblem &p, double timeLimitSeconds,
               LeastPeak &leastPeak, const PlanStarts &starts = {});

/// `p` as one integer program, its memory rows included when it has a
/// budget (AutoShardSolver.cpp): exact, and as large as the program.
/// `starts` (plans of `p`) that fit compete with the local search's.
mlir::FailureOr<AutoShardSolution> solveExact(const AutoShardProblem &p,
                                              const Backstop &backstop,
                                              LeastPeak &leastPeak,
                                              const PlanStarts &starts = {});
/// `p` without its budget, reduced and clustered (AutoShardSolver.cpp),
/// never slower than `starts` improved.
AutoShardSolution solveUnbudgeted(const AutoShardProblem &p,
                                  const Backstop &backstop,
                                  const PlanStarts &starts = {});
/// `p` within its budget (AutoShardBudget.cpp, docs/auto-sharding.md
/// "Memory at scale"): the unbudgeted plan if it fits; a small program
/// exactly; a large one by pricing its bytes, so that it is still reduced
/// and clustered.
/// `starts` that fit the budget compete with its plan.
mlir::FailureOr<AutoShardSolution>
solveWithinBudget(const AutoShardProblem &p, const Backstop &backstop,
                  LeastPeak &leastPeak, const PlanStarts &starts = {});
/// Step 3 of solveWithinBudget, from `p`'s unbudgeted plan: bytes priced
/// by a multiplier, grown until a plan fits, then bisected; the fastest
/// plan that fits, or failure (`leastPeak`: the least peak seen).
mlir::FailureOr<AutoShardSolution>
solveByPricingBytes(const AutoShardProblem &p,
                    const std::vector<unsigned> &unbudgeted,
                    const Backstop &backstop, LeastPeak &leastPeak);

} // namespace shardc::detail

#endif // SHARDC_LIB_TRANSFORMS_AUTOSHARDPROBLEM_H

//===- AutoShardSolver.cpp - the auto-sharding ILP, on CBC ----------------===//
//
// Alpa's formulation (docs/auto-sharding.md), written for CBC's C API:
//
//   x[n][s]    binary, one per node strategy, sum_s x[n][s] = 1
//   e[u][l][t] in [0, 1], per use: the producer's layout l and the target t
//              the consumer needs; its marginals are the two nodes' choices
//              (sum_t e = sum of x making l, sum_l e = sum of x needing t),
//              so with one-hot x it is their product
//   c[v][l][t] >= e[u][l][t] for every use u of v: the move l -> t is made
//              once for all consumers needing t (the partitioner caches it;
//              past kSharedMoveRows of these, each consumer pays its own)
//   minimize   sum cost(n, s) x + sum seconds(l -> t) c (or e, one use)
//   memory     at every program point, the live layouts' bytes plus the
//              moved copies alive there <= the budget
//
// Costs are in microseconds, so CBC's tolerances sit far below them. The
// relaxation is solved first (by Clp: AutoShardRelaxation.cpp); when it is
// integral it is the plan, and CBC never runs.
//
//===----------------------------------------------------------------------===//

#include "AutoShardProblem.h"

#include "coin/Cbc_C_Interface.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;

//===----------------------------------------------------------------------===//
// The integer program
//===----------------------------------------------------------------------===//

namespace {
using Clock = SolveClock;
double secondsLeft(Clock::time_point deadline) {
  return std::max(
      0.0, std::chrono::duration<double>(deadline - Clock::now()).count());
}

/// The program, gathered column by column and row by row, then handed to
/// CBC at once (adding to CBC's model one column or row at a time copies
/// its matrix each time: quadratic in the program's size).
class IntegerProgram {
public:
  IntegerProgram() : model(Cbc_newModel()) {
    Cbc_setLogLevel(model, 0);
    // CBC 2.10's preprocessing crashed (CglPreProcess::postProcess) when
    // the time limit stopped it on a budgeted 2-layer GPT forward; the
    // relaxation has already been solved when CBC runs, and preprocessing
    // saved nothing measurable on these programs.
    Cbc_setParameter(model, "preprocess", "off");
  }
  ~IntegerProgram() { Cbc_deleteModel(model); }

  /// `heldBytes`: what a plan choosing the column holds per device (its
  /// layout or copy), the tie-break among equally fast plans.
  int addColumn(double lower, double upper, double objective, bool integer,
                double heldBytes = 0) {
    columnLower.push_back(lower);
    columnUpper.push_back(upper);
    objectives.push_back(objective);
    bytes.push_back(heldBytes);
    if (integer)
      integers.push_back(int(objectives.size() - 1));
    return int(objectives.size() - 1);
  }
  /// Adds sum(terms) `sense` rhs; a column named twice gets the sum of its
  /// coefficients (CBC takes each column once per row).
  void addRow(ArrayRef<std::pair<int, double>> terms, char sense, double rhs) {
    std::map<int, double> merged;
    for (auto [c, v] : terms)
      merged[c] += v;
    int row = int(rowLower.size());
    for (auto [c, v] : merged)
      entries.push_back({c, row, v});
    const double inf = std::numeric_limits<double>::max();
    rowLower.push_back(sense == 'L' ? -inf : rhs);
    rowUpper.push_back(sense == 'G' ? inf : rhs);
  }
  /// Gives CBC the program; before setting a start or solving.
  void load() {
    Matrix m = columnMatrix();
    Cbc_loadProblem(model, int(objectives.size()), int(rowLower.size()),
                    m.starts.data(), m.rows.data(), m.values.data(),
                    columnLower.data(), columnUpper.data(), objectives.data(),
                    rowLower.data(), rowUpper.data());
    for (int c : integers)
      Cbc_setInteger(model, c);
  }

  /// The program with its integers relaxed (AutoShardRelaxation.cpp);
  /// with `tieBreak`, its optimum minimizing that objective among the
  /// equally good.
  Relaxation solveRelaxation(Clock::time_point deadline, int maxIterations,
                             std::vector<double> &solution,
                             const std::vector<double> *tieBreak = nullptr,
                             bool crash = true) {
    Matrix m = columnMatrix();
    static_assert(sizeof(CoinBigIndex) == sizeof(int));
    LinearProgram lp;
    lp.numColumns = int(objectives.size());
    lp.numRows = int(rowLower.size());
    lp.starts = m.starts.data();
    lp.rows = m.rows.data();
    lp.values = m.values.data();
    lp.columnLower = columnLower.data();
    lp.columnUpper = columnUpper.data();
    lp.objective = objectives.data();
    lp.rowLower = rowLower.data();
    lp.rowUpper = rowUpper.data();
    lp.tieBreak = tieBreak ? tieBreak->data() : nullptr;
    lp.crash = crash;
    return detail::solveRelaxation(lp, deadline, maxIterations, solution);
  }

  Cbc_Model *get() { return model; }
  const std::vector<double> &heldBytes() const { return bytes; }
  int numColumns() const { return int(objectives.size()); }

private:
  struct Entry {
    int column, row;
    double value;
  };
  /// The entries column by column, as CBC and Clp take them.
  struct Matrix {
    std::vector<CoinBigIndex> starts;
    std::vector<int> rows;
    std::vector<double> values;
  };
  Matrix columnMatrix() const {
    int numColumns = int(objectives.size());
    Matrix m;
    m.starts.assign(numColumns + 1, 0);
    for (const Entry &e : entries)
      ++m.starts[e.column + 1];
    for (int c = 0; c < numColumns; ++c)
      m.starts[c + 1] += m.starts[c];
    m.rows.resize(entries.size());
    m.values.resize(entries.size());
    std::vector<CoinBigIndex> next(m.starts.begin(), m.starts.end() - 1);
    for (const Entry &e : entries) {
      CoinBigIndex k = next[e.column]++;
      m.rows[k] = e.row;
      m.values[k] = e.value;
    }
    return m;
  }
  Cbc_Model *model;
  std::vector<double> columnLower, columnUpper, objectives, bytes, rowLower,
      rowUpper;
  std::vector<int> integers;
  std::vector<Entry> entries;
};

/// The columns of the problem in an IntegerProgram, and the rows tying them.
struct Formulation {
  std::vector<std::vector<int>> x;              // [node][strategy]
  std::vector<std::vector<std::vector<int>>> e; // [use][layout][target], -1
  /// Rows, per program point, of the memory each point holds.
  std::vector<std::vector<std::pair<int, double>>> memory;
  /// A move serving several consumers is priced once (else once per
  /// consumer: an upper bound on the plan's seconds).
  bool sharedMoves = true;
};

/// Above this many rows of shared moves (one per consumer and move of a
/// value read several times), a program prices each consumer's move on
/// its own: those rows are most of a transformer's
/// program and make its LP twenty to eighty times slower; the plan is then
/// improved on the exact seconds (docs/auto-sharding.md, "Reduction").
static constexpr size_t kSharedMoveRows = 10000;

} // namespace

bool shardc::detail::sharesMoves(const AutoShardProblem &p) {
  std::vector<unsigned> numUses(p.values.size(), 0);
  for (const AutoShardProblem::Use &u : p.uses)
    ++numUses[u.value];
  size_t sharedRows = 0;
  for (const AutoShardProblem::Use &u : p.uses)
    if (numUses[u.value] > 1)
      sharedRows += p.values[u.value].layoutBytes.size() *
                    p.values[u.value].targetBytes.size();
  return sharedRows <= kSharedMoveRows;
}

namespace {

/// Builds the assignment, move and (with `withMemory`) memory parts; the
/// objective is the plan's seconds times `timeWeight`.
Formulation formulate(const AutoShardProblem &p, IntegerProgram &ip,
                      double timeWeight, bool withMemory) {
  Formulation f;
  const double scale = 1e6 * timeWeight; // seconds -> microseconds
  std::vector<const AutoShardProblem::Value *> made(p.nodes.size(), nullptr);
  for (const AutoShardProblem::Value &v : p.values)
    made[v.producer] = &v;
  for (auto [n, node] : llvm::enumerate(p.nodes)) {
    std::vector<int> &cols = f.x.emplace_back();
    std::vector<std::pair<int, double>> oneHot;
    for (auto [s, c] : llvm::enumerate(node.cost)) {
      // A strategy no plan reaches (an eliminated neighbour cannot follow
      // it: AutoShardReduce.cpp) is fixed at 0.
      bool impossible = c == kNoPlan;
      const AutoShardProblem::Value *v = made[n];
      cols.push_back(ip.addColumn(
          0, impossible ? 0 : 1, impossible ? 0 : c * scale,
          /*integer=*/true, v ? double(v->layoutBytes[v->layoutOf[s]]) : 0));
      oneHot.push_back({cols.back(), 1.0});
    }
    ip.addRow(oneHot, 'E', 1);
  }
  for (auto [a, b] : p.ties)
    for (size_t s = 0; s < f.x[a].size(); ++s)
      ip.addRow({{f.x[a][s], 1.0}, {f.x[b][s], -1.0}}, 'E', 0);

  std::vector<unsigned> numUses(p.values.size(), 0);
  for (const AutoShardProblem::Use &u : p.uses)
    ++numUses[u.value];
  f.sharedMoves = sharesMoves(p);
  bool shareMoves = f.sharedMoves;
  // The move columns c[v][l][t] of values with several uses.
  std::map<std::tuple<unsigned, unsigned, unsigned>, int> moves;
  for (auto [ui, u] : llvm::enumerate(p.uses)) {
    const AutoShardProblem::Value &v = p.values[u.value];
    size_t numLayouts = v.layoutBytes.size(), numTargets = v.targetBytes.size();
    std::vector<bool> wanted(numTargets, false);
    for (unsigned t : u.targetOf)
      wanted[t] = true;
    auto &cols = f.e.emplace_back(numLayouts, std::vector<int>(numTargets, -1));
    for (unsigned l = 0; l < numLayouts; ++l)
      for (unsigned t = 0; t < numTargets; ++t) {
        if (!wanted[t])
          continue;
        double seconds = v.isSame[l][t] ? 0.0 : v.moveSeconds[l][t];
        bool impossible = seconds == kNoPlan;
        bool shared = shareMoves && numUses[u.value] > 1 && !v.isSame[l][t];
        double copyBytes = v.isSame[l][t] ? 0 : double(v.targetBytes[t]);
        cols[l][t] =
            ip.addColumn(0, impossible ? 0 : 1,
                         shared || impossible ? 0 : seconds * scale * u.weight,
                         /*integer=*/false, shared ? 0 : copyBytes);
        if (shared && !impossible) {
          auto [it, inserted] = moves.try_emplace({u.value, l, t}, -1);
          if (inserted)
            it->second = ip.addColumn(0, 1, seconds * scale * v.weight,
                                      /*integer=*/false, copyBytes);
          ip.addRow({{it->second, 1.0}, {cols[l][t], -1.0}}, 'G', 0);
        }
      }
    // Marginals: the producer's layout, the consumer's target.
    for (unsigned l = 0; l < numLayouts; ++l) {
      std::vector<std::pair<int, double>> row;
      for (unsigned t = 0; t < numTargets; ++t)
        if (cols[l][t] >= 0)
          row.push_back({cols[l][t], 1.0});
      for (auto [s, layout] : llvm::enumerate(v.layoutOf))
        if (layout == l)
          row.push_back({f.x[v.producer][s], -1.0});
      ip.addRow(row, 'E', 0);
    }
    for (unsigned t = 0; t < numTargets; ++t) {
      if (!wanted[t])
        continue;
      std::vector<std::pair<int, double>> row;
      for (unsigned l = 0; l < numLayouts; ++l)
        row.push_back({cols[l][t], 1.0});
      for (auto [s, target] : llvm::enumerate(u.targetOf))
        if (target == t)
          row.push_back({f.x[u.consumer][s], -1.0});
      ip.addRow(row, 'E', 0);
    }
  }
  if (!withMemory)
    return f;

  f.memory.assign(p.numPoints, {});
  std::vector<std::vector<unsigned>> usesOf(p.values.size());
  for (auto [ui, u] : llvm::enumerate(p.uses))
    usesOf[u.value].push_back(ui);
  // A value's own layout: held until its first consumer; after it, layout
  // l is held at point i while a consumer at or after i reads l as it is
  // (own[l][i] >= e[u][l][l]).
  for (auto [vi, v] : llvm::enumerate(p.values)) {
    if (v.hoisted)
      continue;
    int64_t firstUse = v.endPoint;
    for (unsigned ui : usesOf[vi])
      firstUse = std::min(firstUse, p.uses[ui].point);
    if (v.heldToEnd)
      firstUse = v.endPoint;
    for (int64_t i = std::max<int64_t>(v.defPoint, 0);
         i <= std::min<int64_t>(v.endPoint, p.numPoints - 1); ++i) {
      if (i <= firstUse) {
        for (auto [s, l] : llvm::enumerate(v.layoutOf))
          f.memory[i].push_back({f.x[v.producer][s], double(v.layoutBytes[l])});
        continue;
      }
      for (unsigned l = 0; l < v.layoutBytes.size(); ++l) {
        int own = -1;
        for (unsigned ui : usesOf[vi]) {
          if (p.uses[ui].point < i)
            continue;
          for (unsigned t = 0; t < v.targetBytes.size(); ++t) {
            if (f.e[ui][l][t] < 0)
              continue;
            if (own < 0)
              own = ip.addColumn(0, 1, 0, /*integer=*/false);
            std::vector<std::pair<int, double>> row = {{own, 1.0},
                                                       {f.e[ui][l][t], -1.0}};
            // Read through a copy: held until the copy is made, at the
            // first consumer needing it (none of those before i).
            if (!v.isSame[l][t])
              for (unsigned wi : usesOf[vi])
                if (p.uses[wi].point < i && f.e[wi][l][t] >= 0)
                  row.push_back({f.e[wi][l][t], 1.0});
            ip.addRow(row, 'G', 0);
          }
        }
        if (own >= 0)
          f.memory[i].push_back({own, double(v.layoutBytes[l])});
      }
    }
  }
  // Moved copies: held[i] >= (copy made for a use at i), and >= (made for
  // uses before and after i) - 1.
  for (auto [vi, v] : llvm::enumerate(p.values)) {
    for (unsigned t = 0; t < v.targetBytes.size(); ++t) {
      // a(u): use u reads a copy in target t.
      std::vector<std::pair<int64_t, std::vector<std::pair<int, double>>>>
          reads;
      for (unsigned ui : usesOf[vi]) {
        std::vector<std::pair<int, double>> a;
        for (unsigned l = 0; l < v.layoutBytes.size(); ++l)
          if (f.e[ui][l][t] >= 0 && (!v.isSame[l][t] || v.hoisted))
            a.push_back({f.e[ui][l][t], 1.0});
        if (!a.empty())
          reads.push_back({p.uses[ui].point, std::move(a)});
      }
      if (reads.empty() || v.targetBytes[t] == 0)
        continue;
      int64_t first = reads.front().first, last = first;
      for (auto &r : reads) {
        first = std::min(first, r.first);
        last = std::max(last, r.first);
      }
      // A hoisted constant is held from the start: each read before it
      // counts as one after point 0.
      if (v.hoisted) {
        size_t n = reads.size();
        for (size_t r = 0; r < n; ++r)
          reads.push_back({-1, reads[r].second});
        first = 0;
      }
      for (int64_t i = first; i <= last; ++i) {
        int held = ip.addColumn(0, 1, 0, /*integer=*/false);
        for (auto &[point, a] : reads) {
          if (point != i)
            continue;
          std::vector<std::pair<int, double>> row = {{held, 1.0}};
          for (auto [c, k] : a)
            row.push_back({c, -k});
          ip.addRow(row, 'G', 0);
        }
        for (auto &[before, a] : reads)
          for (auto &[after, b] : reads) {
            if (!(before < i && i < after))
              continue;
            std::vector<std::pair<int, double>> row = {{held, 1.0}};
            for (auto [c, k] : a)
              row.push_back({c, -k});
            for (auto [c, k] : b)
              row.push_back({c, -k});
            ip.addRow(row, 'G', -1);
          }
        f.memory[i].push_back({held, double(v.targetBytes[t])});
      }
    }
  }
  return f;
}

/// The strategies of a CBC solution.
std::vector<unsigned> readStrategies(const Formulation &f,
                                     const double *solution) {
  std::vector<unsigned> strategy;
  for (const std::vector<int> &cols : f.x) {
    unsigned best = 0;
    for (unsigned s = 0; s < cols.size(); ++s)
      if (solution[cols[s]] > solution[cols[best]])
        best = s;
    strategy.push_back(best);
  }
  return strategy;
}
} // namespace

namespace {
/// Every strategy column of `values` is 0 or 1.
bool isIntegral(const Formulation &f, const std::vector<double> &values) {
  for (const std::vector<int> &cols : f.x)
    for (int c : cols)
      if (values[c] > 1e-6 && values[c] < 1 - 1e-6)
        return false;
  return true;
}
} // namespace

/// Gives CBC its limits: the work limit (deterministic), then the time left
/// as a backstop (CBC's own first LP does not check it).
static void limitCbc(Cbc_Model *model, const Backstop &backstop) {
  int64_t columns = std::max(Cbc_getNumCols(model), 1);
  Cbc_setMaximumNodes(
      model,
      int(std::clamp<int64_t>(kBranchAndBoundWork / columns,
                              kMinBranchAndBoundNodes, kBranchAndBoundNodes)));
  if (backstop.length > Clock::duration::zero())
    Cbc_setMaximumSeconds(model,
                          std::max(secondsLeft(backstop.deadline), 0.01));
}

/// The least peak any plan reaches, bounded from both sides without
/// branch and bound (CBC took 20 ms a node on a 4-layer MLP step's program,
/// and it only words an error): below by the relaxation of the same
/// program minimizing a bound on every point's memory, above by the
/// smallest of `found` (the local search's plans' peak) and that
/// relaxation rounded and improved. Proven when the two meet.
static LeastPeak solveLeastPeak(const AutoShardProblem &p,
                                const Backstop &backstop, int64_t found) {
  LeastPeak least;
  least.bytes = found;
  IntegerProgram ip;
  Formulation f = formulate(p, ip, /*timeWeight=*/0, /*withMemory=*/true);
  int peak = ip.addColumn(0, 1e30, 1, /*integer=*/false);
  for (auto &row : f.memory) {
    std::vector<std::pair<int, double>> terms = row;
    terms.push_back({peak, -1.0});
    ip.addRow(terms, 'L', 0);
  }
  std::vector<double> relaxed;
  Relaxation relaxation =
      ip.solveRelaxation(backstop.deadline, kRelaxationIterations, relaxed);
  if (relaxation != Relaxation::Solved) {
    least.timedOut = relaxation == Relaxation::TimedOut;
    return least;
  }
  // The relaxation rounded, then moved node by node to less memory (the
  // local search under a budget of nothing prices each byte over it at a
  // second).
  std::vector<unsigned> rounded = readStrategies(f, relaxed.data());
  AutoShardProblem noRoom = p;
  noRoom.memoryBudget = 0;
  rounded = localSearch(noRoom, /*smallest=*/false, &rounded);
  int64_t roundedPeak = evaluatePeakBytes(p, rounded);
  if (least.bytes < 0 || roundedPeak < least.bytes)
    least.bytes = roundedPeak;
  least.lowerBound = int64_t(std::ceil(relaxed[peak] - 1e-6));
  least.proven = isIntegral(f, relaxed) || least.bytes <= least.lowerBound;
  return least;
}

/// Past this many move columns (a use's producer layouts times the
/// targets its consumer needs, over the uses) an unbudgeted program is
/// solved without its dominated strategies (AutoShardDominance.cpp): the
/// relaxation's time grows with its columns times its rows, and a Llama
/// step's 190,000 lose a fifth. Smaller programs are solved as they are.
static constexpr size_t kPruneMoveColumns = 50000;

static size_t moveColumns(const AutoShardProblem &p) {
  size_t columns = 0;
  for (const AutoShardProblem::Use &u : p.uses) {
    std::vector<bool> wanted(p.values[u.value].targetBytes.size(), false);
    size_t targets = 0;
    for (unsigned t : u.targetOf)
      if (!wanted[t]) {
        wanted[t] = true;
        ++targets;
      }
    columns += p.values[u.value].layoutBytes.size() * targets;
  }
  return columns;
}

static FailureOr<AutoShardSolution> solveWhole(const AutoShardProblem &p,
                                               const Backstop &backstop,
                                               LeastPeak &leastPeak,
                                               const PlanStarts &starts);

FailureOr<AutoShardSolution>
shardc::detail::solveExact(const AutoShardProblem &p, const Backstop &backstop,
                           LeastPeak &leastPeak, const PlanStarts &starts) {
  std::optional<PrunedProblem> pruned;
  if (!p.memoryBudget && moveColumns(p) > kPruneMoveColumns)
    pruned = pruneDominated(p, !sharesMoves(p));
  if (!pruned)
    return solveWhole(p, backstop, leastPeak, starts);
  FailureOr<AutoShardSolution> solution =
      solveWhole(pruned->reduced, backstop, leastPeak, {});
  if (succeeded(solution))
    solution->strategy = expandPruned(*pruned, solution->strategy);
  return solution;
}

/// What the relaxation minimizes among its optima (docs/auto-sharding.md,
/// "Equally fast plans"): the bytes the plan holds (each layout and copy,
/// as evaluateHeldBytes counts them), then a preference for each node's
/// first strategies, half a byte in all at most and each node's weight an
/// irrational step apart, so that one vertex is the least. Which of
/// equally fast vertices Clp's pivots reach first then does not decide
/// the plan.
static std::vector<double> tieBreakObjective(const IntegerProgram &ip,
                                             const Formulation &f) {
  std::vector<double> objective = ip.heldBytes();
  double step = 0.25 / double(std::max(ip.numColumns(), 1));
  for (auto [n, cols] : llvm::enumerate(f.x)) {
    double weight = 1 + std::fmod(double(n + 1) * 0.6180339887498949, 1.0);
    for (auto [s, c] : llvm::enumerate(cols))
      objective[c] += step * double(s) * weight;
  }
  return objective;
}

/// `p` itself: its relaxation by Clp, which is often integral and then the
/// plan; else CBC, the local search (or the fastest of `starts` that fits)
/// starting it off and standing in when CBC finds nothing, or when the
/// limits leave no room for CBC.
static FailureOr<AutoShardSolution> solveWhole(const AutoShardProblem &p,
                                               const Backstop &backstop,
                                               LeastPeak &leastPeak,
                                               const PlanStarts &starts) {
  AutoShardSolution solution;
  solution.solvedNodes = p.nodes.size();
  IntegerProgram ip;
  Formulation f = formulate(p, ip, 1, p.memoryBudget.has_value());
  solution.movesPerConsumer = !f.sharedMoves;
  for (auto &row : f.memory)
    ip.addRow(row, 'L', double(*p.memoryBudget));
  // The local search's plan, if it fits, starts CBC off: under a tight
  // budget a feasible plan is the hard part.
  std::vector<unsigned> heuristic = localSearch(p, /*smallest=*/false);
  auto fits = [&](const std::vector<unsigned> &plan) {
    return !p.memoryBudget || evaluatePeakBytes(p, plan) <= *p.memoryBudget;
  };
  bool heuristicFits = fits(heuristic);
  int64_t smallestPeak = INT64_MAX; // of the local search's plans
  if (p.memoryBudget) {
    std::vector<unsigned> split = localSearch(p, /*smallest=*/true);
    smallestPeak = evaluatePeakBytes(p, split);
    if (fits(split) && (!heuristicFits || isBetterPlan(p, split, heuristic))) {
      heuristic = std::move(split);
      heuristicFits = true;
    }
  }
  for (const std::vector<unsigned> &start : starts)
    if (fits(start) && (!heuristicFits || isBetterPlan(p, start, heuristic))) {
      heuristic = start;
      heuristicFits = true;
    }
  // The least peak gets a backstop of its own, as long as the first.
  auto noneFits = [&]() -> FailureOr<AutoShardSolution> {
    leastPeak =
        solveLeastPeak(p, backstop.renewed(),
                       std::min(evaluatePeakBytes(p, heuristic), smallestPeak));
    return failure();
  };

  std::vector<double> relaxed;
  std::vector<double> tieBreak = tieBreakObjective(ip, f);
  Relaxation relaxation =
      ip.solveRelaxation(backstop.deadline, kRelaxationIterations, relaxed,
                         &tieBreak, /*crash=*/!p.slackBasis);
  if (relaxation == Relaxation::Infeasible)
    return noneFits();
  bool solved = relaxation == Relaxation::Solved;
  if (solved && isIntegral(f, relaxed)) {
    solution.strategy = readStrategies(f, relaxed.data());
    solution.optimal = f.sharedMoves;
    return solution;
  }

  // The relaxation rounded (each node its likeliest strategy) and improved
  // may beat the local search: CBC's start, or the plan if CBC cannot run.
  if (solved) {
    std::vector<unsigned> rounded = readStrategies(f, relaxed.data());
    if (!p.memoryBudget)
      improvePlan(p, rounded);
    if (fits(rounded) &&
        (!heuristicFits || isBetterPlan(p, rounded, heuristic))) {
      heuristic = std::move(rounded);
      heuristicFits = true;
    }
  }
  // No relaxation within the limits, a program too large for CBC, or no
  // time left for it: the best plan found.
  bool tooLarge = ip.numColumns() > kMaxBranchAndBoundColumns;
  if (!solved || tooLarge || backstop.passed()) {
    solution.workLimited = relaxation == Relaxation::WorkLimit;
    if (solved && tooLarge)
      solution.unbranchedColumns = ip.numColumns();
    solution.timedOut = !solution.workLimited && !solution.unbranchedColumns;
    solution.heuristic = true;
    if (!heuristicFits) {
      leastPeak =
          LeastPeak{std::min(evaluatePeakBytes(p, heuristic), smallestPeak), -1,
                    false, solution.timedOut};
      return failure();
    }
    solution.strategy = std::move(heuristic);
    return solution;
  }
  ip.load();
  if (heuristicFits) {
    std::vector<int> cols;
    std::vector<double> values;
    for (auto [n, nodeCols] : llvm::enumerate(f.x))
      for (auto [s, c] : llvm::enumerate(nodeCols)) {
        cols.push_back(c);
        values.push_back(s == heuristic[n] ? 1.0 : 0.0);
      }
    Cbc_setMIPStartI(ip.get(), cols.size(), cols.data(), values.data());
  }
  limitCbc(ip.get(), backstop);
  Cbc_solve(ip.get());
  // Stopped by a limit: the time backstop, else the node limit.
  bool stopped = Cbc_status(ip.get()) == 1;
  solution.timedOut = stopped && Cbc_isSecondsLimitReached(ip.get());
  solution.workLimited = stopped && !solution.timedOut;
  bool found =
      Cbc_isProvenOptimal(ip.get()) || Cbc_numberSavedSolutions(ip.get()) > 0;
  // Finished (not stopped by a limit) without a plan: none fits.
  if (Cbc_isProvenInfeasible(ip.get()) || (!found && Cbc_status(ip.get()) == 0))
    return noneFits();
  if (found) {
    solution.strategy = readStrategies(f, Cbc_getColSolution(ip.get()));
    solution.optimal = Cbc_isProvenOptimal(ip.get()) && f.sharedMoves;
    // Stopped by a limit, the local search may have done better.
    if (!Cbc_isProvenOptimal(ip.get()) && heuristicFits &&
        isBetterPlan(p, heuristic, solution.strategy)) {
      solution.strategy = heuristic;
      solution.heuristic = true;
    }
    return solution;
  }
  if (!heuristicFits) {
    leastPeak =
        LeastPeak{std::min(evaluatePeakBytes(p, heuristic), smallestPeak), -1,
                  false, solution.timedOut};
    return failure();
  }
  solution.strategy = std::move(heuristic);
  solution.heuristic = true;
  return solution;
}

/// Below this many nodes the whole program is solved: a few layers' step
/// (a 4-layer MLP's is about 60 nodes, gpt_tiny's forward about 90) solves
/// in well under a second, and exactly.
static constexpr size_t kClusterMinNodes = 150;

/// `p` solved directly, or, when it is big, its repeated layers clustered
/// (the clusters' plan expanded); none when CBC fails on it.
static FailureOr<AutoShardSolution>
solveMaybeClustered(const AutoShardProblem &p, const Backstop &backstop,
                    LeastPeak &leastPeak) {
  std::optional<ClusteredProblem> clustered;
  if (p.nodes.size() >= kClusterMinNodes)
    clustered = clusterRepeatedLayers(p);
  if (!clustered)
    return solveExact(p, backstop, leastPeak);
  FailureOr<AutoShardSolution> reduced =
      solveExact(clustered->reduced, backstop, leastPeak);
  if (failed(reduced))
    return solveExact(p, backstop, leastPeak);
  AutoShardSolution solution;
  solution.clustered = true;
  solution.solvedNodes = clustered->reduced.nodes.size();
  solution.heuristic = reduced->heuristic;
  solution.movesPerConsumer = reduced->movesPerConsumer;
  solution.timedOut = reduced->timedOut;
  solution.workLimited = reduced->workLimited;
  solution.unbranchedColumns = reduced->unbranchedColumns;
  for (unsigned group : clustered->groupOf)
    solution.strategy.push_back(reduced->strategy[group]);
  return solution;
}

AutoShardSolution shardc::detail::solveUnbudgeted(const AutoShardProblem &p,
                                                  const Backstop &backstop,
                                                  const PlanStarts &starts) {
  assert(!p.memoryBudget && "the budget is AutoShardBudget.cpp's");
  std::optional<ReducedProblem> reduced = reduceFollowers(p);
  const AutoShardProblem &q = reduced ? reduced->reduced : p;
  // Without a budget every plan fits, and the solve does not fail; the
  // local search would stand in if it did.
  LeastPeak unused;
  FailureOr<AutoShardSolution> solved =
      solveMaybeClustered(q, backstop, unused);
  AutoShardSolution solution;
  if (succeeded(solved)) {
    solution = std::move(*solved);
  } else {
    solution.strategy = localSearch(q, /*smallest=*/false);
    solution.heuristic = true;
  }
  if (reduced)
    solution.strategy = expandReduced(*reduced, solution.strategy);
  // The clusters' plan, expanded, is improved node by node on the whole
  // program (where a layer near an end differs from the rest); the greedy
  // plan replaces it if better. An optimal plan is only moved among equally
  // fast ones, to fewer bytes: which optimal vertex the relaxation ended on
  // does not decide the plan (docs/auto-sharding.md, "Equally fast plans").
  improvePlan(p, solution.strategy);
  if (solution.optimal)
    return solution; // the reduction is exact
  std::vector<unsigned> greedy = localSearch(p, /*smallest=*/false);
  if (isBetterPlan(p, greedy, solution.strategy)) {
    solution.strategy = std::move(greedy);
    solution.heuristic = true;
  }
  // The fastest standard layout's plan, improved the same way: an expert's
  // layout is never faster by this cost than the plan (a clustered or
  // relaxed solve can settle far from it, and one-node moves not leave
  // it). Only the fastest is improved: the rounds on a 96-layer step's
  // whole problem take seconds each.
  int fastest = -1;
  for (auto [i, start] : llvm::enumerate(starts))
    if (fastest < 0 || isBetterPlan(p, start, starts[fastest]))
      fastest = int(i);
  if (fastest >= 0) {
    std::vector<unsigned> plan = starts[fastest];
    improvePlan(p, plan);
    if (isBetterPlan(p, plan, solution.strategy)) {
      solution.strategy = std::move(plan);
      solution.start = fastest;
    }
  }
  return solution;
}

FailureOr<AutoShardSolution>
shardc::detail::solveAutoShard(const AutoShardProblem &p,
                               double timeLimitSeconds, LeastPeak &leastPeak,
                               const PlanStarts &starts) {
  // (A limit too long for the clock is none.)
  Backstop backstop =
      Backstop::after(timeLimitSeconds > 0 && timeLimitSeconds < 1e9
                          ? std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(timeLimitSeconds))
                          : Clock::duration::zero());
  if (p.memoryBudget)
    return solveWithinBudget(p, backstop, leastPeak, starts);
  return solveUnbudgeted(p, backstop, starts);
}

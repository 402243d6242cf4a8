//===- AutoShardBudget.cpp - a memory budget at any size ------------------===//
//
// The exact program keeps every value's bytes at every program point (the
// memory rows of AutoShardSolver.cpp): it is as large as the step times its
// length, it is neither reduced nor clustered, and on a transformer's
// training step CBC does not finish. A budget enters in three steps
// (docs/auto-sharding.md, "Memory at scale"):
//
//   1. The unbudgeted plan (reduced, clustered). If it fits, it is the
//      budgeted optimum too: a budget only removes plans.
//   2. A program small enough for its memory rows is solved exactly.
//   3. A larger one is solved with its bytes priced instead (a Lagrangian
//      relaxation of the budget by one multiplier): every value's layout
//      and every moved copy costs `lambda` seconds per byte, which keeps
//      the problem's shape, so it is still reduced and clustered. The
//      multiplier grows until a plan fits (the real peak, as the simulator
//      counts it, checked), then is bisected towards the fastest plan that
//      fits. The plan always respects the budget; it is not proven optimal.
//
// Deterministic: the multipliers probed depend only on the problem.
//
//===----------------------------------------------------------------------===//

#include "AutoShardProblem.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace shardc::detail;

/// Past this many memory terms (value x program point x layout) the exact
/// program is not built: the budgeted tests' steps have a few thousand, a
/// 2-layer GPT-3-shaped Adam step millions.
static constexpr int64_t kExactMemoryTerms = 200000;
/// Multipliers tried growing (x8 each) until a plan fits, then bisection
/// steps between the last that did not fit and the first that did. The
/// dearest, tried first, is 8^kGrowSteps times the first.
static constexpr int kGrowSteps = 12;
static constexpr int kBisectSteps = 6;

/// The exact program's memory terms, roughly: each value's layouts and
/// targets over the points it may be alive.
static int64_t memoryTerms(const AutoShardProblem &p) {
  int64_t terms = 0;
  for (const AutoShardProblem::Value &v : p.values)
    terms += (v.endPoint - v.defPoint + 1) *
             int64_t(v.layoutBytes.size() + v.targetBytes.size());
  return terms;
}

/// `p` without its budget, each byte a value's layout or a moved copy
/// holds costing `lambda` seconds, the whole objective divided by
/// `divisor`. A plan's rank does not change with the divisor; the solver's
/// tolerances do: priced at many times its seconds, the bytes of a 175B
/// model's step made objective coefficients of 1e12 microseconds, and one
/// relaxation took 90 s (about 1 s at any other price).
static AutoShardProblem priceBytes(const AutoShardProblem &p, double lambda,
                                   double divisor = 1) {
  AutoShardProblem q = p;
  q.memoryBudget.reset();
  q.slackBasis = true;
  for (AutoShardProblem::Value &v : q.values) {
    if (!v.hoisted)
      for (auto [s, l] : llvm::enumerate(v.layoutOf))
        if (q.nodes[v.producer].cost[s] != kNoPlan)
          q.nodes[v.producer].cost[s] += lambda * double(v.layoutBytes[l]);
    for (auto [l, row] : llvm::enumerate(v.moveSeconds))
      for (auto [t, seconds] : llvm::enumerate(row))
        if ((!v.isSame[l][t] || v.hoisted) && seconds != kNoPlan)
          seconds += lambda * double(v.targetBytes[t]);
  }
  if (divisor != 1) {
    for (AutoShardProblem::Node &node : q.nodes)
      for (double &c : node.cost)
        c /= divisor;
    for (AutoShardProblem::Value &v : q.values)
      for (std::vector<double> &row : v.moveSeconds)
        for (double &seconds : row)
          seconds /= divisor;
  }
  return q;
}

/// Every byte the plan's values and copies hold (the priced quantity).
static double pricedBytes(const AutoShardProblem &p,
                          const std::vector<unsigned> &strategy) {
  AutoShardProblem one = priceBytes(p, 1.0);
  AutoShardProblem none = priceBytes(p, 0.0);
  return evaluateSeconds(one, strategy) - evaluateSeconds(none, strategy);
}

FailureOr<AutoShardSolution> shardc::detail::solveWithinBudget(
    const AutoShardProblem &p, const Backstop &backstop, LeastPeak &leastPeak,
    const PlanStarts &starts) {
  AutoShardProblem free = p;
  free.memoryBudget.reset();
  AutoShardSolution first = solveUnbudgeted(free, backstop, starts);
  if (evaluatePeakBytes(p, first.strategy) <= *p.memoryBudget)
    return first;
  if (memoryTerms(p) <= kExactMemoryTerms)
    return solveExact(p, backstop, leastPeak, starts);
  FailureOr<AutoShardSolution> priced =
      solveByPricingBytes(p, first.strategy, backstop, leastPeak);
  // A standard layout that fits and is faster than the priced plan (or
  // fits where no price found a plan that does) is the plan.
  std::optional<AutoShardSolution> best;
  if (succeeded(priced))
    best = std::move(*priced);
  for (auto [i, start] : llvm::enumerate(starts)) {
    int64_t peak = evaluatePeakBytes(p, start);
    // None fits: the least peak seen counts the standard layouts too.
    if (peak < leastPeak.bytes)
      leastPeak.bytes = peak;
    if (peak > *p.memoryBudget ||
        (best &&
         evaluateSeconds(p, start) >= evaluateSeconds(p, best->strategy)))
      continue;
    if (!best) {
      best.emplace();
      best->memoryPriced = true;
    }
    best->strategy = start;
    best->start = int(i);
  }
  if (!best)
    return failure();
  return std::move(*best);
}

FailureOr<AutoShardSolution> shardc::detail::solveByPricingBytes(
    const AutoShardProblem &p, const std::vector<unsigned> &unbudgeted,
    const Backstop &backstop, LeastPeak &leastPeak) {
  int64_t budget = *p.memoryBudget;
  // The fastest plan found that fits, and the least peak seen.
  std::optional<AutoShardSolution> best;
  double bestSeconds = 0;
  int64_t leastSeen = evaluatePeakBytes(p, unbudgeted);
  auto consider = [&](AutoShardSolution solution) {
    int64_t peak = evaluatePeakBytes(p, solution.strategy);
    leastSeen = std::min(leastSeen, peak);
    if (peak > budget)
      return false;
    double seconds = evaluateSeconds(p, solution.strategy);
    if (!best || seconds < bestSeconds) {
      bestSeconds = seconds;
      best = std::move(solution);
    }
    return true;
  };
  // Priced so that the bytes first weigh about as much as the seconds;
  // at `k` times that price the objective is divided by 1 + k, so that its
  // coefficients stay near the plan's seconds however dear the bytes.
  double lambda = std::max(evaluateSeconds(p, unbudgeted), 1e-12) /
                  std::max(pricedBytes(p, unbudgeted), 1.0);
  const double balanced = lambda;
  auto probe = [&](double lambda) {
    return consider(solveUnbudgeted(
        priceBytes(p, lambda, 1 + lambda / balanced), backstop));
  };
  // The dearest price first: its plan holds about the fewest bytes the
  // pricing reaches, and when even it does not fit, a cheaper price is
  // unlikely to fit either (a deep step far over its budget fails after
  // one probe, not after every price).
  double dearest = balanced * std::pow(8.0, kGrowSteps);
  double lo = 0, hi = -1;
  if (!backstop.passed() && probe(dearest)) {
    hi = dearest;
    for (int step = 0; step < kGrowSteps && !backstop.passed(); ++step) {
      if (probe(lambda)) {
        hi = lambda;
        break;
      }
      lo = lambda;
      lambda *= 8;
    }
    for (int step = 0; step < kBisectSteps && !backstop.passed(); ++step) {
      double mid = lo > 0 ? std::sqrt(lo * hi) : hi / 8;
      if (probe(mid))
        hi = mid;
      else
        lo = mid;
    }
  }
  if (!best) {
    leastPeak = LeastPeak{leastSeen, -1, false, backstop.passed()};
    return failure();
  }
  best->optimal = false;
  best->memoryPriced = true;
  best->timedOut |= backstop.passed();
  return std::move(*best);
}

//===- AutoShardBudgetTest.cpp - a budget is never dropped ----------------===//
//
// solveWithinBudget (lib/Transforms/AutoShardBudget.cpp) meets a budget in
// three ways: the unbudgeted plan when it fits, the exact program when it
// is small, bytes priced when it is not. Checked on random chains of
// values with bytes and liveness, against brute force: every plan returned
// fits the budget; the exact ways reach the budgeted optimum, and when no
// plan fits, the error's figures bracket the least peak; pricing bytes,
// which is not exact, mostly finds a fitting plan, and otherwise fails
// rather than return one over the budget.
//
//===----------------------------------------------------------------------===//

#include "AutoShardProblem.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace shardc::detail;

namespace {

/// A chain of `numNodes` nodes, each making a value read by the next one
/// (and now and then by one further on, so values stay alive across
/// points), with strategies trading seconds for bytes.
AutoShardProblem randomChain(std::mt19937 &rng) {
  auto pick = [&](unsigned n) { return unsigned(rng() % n); };
  AutoShardProblem p;
  unsigned numNodes = 3 + pick(5);
  for (unsigned n = 0; n < numNodes; ++n) {
    AutoShardProblem::Node node;
    unsigned numStrategies = 1 + pick(3);
    AutoShardProblem::Value v;
    v.producer = n;
    v.defPoint = n;
    for (unsigned s = 0; s < numStrategies; ++s) {
      node.cost.push_back(double(1 + pick(10)));
      v.layoutOf.push_back(s);
      v.layoutBytes.push_back(int64_t(1 + pick(100)));
    }
    // The consumers need the layouts the producer makes, moves between
    // them cost seconds and hold the target's bytes.
    v.targetBytes = v.layoutBytes;
    for (unsigned l = 0; l < numStrategies; ++l) {
      v.moveSeconds.emplace_back();
      v.isSame.emplace_back();
      for (unsigned t = 0; t < numStrategies; ++t) {
        v.isSame.back().push_back(l == t);
        v.moveSeconds.back().push_back(l == t ? 0.0 : double(pick(6)));
      }
    }
    p.nodes.push_back(node);
    p.values.push_back(v);
  }
  for (unsigned n = 1; n < numNodes; ++n) {
    std::vector<unsigned> readers = {n - 1};
    if (n >= 2 && pick(3) == 0)
      readers.push_back(n - 2);
    for (unsigned value : readers) {
      AutoShardProblem::Use u;
      u.value = value;
      u.consumer = n;
      u.point = n;
      size_t numTargets = p.values[value].targetBytes.size();
      for (size_t s = 0; s < p.nodes[n].cost.size(); ++s)
        u.targetOf.push_back(unsigned(s % numTargets));
      p.uses.push_back(u);
    }
  }
  for (AutoShardProblem::Value &v : p.values) {
    v.endPoint = v.defPoint;
    for (const AutoShardProblem::Use &u : p.uses)
      if (&p.values[u.value] == &v)
        v.endPoint = std::max(v.endPoint, u.point);
    if (v.endPoint == v.defPoint)
      v.heldToEnd = true; // nothing reads it: the simulator never frees it
  }
  for (AutoShardProblem::Value &v : p.values)
    if (v.heldToEnd)
      v.endPoint = int64_t(numNodes) - 1;
  p.numPoints = int64_t(numNodes);
  indexUses(p);
  return p;
}

/// The least seconds of a plan within `budget` (kNoPlan: none), and the
/// least peak of any plan.
double bruteForce(const AutoShardProblem &p, int64_t budget,
                  int64_t &leastPeak) {
  std::vector<unsigned> plan(p.nodes.size(), 0);
  double least = kNoPlan;
  leastPeak = INT64_MAX;
  while (true) {
    int64_t peak = evaluatePeakBytes(p, plan);
    leastPeak = std::min(leastPeak, peak);
    if (peak <= budget)
      least = std::min(least, evaluateSeconds(p, plan));
    size_t n = 0;
    while (n < plan.size() && ++plan[n] == p.nodes[n].cost.size())
      plan[n++] = 0;
    if (n == plan.size())
      return least;
  }
}

Backstop longBackstop() {
  return Backstop{SolveClock::now() + std::chrono::hours(1),
                  std::chrono::hours(1)};
}

TEST(AutoShardBudgetTest, ExactWithinTheBudget) {
  std::mt19937 rng(5);
  int fitting = 0, none = 0, provenLeast = 0;
  for (int trial = 0; trial < 200; ++trial) {
    AutoShardProblem p = randomChain(rng);
    int64_t leastPeak;
    bruteForce(p, INT64_MAX, leastPeak);
    // A budget between the least peak and a little above it.
    p.memoryBudget = leastPeak + int64_t(rng() % 60) - 10;
    int64_t ignored;
    double optimum = bruteForce(p, *p.memoryBudget, ignored);
    LeastPeak least;
    mlir::FailureOr<AutoShardSolution> solution =
        solveWithinBudget(p, longBackstop(), least);
    if (optimum == kNoPlan) {
      ++none;
      ASSERT_TRUE(mlir::failed(solution)) << "trial " << trial;
      // The error's two figures bracket the least peak, and meet it when
      // they say it is proven.
      EXPECT_GE(least.bytes, leastPeak) << "trial " << trial;
      EXPECT_LE(least.lowerBound, leastPeak) << "trial " << trial;
      if (least.proven)
        EXPECT_EQ(least.bytes, leastPeak) << "trial " << trial;
      provenLeast += least.proven;
      continue;
    }
    ++fitting;
    ASSERT_TRUE(mlir::succeeded(solution)) << "trial " << trial;
    EXPECT_LE(evaluatePeakBytes(p, solution->strategy), *p.memoryBudget)
        << "trial " << trial;
    EXPECT_NEAR(evaluateSeconds(p, solution->strategy), optimum, 1e-9)
        << "trial " << trial;
  }
  EXPECT_GT(fitting, 50);
  EXPECT_GT(none, 10);
  EXPECT_GT(provenLeast, none / 2);
}

TEST(AutoShardBudgetTest, PricingBytesNeverExceedsTheBudget) {
  std::mt19937 rng(9);
  int found = 0;
  for (int trial = 0; trial < 200; ++trial) {
    AutoShardProblem p = randomChain(rng);
    int64_t leastPeak;
    bruteForce(p, INT64_MAX, leastPeak);
    p.memoryBudget = leastPeak + int64_t(rng() % 60);
    AutoShardProblem free = p;
    free.memoryBudget.reset();
    std::vector<unsigned> unbudgeted =
        solveUnbudgeted(free, longBackstop()).strategy;
    LeastPeak least;
    mlir::FailureOr<AutoShardSolution> solution =
        solveByPricingBytes(p, unbudgeted, longBackstop(), least);
    if (mlir::failed(solution)) {
      // Not proven: a least seen, at least the least.
      EXPECT_FALSE(least.proven);
      EXPECT_GE(least.bytes, leastPeak) << "trial " << trial;
      continue;
    }
    ++found;
    EXPECT_TRUE(solution->memoryPriced);
    EXPECT_FALSE(solution->optimal);
    EXPECT_LE(evaluatePeakBytes(p, solution->strategy), *p.memoryBudget)
        << "trial " << trial;
  }
  // Pricing bytes is a heuristic, but it mostly finds a plan.
  EXPECT_GT(found, 100);
}

} // namespace

//===- AutoShardReduceTest.cpp - the reduction loses no plan --------------===//
//
// reduceFollowers (lib/Transforms/AutoShardReduce.cpp) claims the reduced
// problem's optimum is the whole one's, and expandReduced brings a plan of
// it back at the same seconds. Checked by brute force on random small
// problems: DAGs of nodes with one to three strategies, values read once or
// several times (so that shared moves meet the eliminations), some moves
// free, some the same layout, a few impossible.
//
//===----------------------------------------------------------------------===//

#include "AutoShardProblem.h"
#include "RandomAutoShardProblem.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace shardc::detail;

namespace {

AutoShardProblem randomProblem(std::mt19937 &rng) {
  return shardc::detail::randomProblem(rng, RandomProblemShape());
}

/// The least seconds of any plan of `p`, and one plan reaching it.
double bruteForce(const AutoShardProblem &p, std::vector<unsigned> &best) {
  std::vector<unsigned> plan(p.nodes.size(), 0);
  double least = kNoPlan;
  best = plan;
  while (true) {
    double seconds = evaluateSeconds(p, plan);
    if (seconds < least) {
      least = seconds;
      best = plan;
    }
    size_t n = 0;
    while (n < plan.size() && ++plan[n] == p.nodes[n].cost.size())
      plan[n++] = 0;
    if (n == plan.size())
      return least;
  }
}

bool same(double a, double b) {
  return a == b || std::abs(a - b) <= 1e-9 * std::max(std::abs(a), 1.0);
}

TEST(AutoShardReduceTest, ReducedOptimumIsTheWholeOne) {
  std::mt19937 rng(7);
  int reducedSome = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    AutoShardProblem p = randomProblem(rng);
    std::vector<unsigned> wholePlan;
    double whole = bruteForce(p, wholePlan);
    std::optional<ReducedProblem> r = reduceFollowers(p);
    if (!r)
      continue;
    ++reducedSome;
    std::vector<unsigned> reducedPlan;
    double reduced = r->reduced.nodes.empty()
                         ? 0
                         : bruteForce(r->reduced, reducedPlan);
    std::vector<unsigned> expanded = expandReduced(*r, reducedPlan);
    ASSERT_EQ(expanded.size(), p.nodes.size());
    double back = evaluateSeconds(p, expanded);
    // The eliminated nodes' seconds are folded into their neighbours'
    // costs, so the expanded plan reaches the whole optimum; the reduced
    // one is no more (a node left without neighbours takes its cheapest
    // strategy, a constant the reduced program drops).
    EXPECT_TRUE(same(back, whole))
        << "trial " << trial << ": expanded plan " << back << ", optimum "
        << whole;
    if (std::isfinite(whole))
      EXPECT_LE(reduced, whole + 1e-9) << "trial " << trial;
  }
  // The random problems do have followers.
  EXPECT_GT(reducedSome, 300);
}

TEST(AutoShardReduceTest, SolverReachesTheOptimum) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 100; ++trial) {
    AutoShardProblem p = randomProblem(rng);
    std::vector<unsigned> wholePlan;
    double whole = bruteForce(p, wholePlan);
    if (!std::isfinite(whole))
      continue;
    LeastPeak leastPeak;
    mlir::FailureOr<AutoShardSolution> solution =
        solveAutoShard(p, 60, leastPeak);
    ASSERT_TRUE(mlir::succeeded(solution));
    EXPECT_TRUE(same(evaluateSeconds(p, solution->strategy), whole))
        << "trial " << trial;
  }
}

TEST(AutoShardReduceTest, NothingUnderABudget) {
  std::mt19937 rng(3);
  AutoShardProblem p = randomProblem(rng);
  p.memoryBudget = 1 << 20;
  EXPECT_FALSE(reduceFollowers(p).has_value());
}

} // namespace

//===- AutoShardDominanceTest.cpp - pruning loses no plan -----------------===//
//
// pruneDominated (lib/Transforms/AutoShardDominance.cpp) claims the pruned
// problem's optimum is the whole one's, both when moves are priced once per
// value and target (evaluateSeconds) and when each consumer pays its own
// (the program of a large problem), with a clustered problem's weights.
// Checked by brute force on random small problems: DAGs of nodes with one
// to four strategies, values read once or several times, some moves free,
// some the same layout, a few impossible.
//
//===----------------------------------------------------------------------===//

#include "AutoShardProblem.h"
#include "RandomAutoShardProblem.h"

#include "llvm/ADT/STLExtras.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace shardc::detail;

namespace {

AutoShardProblem randomProblem(std::mt19937 &rng, bool weighted) {
  RandomProblemShape shape;
  shape.extraNodes = 4;
  shape.maxStrategies = 4;
  shape.costRange = 6;
  shape.moveRange = 6;
  shape.weighted = weighted;
  return shardc::detail::randomProblem(rng, shape);
}

/// The seconds of `plan` with each consumer paying its own moves.
double perConsumerSeconds(const AutoShardProblem &p,
                          const std::vector<unsigned> &plan) {
  double total = 0;
  for (auto [n, node] : llvm::enumerate(p.nodes))
    total += node.cost[plan[n]];
  for (const AutoShardProblem::Use &u : p.uses) {
    const AutoShardProblem::Value &v = p.values[u.value];
    unsigned l = v.layoutOf[plan[v.producer]];
    unsigned t = u.targetOf[plan[u.consumer]];
    if (!v.isSame[l][t])
      total += v.moveSeconds[l][t] * u.weight;
  }
  return total;
}

/// The least seconds of any plan of `p` under `seconds`.
template <typename Seconds>
double bruteForce(const AutoShardProblem &p, Seconds seconds) {
  std::vector<unsigned> plan(p.nodes.size(), 0);
  double least = kNoPlan;
  while (true) {
    least = std::min(least, seconds(p, plan));
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

void checkPruning(bool perConsumer, bool weighted, unsigned seed) {
  std::mt19937 rng(seed);
  auto seconds = [&](const AutoShardProblem &p,
                     const std::vector<unsigned> &plan) {
    return perConsumer ? perConsumerSeconds(p, plan) : evaluateSeconds(p, plan);
  };
  int prunedSome = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    AutoShardProblem p = randomProblem(rng, weighted);
    double whole = bruteForce(p, seconds);
    std::optional<PrunedProblem> r = pruneDominated(p, perConsumer);
    if (!r)
      continue;
    ++prunedSome;
    ASSERT_EQ(r->reduced.nodes.size(), p.nodes.size());
    for (const AutoShardProblem::Node &node : r->reduced.nodes)
      ASSERT_FALSE(node.cost.empty()) << "trial " << trial;
    // The pruned problem's plans are the whole one's, at the same seconds.
    std::vector<unsigned> plan(p.nodes.size(), 0);
    double least = kNoPlan;
    while (true) {
      std::vector<unsigned> back = expandPruned(*r, plan);
      double s = seconds(p, back);
      EXPECT_TRUE(same(seconds(r->reduced, plan), s)) << "trial " << trial;
      least = std::min(least, s);
      size_t n = 0;
      while (n < plan.size() && ++plan[n] == r->reduced.nodes[n].cost.size())
        plan[n++] = 0;
      if (n == plan.size())
        break;
    }
    EXPECT_TRUE(same(least, whole)) << "trial " << trial << ": pruned optimum "
                                    << least << ", whole optimum " << whole;
  }
  // The random problems do have dominated strategies.
  EXPECT_GT(prunedSome, 300);
}

TEST(AutoShardDominanceTest, SharedMovesKeepTheOptimum) {
  checkPruning(/*perConsumer=*/false, /*weighted=*/false, 5);
}

TEST(AutoShardDominanceTest, SharedMovesWeightedKeepTheOptimum) {
  checkPruning(/*perConsumer=*/false, /*weighted=*/true, 6);
}

TEST(AutoShardDominanceTest, PerConsumerMovesKeepTheOptimum) {
  checkPruning(/*perConsumer=*/true, /*weighted=*/true, 8);
}

TEST(AutoShardDominanceTest, NothingUnderABudget) {
  std::mt19937 rng(3);
  AutoShardProblem p = randomProblem(rng, false);
  p.memoryBudget = 1 << 20;
  EXPECT_FALSE(pruneDominated(p, false).has_value());
}

} // namespace

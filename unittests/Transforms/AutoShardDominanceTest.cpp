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

#include "llvm/ADT/STLExtras.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace shardc::detail;

namespace {

AutoShardProblem randomProblem(std::mt19937 &rng, bool weighted) {
  auto pick = [&](unsigned n) { return unsigned(rng() % n); };
  AutoShardProblem p;
  unsigned numNodes = 3 + pick(4);
  for (unsigned n = 0; n < numNodes; ++n) {
    AutoShardProblem::Node node;
    unsigned numStrategies = 1 + pick(4);
    for (unsigned s = 0; s < numStrategies; ++s)
      node.cost.push_back(double(pick(6)));
    p.nodes.push_back(node);
    AutoShardProblem::Value v;
    v.producer = n;
    unsigned numLayouts = 1 + pick(numStrategies);
    for (unsigned s = 0; s < numStrategies; ++s)
      v.layoutOf.push_back(s < numLayouts ? s : pick(numLayouts));
    v.layoutBytes.assign(numLayouts, 0);
    v.weight = weighted ? double(1 + pick(3)) : 1;
    p.values.push_back(v);
  }
  for (unsigned n = 1; n < numNodes; ++n)
    for (unsigned k = 0, reads = 1 + pick(2); k < reads; ++k) {
      AutoShardProblem::Use u;
      u.value = pick(4) == 0 ? 0 : pick(n);
      u.consumer = n;
      u.weight = weighted ? double(1 + pick(3)) : 1;
      p.uses.push_back(u);
    }
  for (AutoShardProblem::Value &v : p.values) {
    unsigned numTargets = 1 + pick(3);
    v.targetBytes.assign(numTargets, 0);
    for (unsigned l = 0; l < v.layoutBytes.size(); ++l) {
      v.moveSeconds.emplace_back();
      v.isSame.emplace_back();
      for (unsigned t = 0; t < numTargets; ++t) {
        bool same = l == t && pick(2) == 0;
        v.isSame.back().push_back(same);
        double seconds = same ? 0 : double(pick(6));
        if (!same && t > 0 && pick(8) == 0)
          seconds = kNoPlan; // target 0 stays reachable
        v.moveSeconds.back().push_back(seconds);
      }
    }
  }
  for (AutoShardProblem::Use &u : p.uses) {
    unsigned numTargets = p.values[u.value].targetBytes.size();
    for (size_t s = 0; s < p.nodes[u.consumer].cost.size(); ++s)
      u.targetOf.push_back(pick(numTargets));
  }
  p.numPoints = int64_t(numNodes);
  indexUses(p);
  return p;
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

//===- AutoShardStartsTest.cpp - the search never loses a start -----------===//
//
// The solver's plan is never slower than the fastest plan it starts from
// (the standard layouts', docs/auto-sharding.md "Against the standard
// layouts"), and the local search's rounds price a move as evaluateSeconds
// counts it: each round only lowers the plan's seconds, and where they
// stop no single node's move lowers them further. Checked on random small
// problems whose values are read by several consumers (shared moves), with
// random plans as the starts.
//
//===----------------------------------------------------------------------===//

#include "AutoShardProblem.h"

#include <gtest/gtest.h>

#include <random>

using namespace shardc::detail;

namespace {

AutoShardProblem randomProblem(std::mt19937 &rng) {
  auto pick = [&](unsigned n) { return unsigned(rng() % n); };
  AutoShardProblem p;
  unsigned numNodes = 4 + pick(8);
  for (unsigned n = 0; n < numNodes; ++n) {
    AutoShardProblem::Node node;
    unsigned numStrategies = 1 + pick(4);
    for (unsigned s = 0; s < numStrategies; ++s)
      node.cost.push_back(double(pick(10)));
    p.nodes.push_back(node);
    AutoShardProblem::Value v;
    v.producer = n;
    unsigned numLayouts = 1 + pick(numStrategies);
    for (unsigned s = 0; s < numStrategies; ++s)
      v.layoutOf.push_back(s < numLayouts ? s : pick(numLayouts));
    v.layoutBytes.assign(numLayouts, 0);
    p.values.push_back(v);
  }
  // Each node but the first reads one to three earlier values, the first
  // two often (so that several consumers share a move).
  for (unsigned n = 1; n < numNodes; ++n)
    for (unsigned k = 0, reads = 1 + pick(3); k < reads; ++k) {
      AutoShardProblem::Use u;
      u.value = pick(3) == 0 ? pick(std::min(n, 2u)) : pick(n);
      u.consumer = n;
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
        v.moveSeconds.back().push_back(same ? 0 : double(1 + pick(8)));
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

std::vector<unsigned> randomPlan(const AutoShardProblem &p, std::mt19937 &rng) {
  std::vector<unsigned> plan;
  for (const AutoShardProblem::Node &node : p.nodes)
    plan.push_back(unsigned(rng() % node.cost.size()));
  return plan;
}

TEST(AutoShardStartsTest, RoundsOnlyLowerThePlansSeconds) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 500; ++trial) {
    AutoShardProblem p = randomProblem(rng);
    std::vector<unsigned> plan = randomPlan(p, rng);
    double before = evaluateSeconds(p, plan);
    improvePlan(p, plan);
    double after = evaluateSeconds(p, plan);
    EXPECT_LE(after, before + 1e-9) << "trial " << trial;
    // Where the rounds stop, no one node's move is faster.
    for (unsigned n = 0; n < p.nodes.size(); ++n)
      for (unsigned s = 0; s < p.nodes[n].cost.size(); ++s) {
        std::vector<unsigned> moved = plan;
        moved[n] = s;
        EXPECT_GE(evaluateSeconds(p, moved), after - 1e-9)
            << "trial " << trial << ": node " << n << " strategy " << s;
      }
  }
}

TEST(AutoShardStartsTest, NeverSlowerThanTheFastestStart) {
  std::mt19937 rng(9);
  for (int trial = 0; trial < 200; ++trial) {
    AutoShardProblem p = randomProblem(rng);
    PlanStarts starts;
    double fastest = kNoPlan;
    for (int k = 0; k < 3; ++k) {
      starts.push_back(randomPlan(p, rng));
      fastest = std::min(fastest, evaluateSeconds(p, starts.back()));
    }
    AutoShardSolution solution =
        solveUnbudgeted(p, Backstop::after({}), starts);
    EXPECT_LE(evaluateSeconds(p, solution.strategy), fastest + 1e-9)
        << "trial " << trial;
  }
}

TEST(AutoShardStartsTest, FollowLayoutKeepsToTheAllowedStrategies) {
  std::mt19937 rng(13);
  for (int trial = 0; trial < 200; ++trial) {
    AutoShardProblem p = randomProblem(rng);
    std::vector<std::vector<unsigned>> allowed(p.nodes.size());
    for (unsigned n = 0; n < p.nodes.size(); ++n)
      if (rng() % 2)
        allowed[n].push_back(unsigned(rng() % p.nodes[n].cost.size()));
    std::vector<unsigned> plan = followLayout(p, allowed);
    ASSERT_EQ(plan.size(), p.nodes.size());
    for (unsigned n = 0; n < p.nodes.size(); ++n)
      if (!allowed[n].empty())
        EXPECT_EQ(plan[n], allowed[n].front()) << "trial " << trial;
  }
}

} // namespace

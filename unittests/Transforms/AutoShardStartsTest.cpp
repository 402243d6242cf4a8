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
#include "RandomAutoShardProblem.h"

#include <gtest/gtest.h>

#include <random>

using namespace shardc::detail;

namespace {

/// Larger than the reductions' problems, every move possible and none
/// free, the first two values read often.
AutoShardProblem randomProblem(std::mt19937 &rng) {
  RandomProblemShape shape;
  shape.minNodes = 4;
  shape.extraNodes = 8;
  shape.maxStrategies = 4;
  shape.maxReads = 3;
  shape.readsFirstTwo = true;
  shape.minMove = 1;
  shape.someImpossible = false;
  return shardc::detail::randomProblem(rng, shape);
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

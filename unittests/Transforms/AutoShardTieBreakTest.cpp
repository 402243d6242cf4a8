//===- AutoShardTieBreakTest.cpp - equally fast plans, fewer bytes --------===//
//
// Among equally fast plans the solver's is the one holding fewer bytes,
// whichever order the strategies are listed in (docs/auto-sharding.md,
// "Equally fast plans"): so that which optimum Clp's relaxation reaches
// first does not decide the plan. Checked where one node's move joins the
// optima (the local search's rounds) and where it cannot (two nodes must
// move together: the relaxation's tie-break).
//
//===----------------------------------------------------------------------===//

#include "AutoShardProblem.h"

#include <gtest/gtest.h>

using namespace shardc::detail;

namespace {

/// Nodes each with two equally fast strategies making layouts of `bytes`
/// (one value per node), each reading its producers' values (`edges`) in
/// the layout its own strategy makes, or moving them at a second: only
/// every node at once changes layout without a move.
AutoShardProblem
connected(unsigned numNodes, const std::vector<int64_t> &bytes,
          const std::vector<std::pair<unsigned, unsigned>> &edges) {
  AutoShardProblem p;
  size_t k = bytes.size();
  for (unsigned n = 0; n < numNodes; ++n) {
    p.nodes.push_back({std::vector<double>(k, 1e-3)});
    AutoShardProblem::Value v;
    v.producer = n;
    for (unsigned s = 0; s < k; ++s)
      v.layoutOf.push_back(s);
    v.layoutBytes = bytes;
    v.targetBytes = bytes;
    v.moveSeconds.assign(k, std::vector<double>(k, 1.0));
    v.isSame.assign(k, std::vector<bool>(k, false));
    for (unsigned s = 0; s < k; ++s) {
      v.moveSeconds[s][s] = 0;
      v.isSame[s][s] = true;
    }
    v.defPoint = v.endPoint = n;
    p.values.push_back(v);
  }
  for (auto [from, to] : edges) {
    AutoShardProblem::Use u;
    u.value = from;
    u.consumer = to;
    u.targetOf = p.values[from].layoutOf;
    u.point = to;
    p.values[from].endPoint = std::max<int64_t>(p.values[from].endPoint, to);
    p.uses.push_back(u);
  }
  p.numPoints = numNodes;
  indexUses(p);
  return p;
}

/// A chain: the reduction eliminates every node (each follows its
/// neighbour), and its expansion must choose.
AutoShardProblem chain(unsigned numNodes, const std::vector<int64_t> &bytes) {
  std::vector<std::pair<unsigned, unsigned>> edges;
  for (unsigned n = 0; n + 1 < numNodes; ++n)
    edges.push_back({n, n + 1});
  return connected(numNodes, bytes, edges);
}

/// Two diamonds in a row (0 -> 1, 2 -> 3 -> 4, 5 -> 6): values read twice
/// and nodes reading two, which the reduction keeps, so the relaxation
/// must choose.
AutoShardProblem diamonds(const std::vector<int64_t> &bytes) {
  return connected(
      7, bytes,
      {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 4}, {3, 5}, {4, 6}, {5, 6}});
}

TEST(AutoShardTieBreakTest, RoundsTakeTheSmallerOfEquallyFastStrategies) {
  // One node, two strategies as fast: the one making the smaller layout,
  // listed first or second, from either start.
  for (bool smallerFirst : {true, false}) {
    AutoShardProblem p;
    p.nodes.push_back({{1e-3, 1e-3}});
    AutoShardProblem::Value v;
    v.producer = 0;
    v.layoutOf = {0, 1};
    v.layoutBytes = smallerFirst ? std::vector<int64_t>{1000, 4000}
                                 : std::vector<int64_t>{4000, 1000};
    v.heldToEnd = true;
    p.values.push_back(v);
    p.numPoints = 1;
    indexUses(p);
    unsigned smaller = smallerFirst ? 0 : 1;
    for (unsigned start : {0u, 1u}) {
      std::vector<unsigned> plan = {start};
      improvePlan(p, plan);
      EXPECT_EQ(plan[0], smaller)
          << "smaller listed " << (smallerFirst ? "first" : "second")
          << ", start " << start;
    }
    AutoShardSolution solution =
        solveUnbudgeted(p, Backstop::after({}), /*starts=*/{});
    EXPECT_EQ(solution.strategy[0], smaller);
  }
}

TEST(AutoShardTieBreakTest, SolverTakesTheSmallerOfEquallyFastPlans) {
  // Every node split (small) or every node whole (large) are equally
  // fast; one node's move costs a second, so the rounds alone cannot
  // join them: the relaxation's tie-break must choose.
  for (bool smallerFirst : {true, false}) {
    std::vector<int64_t> bytes = smallerFirst
                                     ? std::vector<int64_t>{1000, 4000}
                                     : std::vector<int64_t>{4000, 1000};
    unsigned smaller = smallerFirst ? 0 : 1;
    for (bool isChain : {true, false}) {
      AutoShardProblem p = isChain ? chain(6, bytes) : diamonds(bytes);
      AutoShardSolution solution =
          solveUnbudgeted(p, Backstop::after({}), /*starts=*/{});
      for (unsigned n = 0; n < p.nodes.size(); ++n)
        EXPECT_EQ(solution.strategy[n], smaller)
            << (isChain ? "chain" : "diamonds") << ", smaller listed "
            << (smallerFirst ? "first" : "second") << ", node " << n;
      // As fast as either uniform plan.
      std::vector<unsigned> large(p.nodes.size(), 1 - smaller);
      EXPECT_DOUBLE_EQ(evaluateSeconds(p, solution.strategy),
                       evaluateSeconds(p, large));
    }
  }
}

TEST(AutoShardTieBreakTest, BetterPlanIsFasterThenSmaller) {
  AutoShardProblem p = chain(3, {1000, 4000});
  std::vector<unsigned> small = {0, 0, 0}, large = {1, 1, 1}, mixed = {0, 1, 1};
  EXPECT_TRUE(isBetterPlan(p, small, large));
  EXPECT_FALSE(isBetterPlan(p, large, small));
  EXPECT_FALSE(isBetterPlan(p, small, small));
  // A move's second outweighs any bytes.
  EXPECT_TRUE(isBetterPlan(p, large, mixed));
  EXPECT_FALSE(isBetterPlan(p, mixed, large));
}

} // namespace

//===- AutoShardCluster.cpp - repeated layers, solved once ----------------===//
//
// A deep model's problem is its layers' problem many times over. Nodes are
// coloured by what the solver sees of them — their strategies' costs, the
// layouts of the value they make, and (for a few rounds) the colours of
// their producers and consumers through the same kind of use — so that the
// interior layers of a stack share colours and only the layers near the
// inputs and outputs stand out. A colour's members, in program order,
// alternate between two groups (a plan may alternate layer by layer, as
// Megatron's columns and rows do), and each group becomes one node of a
// smaller problem whose costs are weighted by how many nodes, values and
// uses it stands for. Its plan, expanded, is a plan of the whole problem;
// the solver then improves it node by node there (docs/auto-sharding.md,
// "Clustering").
//
//===----------------------------------------------------------------------===//

#include "AutoShardProblem.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <map>
#include <tuple>

using namespace shardc::detail;

/// Rounds of colouring by neighbours: nodes within this many edges of a
/// difference (an input, the loss) keep their own groups.
static constexpr int kColourRounds = 2;

namespace {
/// Dense ids for exact keys, in the order they are first seen.
template <typename Key> class Interner {
public:
  unsigned get(const Key &key) {
    return ids.try_emplace(key, unsigned(ids.size())).first->second;
  }

private:
  std::map<Key, unsigned> ids;
};
} // namespace

std::optional<ClusteredProblem>
shardc::detail::clusterRepeatedLayers(const AutoShardProblem &p) {
  size_t numNodes = p.nodes.size();
  std::vector<int> valueOfNode(numNodes, -1);
  for (auto [vi, v] : llvm::enumerate(p.values))
    valueOfNode[v.producer] = int(vi);
  std::vector<bool> tied(numNodes, false);
  for (auto [a, b] : p.ties)
    tied[a] = tied[b] = true;

  // A use's kind: the operand it is of its consumer, what the consumer's
  // strategies need of it and the moves between.
  std::vector<unsigned> position(p.uses.size());
  std::vector<unsigned> operandsSeen(numNodes, 0);
  for (auto [ui, u] : llvm::enumerate(p.uses))
    position[ui] = operandsSeen[u.consumer]++;
  Interner<std::vector<double>> useKinds;
  std::vector<unsigned> useKind;
  for (auto [ui, u] : llvm::enumerate(p.uses)) {
    const AutoShardProblem::Value &v = p.values[u.value];
    std::vector<double> key = {double(position[ui]), -1};
    key.insert(key.end(), u.targetOf.begin(), u.targetOf.end());
    key.push_back(-1);
    for (const auto &row : v.moveSeconds)
      key.insert(key.end(), row.begin(), row.end());
    key.push_back(-1);
    for (const auto &row : v.isSame)
      key.insert(key.end(), row.begin(), row.end());
    useKind.push_back(useKinds.get(key));
  }

  // The first colour: what the node itself offers the solver.
  Interner<std::vector<double>> firstColours;
  std::vector<unsigned> colour(numNodes);
  for (unsigned n = 0; n < numNodes; ++n) {
    std::vector<double> key(p.nodes[n].cost.begin(), p.nodes[n].cost.end());
    key.push_back(tied[n] ? -2 : -1);
    if (valueOfNode[n] >= 0) {
      const AutoShardProblem::Value &v = p.values[valueOfNode[n]];
      key.insert(key.end(), v.layoutOf.begin(), v.layoutOf.end());
      key.push_back(-1);
      key.insert(key.end(), v.layoutBytes.begin(), v.layoutBytes.end());
      key.push_back(v.heldToEnd ? 1 : 0);
      key.push_back(v.hoisted ? 1 : 0);
    }
    colour[n] = firstColours.get(key);
  }
  // Then refined by the colours of the neighbours, through each kind of use.
  for (int round = 0; round < kColourRounds; ++round) {
    std::vector<std::vector<std::tuple<int, unsigned, unsigned>>> around(
        numNodes);
    for (auto [ui, u] : llvm::enumerate(p.uses)) {
      unsigned producer = p.values[u.value].producer;
      around[u.consumer].push_back({0, useKind[ui], colour[producer]});
      around[producer].push_back({1, useKind[ui], colour[u.consumer]});
    }
    Interner<std::pair<unsigned, std::vector<std::tuple<int, unsigned,
                                                        unsigned>>>>
        colours;
    std::vector<unsigned> next(numNodes);
    for (unsigned n = 0; n < numNodes; ++n) {
      llvm::sort(around[n]);
      next[n] = colours.get({colour[n], std::move(around[n])});
    }
    colour = std::move(next);
  }

  // A colour's members alternate between two groups, in program order,
  // when the layers form a chain: a member reads another's value directly
  // or through one single-operand node (an MLP's dot, relu, dot, whose
  // weights Megatron splits by columns and rows in turn). Layers joined
  // only through ops of several operands (a transformer's residual adds)
  // need no alternation: each colour is one group, so that the problem of
  // a deep stack is the problem of its distinct layers.
  std::vector<std::vector<unsigned>> readersOf(numNodes);
  for (const AutoShardProblem::Use &u : p.uses)
    readersOf[p.values[u.value].producer].push_back(u.consumer);
  bool chained = false;
  for (unsigned a = 0; a < numNodes && !chained; ++a)
    for (unsigned n : readersOf[a]) {
      if (n != a && colour[n] == colour[a])
        chained = true;
      else if (operandsSeen[n] == 1)
        for (unsigned b : readersOf[n])
          chained |= b != a && colour[b] == colour[a];
    }
  ClusteredProblem out;
  out.groupOf.resize(numNodes);
  Interner<std::pair<unsigned, unsigned>> groups;
  std::map<unsigned, unsigned> seen;
  std::vector<unsigned> groupSize;
  for (unsigned n = 0; n < numNodes; ++n) {
    unsigned phase = chained ? seen[colour[n]]++ % 2 : 0;
    unsigned g = groups.get({colour[n], phase});
    out.groupOf[n] = g;
    if (g == groupSize.size())
      groupSize.push_back(0);
    ++groupSize[g];
  }
  size_t numGroups = groupSize.size();
  // At least three layers' worth: two layers tied into one problem made the
  // GPT-3-shaped step's relaxation fractional (a worse plan, no faster).
  if (3 * numGroups > numNodes)
    return std::nullopt;

  AutoShardProblem &r = out.reduced;
  r.numPoints = p.numPoints;
  r.slackBasis = p.slackBasis;
  // A group's node: its first member's strategies, their costs times the
  // group's size (the members' costs are equal: the colour says so).
  std::vector<unsigned> first(numGroups, unsigned(numNodes));
  for (unsigned n = numNodes; n-- > 0;)
    first[out.groupOf[n]] = n;
  std::vector<int> groupValue(numGroups, -1);
  for (unsigned g = 0; g < numGroups; ++g) {
    AutoShardProblem::Node node = p.nodes[first[g]];
    for (double &c : node.cost)
      c *= double(groupSize[g]);
    r.nodes.push_back(std::move(node));
    if (valueOfNode[first[g]] >= 0) {
      AutoShardProblem::Value v = p.values[valueOfNode[first[g]]];
      v.producer = g;
      v.weight = double(groupSize[g]);
      groupValue[g] = int(r.values.size());
      r.values.push_back(std::move(v));
    }
  }
  // A use between two groups, through the same operand: one use weighted
  // by how many it stands for.
  std::map<std::tuple<unsigned, unsigned, unsigned>, unsigned> reducedUse;
  for (auto [ui, u] : llvm::enumerate(p.uses)) {
    unsigned from = out.groupOf[p.values[u.value].producer];
    unsigned to = out.groupOf[u.consumer];
    auto [it, inserted] =
        reducedUse.try_emplace({from, to, position[ui]}, r.uses.size());
    if (!inserted) {
      r.uses[it->second].weight += 1;
      continue;
    }
    AutoShardProblem::Use use = u;
    use.value = unsigned(groupValue[from]);
    use.consumer = to;
    use.weight = 1;
    r.uses.push_back(std::move(use));
  }
  std::map<std::pair<unsigned, unsigned>, bool> tiedGroups;
  for (auto [a, b] : p.ties) {
    unsigned ga = out.groupOf[a], gb = out.groupOf[b];
    if (ga != gb && tiedGroups.try_emplace({ga, gb}, true).second)
      r.ties.push_back({ga, gb});
  }
  indexUses(r);
  return out;
}

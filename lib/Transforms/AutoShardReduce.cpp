//===- AutoShardReduce.cpp - eliminating followers before the ILP ---------===//
//
// Most nodes of a transformer's problem sit on a path: a parameter feeding
// only its broadcast, a broadcast feeding only its add, a constant, a
// unary op between two single-use values. Such a node's best strategy is
// a function of its one or two neighbours' strategies, so it can be
// eliminated exactly (variable elimination, as in dynamic programming on a
// path) before CBC sees the program:
//
//   leaf   a node whose only edge is one use: its neighbour's strategies
//          cost, each, the leaf's cheapest strategy given it (its cost and
//          the move between them);
//   chain  a node reading one single-use value and making one single-use
//          value: the two uses become one from its producer to its
//          consumer, each (layout, target) move costing the node's
//          cheapest strategy between them.
//
// Only values with one use are involved, so no move shared between
// consumers is double-counted, and the reduced program's optimum is the
// whole one's. Memory is not modelled here: a budgeted problem is solved
// whole (docs/auto-sharding.md, "Reduction").
//
//===----------------------------------------------------------------------===//

#include "AutoShardProblem.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

using namespace shardc::detail;

namespace {
/// Seconds of moving layout `l` to target `t` of `v` (0 when the same).
double moveCost(const AutoShardProblem::Value &v, unsigned l, unsigned t) {
  return v.isSame[l][t] ? 0.0 : v.moveSeconds[l][t];
}

/// What the reduction works on: the problem with alive flags.
struct Work {
  AutoShardProblem p;
  std::vector<bool> nodeAlive, useAlive, valueAlive;
  std::vector<int> valueOfNode;                 // the value a node makes
  std::vector<std::vector<unsigned>> inputs;    // alive uses a node reads
  std::vector<std::vector<unsigned>> usesOfValue;
  std::vector<bool> tied;
  std::vector<ReducedProblem::Elimination> eliminated;

  explicit Work(const AutoShardProblem &problem) : p(problem) {
    size_t n = p.nodes.size();
    nodeAlive.assign(n, true);
    useAlive.assign(p.uses.size(), true);
    valueAlive.assign(p.values.size(), true);
    valueOfNode.assign(n, -1);
    inputs.assign(n, {});
    usesOfValue.assign(p.values.size(), {});
    tied.assign(n, false);
    for (auto [vi, v] : llvm::enumerate(p.values))
      valueOfNode[v.producer] = int(vi);
    for (auto [ui, u] : llvm::enumerate(p.uses)) {
      inputs[u.consumer].push_back(ui);
      usesOfValue[u.value].push_back(ui);
    }
    for (auto [a, b] : p.ties)
      tied[a] = tied[b] = true;
  }

  std::vector<unsigned> aliveUses(const std::vector<unsigned> &list) const {
    std::vector<unsigned> out;
    for (unsigned ui : list)
      if (useAlive[ui])
        out.push_back(ui);
    return out;
  }

  /// A term of a recorded elimination: the seconds between the eliminated
  /// node's strategy and its neighbour's through use `ui`.
  ReducedProblem::Term term(unsigned ui, bool eliminatedIsProducer) const {
    const AutoShardProblem::Use &u = p.uses[ui];
    const AutoShardProblem::Value &v = p.values[u.value];
    ReducedProblem::Term t;
    t.neighbour = eliminatedIsProducer ? u.consumer : v.producer;
    t.eliminatedIsProducer = eliminatedIsProducer;
    t.layoutOf = v.layoutOf;
    t.targetOf = u.targetOf;
    t.seconds.assign(v.layoutBytes.size(),
                     std::vector<double>(v.targetBytes.size(), 0));
    t.same = v.isSame;
    for (unsigned l = 0; l < v.layoutBytes.size(); ++l)
      for (unsigned tt = 0; tt < v.targetBytes.size(); ++tt)
        t.seconds[l][tt] = moveCost(v, l, tt);
    return t;
  }

  /// Eliminates `n` if it is a leaf or a chain; true if it did.
  bool tryEliminate(unsigned n);
};
} // namespace

double ReducedProblem::Term::between(unsigned mine, unsigned theirs) const {
  unsigned l = eliminatedIsProducer ? layoutOf[mine] : layoutOf[theirs];
  unsigned t = eliminatedIsProducer ? targetOf[theirs] : targetOf[mine];
  return seconds[l][t];
}

bool ReducedProblem::Term::unchanged(unsigned mine, unsigned theirs) const {
  unsigned l = eliminatedIsProducer ? layoutOf[mine] : layoutOf[theirs];
  unsigned t = eliminatedIsProducer ? targetOf[theirs] : targetOf[mine];
  return same[l][t];
}

bool Work::tryEliminate(unsigned n) {
  if (!nodeAlive[n] || tied[n])
    return false;
  std::vector<unsigned> in = aliveUses(inputs[n]);
  int vi = valueOfNode[n];
  std::vector<unsigned> out =
      vi >= 0 && valueAlive[vi] ? aliveUses(usesOfValue[vi])
                                : std::vector<unsigned>{};
  const std::vector<double> &cost = p.nodes[n].cost;
  ReducedProblem::Elimination record;
  record.node = n;
  record.cost = cost;
  record.bytes.assign(cost.size(), 0);
  if (vi >= 0)
    for (unsigned c = 0; c < cost.size(); ++c)
      record.bytes[c] = p.values[vi].layoutBytes[p.values[vi].layoutOf[c]];

  // Absorbs `n` into the neighbour across the single use `ui`.
  auto absorbLeaf = [&](unsigned ui, bool nIsProducer) {
    ReducedProblem::Term t = term(ui, nIsProducer);
    std::vector<double> &target = p.nodes[t.neighbour].cost;
    for (unsigned s = 0; s < target.size(); ++s) {
      double best = kNoPlan;
      for (unsigned c = 0; c < cost.size(); ++c)
        best = std::min(best, cost[c] + t.between(c, s));
      target[s] += best;
    }
    record.terms.push_back(std::move(t));
    useAlive[ui] = false;
  };

  if (in.empty() && out.size() <= 1) {
    if (out.size() == 1 && p.uses[out[0]].consumer == n)
      return false;
    if (out.size() == 1)
      absorbLeaf(out[0], /*nIsProducer=*/true);
  } else if (out.empty() && in.size() == 1 &&
             aliveUses(usesOfValue[p.uses[in[0]].value]).size() == 1 &&
             p.values[p.uses[in[0]].value].producer != n) {
    absorbLeaf(in[0], /*nIsProducer=*/false);
  } else if (in.size() == 1 && out.size() == 1) {
    unsigned u1 = in[0], u2 = out[0];
    unsigned v1 = p.uses[u1].value;
    if (aliveUses(usesOfValue[v1]).size() != 1 || p.values[v1].producer == n ||
        p.uses[u2].consumer == n)
      return false;
    ReducedProblem::Term before = term(u1, /*eliminatedIsProducer=*/false);
    ReducedProblem::Term after = term(u2, /*eliminatedIsProducer=*/true);
    AutoShardProblem::Value &v = p.values[v1];
    const AutoShardProblem::Value &w = p.values[vi];
    // The producer's value now goes straight to the consumer: its moves
    // are to the consumer's targets, through n's cheapest strategy.
    std::vector<std::vector<double>> seconds(
        v.layoutBytes.size(), std::vector<double>(w.targetBytes.size()));
    for (unsigned l = 0; l < v.layoutBytes.size(); ++l)
      for (unsigned t = 0; t < w.targetBytes.size(); ++t) {
        double best = kNoPlan;
        for (unsigned c = 0; c < cost.size(); ++c)
          best = std::min(best, cost[c] + before.seconds[l][before.targetOf[c]] +
                                    after.seconds[after.layoutOf[c]][t]);
        seconds[l][t] = best;
      }
    v.targetBytes = w.targetBytes;
    v.moveSeconds = std::move(seconds);
    v.isSame.assign(v.layoutBytes.size(),
                    std::vector<bool>(w.targetBytes.size(), false));
    // The consumer's use keeps its place among its operands.
    p.uses[u2].value = v1;
    usesOfValue[v1].push_back(u2);
    useAlive[u1] = false;
    valueAlive[vi] = false;
    record.terms.push_back(std::move(before));
    record.terms.push_back(std::move(after));
  } else {
    return false;
  }
  if (vi >= 0)
    valueAlive[vi] = false;
  nodeAlive[n] = false;
  eliminated.push_back(std::move(record));
  return true;
}

std::optional<ReducedProblem>
shardc::detail::reduceFollowers(const AutoShardProblem &p) {
  if (p.memoryBudget)
    return std::nullopt;
  Work work(p);
  // Sweeps in program order until nothing is eliminated: a leaf's
  // neighbour may become a leaf or a chain.
  for (bool changed = true; changed;) {
    changed = false;
    for (unsigned n = 0; n < p.nodes.size(); ++n)
      changed |= work.tryEliminate(n);
  }
  if (work.eliminated.empty())
    return std::nullopt;

  ReducedProblem out;
  out.nodeOf.assign(p.nodes.size(), -1);
  AutoShardProblem &r = out.reduced;
  r.numPoints = p.numPoints;
  r.slackBasis = p.slackBasis;
  for (unsigned n = 0; n < p.nodes.size(); ++n)
    if (work.nodeAlive[n]) {
      out.nodeOf[n] = int(r.nodes.size());
      r.nodes.push_back(work.p.nodes[n]);
    }
  std::vector<int> valueIndex(p.values.size(), -1);
  for (auto [vi, v] : llvm::enumerate(work.p.values)) {
    if (!work.valueAlive[vi] || !work.nodeAlive[v.producer])
      continue;
    valueIndex[vi] = int(r.values.size());
    AutoShardProblem::Value copy = v;
    copy.producer = unsigned(out.nodeOf[v.producer]);
    r.values.push_back(std::move(copy));
  }
  for (auto [ui, u] : llvm::enumerate(work.p.uses)) {
    if (!work.useAlive[ui])
      continue;
    AutoShardProblem::Use copy = u;
    copy.value = unsigned(valueIndex[u.value]);
    copy.consumer = unsigned(out.nodeOf[u.consumer]);
    r.uses.push_back(std::move(copy));
  }
  for (auto [a, b] : p.ties)
    r.ties.push_back({unsigned(out.nodeOf[a]), unsigned(out.nodeOf[b])});
  indexUses(r);
  out.eliminated = std::move(work.eliminated);
  return out;
}

std::vector<unsigned>
shardc::detail::expandReduced(const ReducedProblem &r,
                              const std::vector<unsigned> &reducedStrategy) {
  std::vector<unsigned> strategy(r.nodeOf.size(), 0);
  for (auto [n, m] : llvm::enumerate(r.nodeOf))
    if (m >= 0)
      strategy[n] = reducedStrategy[m];
  // Last eliminated first: its neighbours then were still in the program,
  // or eliminated after it, so chosen by now. On a tie in seconds
  // (kEqualSeconds), the strategy with fewer moves (a free slice of a
  // replicated argument still holds the whole of it), then the one making
  // fewer bytes, then the first.
  for (const ReducedProblem::Elimination &e : llvm::reverse(r.eliminated)) {
    unsigned best = 0;
    double bestSeconds = kNoPlan;
    int bestMoves = INT32_MAX;
    int64_t bestBytes = INT64_MAX;
    for (unsigned c = 0; c < e.cost.size(); ++c) {
      double seconds = e.cost[c];
      int moves = 0;
      for (const ReducedProblem::Term &t : e.terms) {
        seconds += t.between(c, strategy[t.neighbour]);
        moves += !t.unchanged(c, strategy[t.neighbour]);
      }
      bool tie = std::abs(seconds - bestSeconds) <=
                 1e-9 * std::max(std::abs(seconds), 1e-12);
      if ((!tie && seconds < bestSeconds) ||
          (tie && (moves < bestMoves ||
                   (moves == bestMoves && e.bytes[c] < bestBytes)))) {
        best = c;
        bestSeconds = seconds;
        bestMoves = moves;
        bestBytes = e.bytes[c];
      }
    }
    strategy[e.node] = best;
  }
  return strategy;
}

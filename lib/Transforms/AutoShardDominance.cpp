//===- AutoShardDominance.cpp - strategies no plan needs ------------------===//
//
// A strategy `b` of a node is dominated by another strategy `a` of it when,
// whatever its neighbours choose, switching the node from `b` to `a` never
// makes the plan slower: `a`'s own seconds, plus, for each edge, the most
// that edge can cost more with `a` than with `b`, is at most `b`'s. Some
// optimal plan then avoids `b`, and the program need not offer it: its
// column, and the move columns of the layouts and targets only it made or
// needed (docs/auto-sharding.md, "Dominated strategies"). On a transformer
// step this removes about a fifth of the move columns, which is most of
// the relaxation's work (Clp's dual simplex prices every column at every
// iteration).
//
// The bound is the program's own: when it prices each consumer's move on
// its own (a large program: AutoShardSolver.cpp), each use's move is one
// term; when a move serves every consumer needing its target, a value's
// moves are bounded for any set of consumers sharing them. Either way,
// with a clustered problem's weights, the pruned program's optimum is the
// whole one's. Without a budget only: a layout's bytes do not enter the
// bound.
//
//===----------------------------------------------------------------------===//

#include "AutoShardProblem.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <map>

using namespace shardc::detail;

/// Rounds of pruning: a neighbour's pruned strategies narrow what an edge
/// can cost, so a second round prunes a little more; the third almost
/// nothing.
static constexpr int kPruneRounds = 3;

namespace {
/// Seconds of moving layout `l` to target `t` of `v` (0 when the same).
double moveCost(const AutoShardProblem::Value &v, unsigned l, unsigned t) {
  return v.isSame[l][t] ? 0.0 : v.moveSeconds[l][t];
}

/// The most `x` (with the new strategy) can cost over `y` (with the old),
/// `weight` times: none when the old pairing is impossible (the neighbour
/// cannot make it), unbounded when only the new one is.
double excess(double x, double y, double weight) {
  if (y == kNoPlan)
    return -kNoPlan;
  if (x == kNoPlan)
    return kNoPlan;
  return (x - y) * weight;
}

class Pruner {
public:
  Pruner(const AutoShardProblem &p, bool perConsumer)
      : p(p), perConsumer(perConsumer) {
    alive.resize(p.nodes.size());
    for (auto [n, node] : llvm::enumerate(p.nodes))
      alive[n].assign(node.cost.size(), true);
    usesOfValue.resize(p.values.size());
    for (auto [ui, u] : llvm::enumerate(p.uses))
      usesOfValue[u.value].push_back(unsigned(ui));
    valueOfNode.assign(p.nodes.size(), -1);
    for (auto [vi, v] : llvm::enumerate(p.values))
      valueOfNode[v.producer] = int(vi);
    frozen.assign(p.nodes.size(), false);
    for (auto [a, b] : p.ties)
      frozen[a] = frozen[b] = true;
    for (const AutoShardProblem::Use &u : p.uses)
      if (u.consumer == p.values[u.value].producer)
        frozen[u.consumer] = true;
  }

  /// One round over every node; whether anything was pruned.
  bool round() {
    bool changed = false;
    for (unsigned n = 0; n < p.nodes.size(); ++n)
      if (!frozen[n])
        changed |= pruneNode(n);
    return changed;
  }

  std::vector<std::vector<bool>> alive;

private:
  /// The targets `u`'s consumer may still need, the layouts `v`'s producer
  /// may still make.
  std::vector<unsigned> targetsLeft(const AutoShardProblem::Use &u) const {
    std::vector<bool> seen(p.values[u.value].targetBytes.size(), false);
    for (auto [s, t] : llvm::enumerate(u.targetOf))
      if (alive[u.consumer][s])
        seen[t] = true;
    std::vector<unsigned> out;
    for (auto [t, yes] : llvm::enumerate(seen))
      if (yes)
        out.push_back(unsigned(t));
    return out;
  }
  std::vector<unsigned> layoutsLeft(const AutoShardProblem::Value &v) const {
    std::vector<bool> seen(v.layoutBytes.size(), false);
    for (auto [s, l] : llvm::enumerate(v.layoutOf))
      if (alive[v.producer][s])
        seen[l] = true;
    std::vector<unsigned> out;
    for (auto [l, yes] : llvm::enumerate(seen))
      if (yes)
        out.push_back(unsigned(l));
    return out;
  }

  bool pruneNode(unsigned n);

  const AutoShardProblem &p;
  /// The program prices each consumer's move on its own.
  bool perConsumer;
  std::vector<std::vector<unsigned>> usesOfValue;
  std::vector<int> valueOfNode;
  /// Tied to another node (the strategy indices must stay the same), or
  /// reading its own value.
  std::vector<bool> frozen;
};
} // namespace

bool Pruner::pruneNode(unsigned n) {
  const std::vector<double> &cost = p.nodes[n].cost;
  size_t numStrategies = cost.size();
  // bound[a][b]: the most the plan can cost more with `a` than with `b`.
  std::vector<std::vector<double>> bound(numStrategies,
                                         std::vector<double>(numStrategies));
  for (unsigned a = 0; a < numStrategies; ++a)
    for (unsigned b = 0; b < numStrategies; ++b)
      bound[a][b] = excess(cost[a], cost[b], 1.0);
  // (kNoPlan: `a` cannot be at least as fast; -kNoPlan: no plan has `b`.)
  auto add = [&](unsigned a, unsigned b, double x) {
    double &slot = bound[a][b];
    if (slot == kNoPlan || slot == -kNoPlan)
      return;
    slot = x == kNoPlan || x == -kNoPlan ? x : slot + x;
  };

  // The value `n` makes: its moves to every consumer's target.
  if (valueOfNode[n] >= 0) {
    const AutoShardProblem::Value &v = p.values[valueOfNode[n]];
    const std::vector<unsigned> &uses = usesOfValue[valueOfNode[n]];
    size_t numLayouts = v.layoutBytes.size();
    // byLayout[la][lb] over the layouts the node makes.
    std::vector<std::vector<double>> byLayout(
        numLayouts, std::vector<double>(numLayouts, 0));
    std::vector<std::vector<unsigned>> wanted;
    for (unsigned ui : uses)
      wanted.push_back(targetsLeft(p.uses[ui]));
    for (unsigned la = 0; la < numLayouts; ++la)
      for (unsigned lb = 0; lb < numLayouts; ++lb) {
        if (la == lb)
          continue;
        if (uses.size() == 1 || perConsumer) {
          // Each consumer's move priced on its own (as the program does
          // for a value read once, and for every value when it prices
          // moves per consumer): the most each can cost more.
          double sum = 0;
          for (auto [i, ui] : llvm::enumerate(uses)) {
            const AutoShardProblem::Use &u = p.uses[ui];
            double weight = perConsumer ? u.weight : 0;
            double most = -kNoPlan;
            for (unsigned t : wanted[i]) {
              double x = moveCost(v, la, t), y = moveCost(v, lb, t);
              double w = perConsumer ? weight
                         : x > y     ? std::max(u.weight, v.weight)
                                     : std::min(u.weight, v.weight);
              most = std::max(most, excess(x, y, w));
            }
            if (most == kNoPlan || most == -kNoPlan || sum == kNoPlan ||
                sum == -kNoPlan)
              sum = sum == kNoPlan || sum == -kNoPlan ? sum : most;
            else
              sum += most;
          }
          byLayout[la][lb] = sum;
          continue;
        }
        // Several: each target's move made once (v.weight), or once per
        // consumer (u.weight); only the moves `la` makes dearer count.
        double shared = 0, perConsumer = 0;
        std::vector<bool> counted(v.targetBytes.size(), false);
        for (auto [i, ui] : llvm::enumerate(uses)) {
          double most = 0;
          for (unsigned t : wanted[i]) {
            double x = moveCost(v, la, t), y = moveCost(v, lb, t);
            if (y == kNoPlan)
              continue;
            double more = x == kNoPlan ? kNoPlan : std::max(x - y, 0.0);
            most = std::max(most, more);
            if (!counted[t]) {
              counted[t] = true;
              shared = more == kNoPlan || shared == kNoPlan
                           ? kNoPlan
                           : shared + more * v.weight;
            }
          }
          perConsumer = most == kNoPlan || perConsumer == kNoPlan
                            ? kNoPlan
                            : perConsumer + most * p.uses[ui].weight;
        }
        byLayout[la][lb] = std::max(shared, perConsumer);
      }
    for (unsigned a = 0; a < numStrategies; ++a)
      for (unsigned b = 0; b < numStrategies; ++b)
        add(a, b, byLayout[v.layoutOf[a]][v.layoutOf[b]]);
  }

  // The values `n` reads: the move from the producer's layout to the
  // target `n` needs.
  for (unsigned ui : p.usesOfNode[n]) {
    const AutoShardProblem::Use &u = p.uses[ui];
    if (u.consumer != n)
      continue;
    const AutoShardProblem::Value &v = p.values[u.value];
    bool single = usesOfValue[u.value].size() == 1 || perConsumer;
    std::vector<unsigned> made = layoutsLeft(v);
    size_t numTargets = v.targetBytes.size();
    std::vector<std::vector<double>> byTarget(
        numTargets, std::vector<double>(numTargets, 0));
    std::vector<bool> needed(numTargets, false);
    for (unsigned t : u.targetOf)
      needed[t] = true;
    for (unsigned ta = 0; ta < numTargets; ++ta)
      for (unsigned tb = 0; tb < numTargets; ++tb) {
        if (ta == tb || !needed[ta] || !needed[tb])
          continue;
        double most = -kNoPlan;
        for (unsigned l : made) {
          double x = moveCost(v, l, ta), y = moveCost(v, l, tb);
          double more;
          if (perConsumer)
            more = excess(x, y, u.weight);
          else if (single)
            more = excess(x, y,
                          x > y ? std::max(u.weight, v.weight)
                                : std::min(u.weight, v.weight));
          else if (y == kNoPlan)
            more = -kNoPlan;
          else if (x == kNoPlan)
            more = kNoPlan;
          else
            // Another consumer may share the move to `tb` (then dropping
            // it saves nothing) and none the one to `ta`.
            more = std::max((x - y) * u.weight, x * v.weight);
          most = std::max(most, more);
        }
        byTarget[ta][tb] = most == -kNoPlan ? 0 : most;
      }
    for (unsigned a = 0; a < numStrategies; ++a)
      for (unsigned b = 0; b < numStrategies; ++b)
        add(a, b, byTarget[u.targetOf[a]][u.targetOf[b]]);
  }

  bool changed = false;
  for (unsigned b = 0; b < numStrategies; ++b) {
    if (!alive[n][b])
      continue;
    for (unsigned a = 0; a < numStrategies; ++a) {
      if (a == b || !alive[n][a] || cost[a] == kNoPlan)
        continue;
      // Strictly faster, or equal both ways (then the first stays). A
      // strategy only tied one way stays: with moves priced per consumer,
      // the bound cannot see a move `b` shares with another consumer, and
      // keeping such ties kept the 2-layer Llama step's plan at least as
      // fast as the unpruned program's.
      double more = bound[a][b];
      if (more < 0 || (more <= 0 && a < b && bound[b][a] <= 0)) {
        alive[n][b] = false;
        changed = true;
        break;
      }
    }
  }
  return changed;
}

std::optional<PrunedProblem>
shardc::detail::pruneDominated(const AutoShardProblem &p,
                               bool movesPerConsumer) {
  if (p.memoryBudget)
    return std::nullopt;
  Pruner pruner(p, movesPerConsumer);
  bool any = false;
  for (int round = 0; round < kPruneRounds; ++round) {
    if (!pruner.round())
      break;
    any = true;
  }
  if (!any)
    return std::nullopt;

  PrunedProblem out;
  AutoShardProblem &r = out.reduced;
  r = p;
  const std::vector<std::vector<bool>> &alive = pruner.alive;
  // Each node's strategies left, and their new indices.
  std::vector<std::vector<int>> newIndex(p.nodes.size());
  out.strategiesOf.resize(p.nodes.size());
  for (auto [n, node] : llvm::enumerate(r.nodes)) {
    std::vector<double> cost;
    newIndex[n].assign(node.cost.size(), -1);
    for (auto [s, c] : llvm::enumerate(node.cost))
      if (alive[n][s]) {
        newIndex[n][s] = int(cost.size());
        out.strategiesOf[n].push_back(unsigned(s));
        cost.push_back(c);
      }
    node.cost = std::move(cost);
  }
  // Per value, the layouts still made and the targets still needed,
  // renumbered in order.
  std::vector<std::vector<int>> targetIndex(p.values.size());
  for (auto [vi, v] : llvm::enumerate(r.values))
    targetIndex[vi].assign(v.targetBytes.size(), -1);
  for (const AutoShardProblem::Use &u : p.uses)
    for (auto [s, t] : llvm::enumerate(u.targetOf))
      if (alive[u.consumer][s])
        targetIndex[u.value][t] = 0;
  for (auto [vi, v] : llvm::enumerate(r.values)) {
    const AutoShardProblem::Value &old = p.values[vi];
    std::vector<int> layoutIndex(old.layoutBytes.size(), -1);
    std::vector<unsigned> layoutOf;
    std::vector<unsigned> keptLayouts;
    for (auto [s, l] : llvm::enumerate(old.layoutOf)) {
      if (!alive[old.producer][s])
        continue;
      if (layoutIndex[l] < 0) {
        layoutIndex[l] = int(keptLayouts.size());
        keptLayouts.push_back(l);
      }
      layoutOf.push_back(unsigned(layoutIndex[l]));
    }
    std::vector<unsigned> keptTargets;
    for (auto [t, index] : llvm::enumerate(targetIndex[vi]))
      if (index >= 0) {
        index = int(keptTargets.size());
        keptTargets.push_back(unsigned(t));
      }
    v.layoutOf = std::move(layoutOf);
    v.layoutBytes.clear();
    v.moveSeconds.clear();
    v.isSame.clear();
    for (unsigned l : keptLayouts) {
      v.layoutBytes.push_back(old.layoutBytes[l]);
      std::vector<double> &seconds = v.moveSeconds.emplace_back();
      std::vector<bool> &same = v.isSame.emplace_back();
      for (unsigned t : keptTargets) {
        seconds.push_back(old.moveSeconds[l][t]);
        same.push_back(old.isSame[l][t]);
      }
    }
    v.targetBytes.clear();
    for (unsigned t : keptTargets)
      v.targetBytes.push_back(old.targetBytes[t]);
  }
  for (auto [ui, u] : llvm::enumerate(r.uses)) {
    const AutoShardProblem::Use &old = p.uses[ui];
    std::vector<unsigned> targetOf;
    for (auto [s, t] : llvm::enumerate(old.targetOf))
      if (alive[old.consumer][s])
        targetOf.push_back(unsigned(targetIndex[old.value][t]));
    u.targetOf = std::move(targetOf);
  }
  indexUses(r);
  return out;
}

std::vector<unsigned>
shardc::detail::expandPruned(const PrunedProblem &r,
                             const std::vector<unsigned> &strategy) {
  std::vector<unsigned> out;
  for (auto [n, s] : llvm::enumerate(strategy))
    out.push_back(r.strategiesOf[n][s]);
  return out;
}

//===- AutoShardSearch.cpp - pricing a plan, and the local search ---------===//
//
// What a plan of an AutoShardProblem costs (seconds, peak bytes), and the
// local search that stands in for CBC when the time limit leaves none for
// it, starts it off, and improves the clustered plans
// (docs/auto-sharding.md, "The fallback").
//
//===----------------------------------------------------------------------===//

#include "AutoShardProblem.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <climits>
#include <cmath>

using namespace mlir;
using namespace shardc::detail;

//===----------------------------------------------------------------------===//
// Evaluating a plan
//===----------------------------------------------------------------------===//

double shardc::detail::evaluateSeconds(const AutoShardProblem &p,
                                       const std::vector<unsigned> &strategy) {
  double total = 0;
  for (auto [n, node] : llvm::enumerate(p.nodes))
    total += node.cost[strategy[n]];
  forEachMove(p, strategy,
              [&](const AutoShardProblem::Value &v, unsigned l, unsigned t) {
                total += v.moveSeconds[l][t] * v.weight;
              });
  return total;
}

int64_t
shardc::detail::evaluatePeakBytes(const AutoShardProblem &p,
                                  const std::vector<unsigned> &strategy) {
  // Changes of the live bytes, summed into the live bytes at each point.
  std::vector<int64_t> delta(p.numPoints + 1, 0);
  auto hold = [&](int64_t from, int64_t to, int64_t bytes) {
    from = std::max<int64_t>(from, 0);
    to = std::min<int64_t>(to, p.numPoints - 1);
    if (from > to)
      return;
    delta[from] += bytes;
    delta[to + 1] -= bytes;
  };
  // A value's own layout lives until its last consumer reading it as it
  // is, and at least until its first consumer (which copies it). A moved
  // copy lives from its first consumer to its last (a hoisted constant's
  // from the start).
  std::vector<int64_t> firstUse(p.values.size(), INT64_MAX),
      lastDirect(p.values.size(), -1);
  std::vector<std::vector<std::pair<int64_t, int64_t>>> copies(p.values.size());
  for (const AutoShardProblem::Use &u : p.uses) {
    const AutoShardProblem::Value &v = p.values[u.value];
    unsigned l = v.layoutOf[strategy[v.producer]];
    unsigned t = u.targetOf[strategy[u.consumer]];
    firstUse[u.value] = std::min(firstUse[u.value], u.point);
    if (v.isSame[l][t] && !v.hoisted) {
      lastDirect[u.value] = std::max(lastDirect[u.value], u.point);
      continue;
    }
    auto &ranges = copies[u.value];
    if (ranges.empty())
      ranges.assign(v.targetBytes.size(), {INT64_MAX, -1});
    int64_t first = v.hoisted ? 0 : u.point;
    ranges[t].first = std::min(ranges[t].first, first);
    ranges[t].second = std::max(ranges[t].second, u.point);
  }
  for (auto [vi, v] : llvm::enumerate(p.values)) {
    for (auto [t, range] : llvm::enumerate(copies[vi]))
      if (range.second >= 0)
        hold(range.first, range.second, v.targetBytes[t]);
    if (v.hoisted)
      continue;
    // A copy is made from it when its first consumer needing it runs.
    int64_t end =
        v.heldToEnd
            ? v.endPoint
            : std::max(firstUse[vi] == INT64_MAX ? v.endPoint : firstUse[vi],
                       lastDirect[vi]);
    for (auto &range : copies[vi])
      if (range.second >= 0)
        end = std::max(end, range.first);
    hold(v.defPoint, end, v.layoutBytes[v.layoutOf[strategy[v.producer]]]);
  }
  int64_t live = 0, peak = 0;
  for (int64_t i = 0; i < p.numPoints; ++i) {
    live += delta[i];
    peak = std::max(peak, live);
  }
  return peak;
}

int64_t
shardc::detail::evaluateHeldBytes(const AutoShardProblem &p,
                                  const std::vector<unsigned> &strategy) {
  int64_t total = 0;
  for (const AutoShardProblem::Value &v : p.values)
    total += v.layoutBytes[v.layoutOf[strategy[v.producer]]];
  forEachMove(p, strategy,
              [&](const AutoShardProblem::Value &v, unsigned, unsigned t) {
                total += v.targetBytes[t];
              });
  return total;
}

bool shardc::detail::isBetterPlan(const AutoShardProblem &p,
                                  const std::vector<unsigned> &a,
                                  const std::vector<unsigned> &b) {
  double sa = evaluateSeconds(p, a), sb = evaluateSeconds(p, b);
  if (!std::isfinite(sa) || !std::isfinite(sb)) {
    if (sa != sb)
      return sa < sb;
  } else {
    double tolerance = equalSecondsTolerance(std::max(sa, sb));
    if (sa < sb - tolerance)
      return true;
    if (sa > sb + tolerance)
      return false;
  }
  int64_t peakA = evaluatePeakBytes(p, a), peakB = evaluatePeakBytes(p, b);
  if (peakA != peakB)
    return peakA < peakB;
  return evaluateHeldBytes(p, a) < evaluateHeldBytes(p, b);
}

void shardc::detail::indexUses(AutoShardProblem &p) {
  p.usesOfNode.assign(p.nodes.size(), {});
  for (auto [ui, u] : llvm::enumerate(p.uses)) {
    unsigned producer = p.values[u.value].producer;
    p.usesOfNode[producer].push_back(ui);
    if (u.consumer != producer)
      p.usesOfNode[u.consumer].push_back(ui);
  }
}

double shardc::detail::localSeconds(const AutoShardProblem &p,
                                    const std::vector<unsigned> &strategy,
                                    unsigned n, unsigned s) {
  double total = p.nodes[n].cost[s];
  auto add = [&](const AutoShardProblem::Use &u) {
    const AutoShardProblem::Value &v = p.values[u.value];
    if (u.consumer != n && v.producer != n)
      return;
    unsigned ps = v.producer == n ? s : strategy[v.producer];
    unsigned cs = u.consumer == n ? s : strategy[u.consumer];
    unsigned l = v.layoutOf[ps], t = u.targetOf[cs];
    if (!v.isSame[l][t])
      total += v.moveSeconds[l][t] * u.weight;
  };
  forEachUseNear(p, n, add);
  return total;
}

//===----------------------------------------------------------------------===//
// The local search (the fallback)
//===----------------------------------------------------------------------===//

/// Greedy in program order (each node the strategy cheapest given what its
/// producers chose), then rounds of moving one node (with the nodes tied to
/// it) to its cheapest strategy given all its neighbours, until no move
/// helps. Deterministic: nodes in order; on ties in the rounds, the
/// strategy holding fewer bytes, else the current one (the first in the
/// greedy pass).
/// With `smallest`, the search starts instead from every node making its
/// smallest layout (the most split plan), which fits a budget if any does
/// and the search then makes faster.
/// With `start`, the rounds start from it.
/// With `allowed` (followLayout), only the greedy pass runs: it takes for
/// each node, among the listed strategies (any if none), the one reading
/// its producers' layouts with the fewest moves, then the cheapest given
/// them, as the partitioner computes an op where its operands lie: a split
/// contraction stays a pending sum, and a linear op passes it on, until a
/// consumer needs it whole (one-node moves cannot make such a chain once
/// its ops are priced against consumers that need whole values).
static std::vector<unsigned>
search(const AutoShardProblem &p, bool smallest,
       const std::vector<unsigned> *start,
       const std::vector<std::vector<unsigned>> *allowed) {
  size_t numNodes = p.nodes.size();
  std::vector<unsigned> strategy =
      start ? *start : std::vector<unsigned>(numNodes, 0);
  std::vector<std::vector<unsigned>> tiedWith(numNodes);
  for (auto [a, b] : p.ties) {
    tiedWith[a].push_back(b);
    tiedWith[b].push_back(a);
  }
  // Node `n` with strategy `s` given its producers alone: the moves into
  // it, and its seconds with them.
  auto givenProducers = [&](unsigned n, unsigned s) {
    std::pair<unsigned, double> c = {0, p.nodes[n].cost[s]};
    auto add = [&](const AutoShardProblem::Use &u) {
      const AutoShardProblem::Value &v = p.values[u.value];
      if (u.consumer != n || v.producer == n)
        return;
      unsigned l = v.layoutOf[strategy[v.producer]], t = u.targetOf[s];
      if (!v.isSame[l][t]) {
        ++c.first;
        c.second += v.moveSeconds[l][t] * u.weight;
      }
    };
    forEachUseNear(p, n, add);
    return c;
  };
  // In the rounds, what a move changes in the plan's seconds: the nodes'
  // own and, for every value they make or read, its moves, each target
  // paid once however many consumers need it (as evaluateSeconds counts
  // them; pricing each consumer's move on its own made the rounds gather a
  // vocabulary-split softmax rather than sum it where it lies). How many
  // uses need each target of each value is kept up to date through the
  // rounds, so that pricing a move takes a value's targets, not its uses
  // (a constant or the learning rate is read by thousands of ops).
  std::vector<int> valueOfNode(numNodes, -1);
  for (auto [vi, v] : llvm::enumerate(p.values))
    valueOfNode[v.producer] = int(vi);
  bool inRounds = false;
  // Seconds closer than this are equal: a femtosecond until the rounds,
  // then kEqualSeconds of the plan's.
  double tie = 1e-15;
  std::vector<std::vector<int>> needed;
  auto countNeeds = [&](unsigned n, int delta) {
    for (unsigned ui : p.usesOfNode[n]) {
      const AutoShardProblem::Use &u = p.uses[ui];
      if (u.consumer == n)
        needed[u.value][u.targetOf[strategy[n]]] += delta;
    }
  };
  std::vector<std::vector<unsigned>> usesOfValue(p.values.size());
  for (auto [ui, u] : llvm::enumerate(p.uses))
    usesOfValue[u.value].push_back(unsigned(ui));
  SmallVector<unsigned, 8> touched, group, paid;
  SmallVector<std::pair<unsigned, unsigned>, 8> changedUses; // use, target
  // What roundCost last priced holds (the touched values' layouts and
  // copies, as evaluateHeldBytes counts them): the tie-break among equally
  // fast strategies.
  int64_t roundBytes = 0;
  auto roundCost = [&](unsigned n, unsigned s) {
    group.assign(1, n);
    group.append(tiedWith[n].begin(), tiedWith[n].end());
    touched.clear();
    changedUses.clear();
    double c = 0;
    roundBytes = 0;
    for (unsigned m : group) {
      c += p.nodes[m].cost[s];
      if (valueOfNode[m] >= 0 && !llvm::is_contained(touched, valueOfNode[m]))
        touched.push_back(unsigned(valueOfNode[m]));
      for (unsigned ui : p.usesOfNode[m]) {
        const AutoShardProblem::Use &u = p.uses[ui];
        if (u.consumer != m)
          continue;
        changedUses.push_back({ui, u.targetOf[s]});
        if (!llvm::is_contained(touched, u.value))
          touched.push_back(u.value);
      }
    }
    for (unsigned vi : touched) {
      const AutoShardProblem::Value &v = p.values[vi];
      unsigned l = v.layoutOf[llvm::is_contained(group, v.producer)
                                  ? s
                                  : strategy[v.producer]];
      roundBytes += v.layoutBytes[l];
      // A value read a few times: its uses' targets, each paid once.
      if (usesOfValue[vi].size() < v.targetBytes.size()) {
        paid.clear();
        for (unsigned ui : usesOfValue[vi]) {
          const AutoShardProblem::Use &u = p.uses[ui];
          unsigned t = u.targetOf[strategy[u.consumer]];
          for (auto [changed, target] : changedUses)
            if (changed == ui)
              t = target;
          if (v.isSame[l][t] || llvm::is_contained(paid, t))
            continue;
          paid.push_back(t);
          c += v.moveSeconds[l][t] * v.weight;
          roundBytes += v.targetBytes[t];
        }
        continue;
      }
      // Read by many: the targets, by how many uses need each.
      for (unsigned t = 0; t < v.targetBytes.size(); ++t) {
        if (v.isSame[l][t])
          continue;
        int count = needed[vi][t];
        for (auto [ui, target] : changedUses) {
          const AutoShardProblem::Use &u = p.uses[ui];
          if (u.value != vi)
            continue;
          count -= u.targetOf[strategy[u.consumer]] == t;
          count += target == t;
        }
        if (count > 0) {
          c += v.moveSeconds[l][t] * v.weight;
          roundBytes += v.targetBytes[t];
        }
      }
    }
    return c;
  };
  auto cost = [&](unsigned n, unsigned s) {
    if (inRounds)
      return roundCost(n, s);
    // Under a budget, the whole plan is priced, its excess memory at a
    // second per byte: any plan that fits beats any that does not.
    if (p.memoryBudget && !allowed) {
      unsigned old = strategy[n];
      strategy[n] = s;
      for (unsigned m : tiedWith[n])
        strategy[m] = s;
      double c = evaluateSeconds(p, strategy) +
                 double(std::max<int64_t>(
                     evaluatePeakBytes(p, strategy) - *p.memoryBudget, 0));
      strategy[n] = old;
      for (unsigned m : tiedWith[n])
        strategy[m] = old;
      return c;
    }
    double c = localSeconds(p, strategy, n, s);
    for (unsigned m : tiedWith[n])
      c += localSeconds(p, strategy, m, s);
    return c;
  };
  // A node tied to none, in the rounds: what its strategy changes, prepared
  // once for all its candidates (the targets its value's consumers need;
  // per value it reads, the layout it is in and whether other consumers
  // need a target anyway), so that a candidate costs about its uses.
  struct Read {
    unsigned value, layout;
    SmallVector<unsigned, 2> uses, current; // n's uses, their targets now
  };
  SmallVector<unsigned, 8> ownTargets;
  SmallVector<Read, 4> reads;
  auto prepare = [&](unsigned n) {
    ownTargets.clear();
    reads.clear();
    if (valueOfNode[n] >= 0)
      for (unsigned ui : usesOfValue[valueOfNode[n]]) {
        unsigned t = p.uses[ui].targetOf[strategy[p.uses[ui].consumer]];
        if (!llvm::is_contained(ownTargets, t))
          ownTargets.push_back(t);
      }
    for (unsigned ui : p.usesOfNode[n]) {
      const AutoShardProblem::Use &u = p.uses[ui];
      if (u.consumer != n)
        continue;
      Read *r =
          llvm::find_if(reads, [&](Read &r) { return r.value == u.value; });
      if (r == reads.end()) {
        const AutoShardProblem::Value &v = p.values[u.value];
        reads.push_back({u.value, v.layoutOf[strategy[v.producer]], {}, {}});
        r = &reads.back();
      }
      r->uses.push_back(ui);
      r->current.push_back(u.targetOf[strategy[n]]);
    }
  };
  auto preparedCost = [&](unsigned n, unsigned s) {
    double c = p.nodes[n].cost[s];
    if (valueOfNode[n] >= 0) {
      const AutoShardProblem::Value &v = p.values[valueOfNode[n]];
      unsigned l = v.layoutOf[s];
      for (unsigned t : ownTargets)
        if (!v.isSame[l][t])
          c += v.moveSeconds[l][t] * v.weight;
    }
    for (const Read &r : reads) {
      const AutoShardProblem::Value &v = p.values[r.value];
      paid.clear();
      for (unsigned ui : r.uses) {
        unsigned t = p.uses[ui].targetOf[s];
        if (v.isSame[r.layout][t] || llvm::is_contained(paid, t))
          continue;
        paid.push_back(t);
        // Paid already if another consumer needs it too.
        if (needed[r.value][t] > llvm::count(r.current, t))
          continue;
        c += v.moveSeconds[r.layout][t] * v.weight;
      }
    }
    return c;
  };
  auto improve = [&](unsigned n) {
    bool prepared = inRounds && tiedWith[n].empty();
    if (prepared)
      prepare(n);
    auto costOf = [&](unsigned s) {
      return prepared ? preparedCost(n, s) : cost(n, s);
    };
    unsigned best = strategy[n];
    double bestCost = costOf(best);
    // In the rounds, among equally fast strategies the one holding fewer
    // bytes (else the current one): the plan is then the
    // same whichever of equally fast plans it started from, where one
    // node's moves join them.
    int64_t bestBytes = -1; // not yet priced
    auto bytesOf = [&](unsigned s) {
      roundCost(n, s);
      return roundBytes;
    };
    auto consider = [&](unsigned s) {
      if (s == best)
        return;
      double c = costOf(s);
      if (c < bestCost - tie) {
        best = s;
        bestCost = c;
        bestBytes = -1;
        return;
      }
      if (!inRounds || c > bestCost + tie)
        return;
      if (bestBytes < 0)
        bestBytes = bytesOf(best);
      int64_t bytes = bytesOf(s);
      if (bytes < bestBytes) {
        best = s;
        bestCost = c;
        bestBytes = bytes;
      }
    };
    if (allowed && !(*allowed)[n].empty()) {
      for (unsigned s : (*allowed)[n])
        consider(s);
    } else {
      for (unsigned s = 0; s < p.nodes[n].cost.size(); ++s)
        consider(s);
    }
    bool changed = best != strategy[n];
    if (changed && inRounds) {
      countNeeds(n, -1);
      for (unsigned m : tiedWith[n])
        countNeeds(m, -1);
    }
    strategy[n] = best;
    for (unsigned m : tiedWith[n])
      strategy[m] = best;
    if (changed && inRounds) {
      countNeeds(n, 1);
      for (unsigned m : tiedWith[n])
        countNeeds(m, 1);
    }
    return changed;
  };
  if (start) {
    // Already a plan: only the rounds.
  } else if (smallest) {
    std::vector<int64_t> outBytes(numNodes, INT64_MAX);
    std::vector<const AutoShardProblem::Value *> valueOf(numNodes, nullptr);
    for (const AutoShardProblem::Value &v : p.values)
      valueOf[v.producer] = &v;
    for (unsigned n = 0; n < numNodes; ++n) {
      const AutoShardProblem::Value *v = valueOf[n];
      if (!v)
        continue;
      for (unsigned s = 0; s < v->layoutOf.size(); ++s)
        if (v->layoutBytes[v->layoutOf[s]] < outBytes[n]) {
          outBytes[n] = v->layoutBytes[v->layoutOf[s]];
          strategy[n] = s;
        }
    }
    for (auto [a, b] : p.ties)
      strategy[b] = strategy[a];
  } else if (allowed) {
    for (unsigned n = 0; n < numNodes; ++n)
      if (!(*allowed)[n].empty())
        strategy[n] = (*allowed)[n].front();
    for (unsigned n = 0; n < numNodes; ++n) {
      std::pair<unsigned, double> bestCost = {UINT_MAX, 0};
      unsigned best = strategy[n];
      auto consider = [&](unsigned s) {
        std::pair<unsigned, double> c = givenProducers(n, s);
        for (unsigned m : tiedWith[n]) {
          std::pair<unsigned, double> t = givenProducers(m, s);
          c.first += t.first;
          c.second += t.second;
        }
        if (c.first < bestCost.first ||
            (c.first == bestCost.first && c.second < bestCost.second - 1e-15)) {
          best = s;
          bestCost = c;
        }
      };
      if (!(*allowed)[n].empty()) {
        for (unsigned s : (*allowed)[n])
          consider(s);
      } else {
        for (unsigned s = 0; s < p.nodes[n].cost.size(); ++s)
          consider(s);
      }
      strategy[n] = best;
      for (unsigned m : tiedWith[n])
        strategy[m] = best;
    }
  } else {
    for (unsigned n = 0; n < numNodes; ++n)
      improve(n);
  }
  // A layout's plan is the greedy pass's: the rounds that improve it are
  // the solver's, on the fastest start only (AutoShardSolver.cpp).
  if (allowed && !start)
    return strategy;
  inRounds = !p.memoryBudget && p.usesOfNode.size() == p.nodes.size();
  if (inRounds) {
    tie = equalSecondsTolerance(evaluateSeconds(p, strategy));
    needed.resize(p.values.size());
    for (auto [vi, v] : llvm::enumerate(p.values))
      needed[vi].assign(v.targetBytes.size(), 0);
    for (const AutoShardProblem::Use &u : p.uses)
      ++needed[u.value][u.targetOf[strategy[u.consumer]]];
  }
  for (int round = 0; round < 50; ++round) {
    bool changed = false;
    for (unsigned n = 0; n < numNodes; ++n)
      changed |= improve(n);
    if (!changed)
      break;
  }
  return strategy;
}

std::vector<unsigned>
shardc::detail::localSearch(const AutoShardProblem &p, bool smallest,
                            const std::vector<unsigned> *start) {
  return search(p, smallest, start, nullptr);
}

void shardc::detail::improvePlan(const AutoShardProblem &p,
                                 std::vector<unsigned> &strategy) {
  strategy = search(p, /*smallest=*/false, &strategy, nullptr);
}

std::vector<unsigned> shardc::detail::followLayout(
    const AutoShardProblem &p,
    const std::vector<std::vector<unsigned>> &allowed) {
  return search(p, /*smallest=*/false, nullptr, &allowed);
}

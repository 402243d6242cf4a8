//===- RandomAutoShardProblem.h - small random solver problems --*- C++ -*-===//
//
// The random problems the solver's unit tests check their claims on by
// brute force: DAGs of nodes, each with a few strategies and one value,
// read by later nodes once or several times (so that shared moves meet the
// reductions and the prunings), some moves free, some to the same layout,
// a few impossible. Each test says how large and how shared through
// RandomProblemShape.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_UNITTESTS_TRANSFORMS_RANDOMAUTOSHARDPROBLEM_H
#define SHARDC_UNITTESTS_TRANSFORMS_RANDOMAUTOSHARDPROBLEM_H

#include "AutoShardProblem.h"

#include <algorithm>
#include <random>

namespace shardc::detail {

struct RandomProblemShape {
  /// minNodes + [0, extraNodes) nodes of 1 to maxStrategies strategies,
  /// each costing [0, costRange) seconds.
  unsigned minNodes = 3, extraNodes = 6, maxStrategies = 3, costRange = 10;
  /// Each node but the first reads 1 to maxReads earlier values.
  unsigned maxReads = 2;
  /// A read is of the first value (one in four), or of one of the first
  /// two (one in three) when true: several consumers sharing a move.
  bool readsFirstTwo = false;
  /// A move costs [minMove, minMove + moveRange) seconds; when
  /// `someImpossible`, one in eight to a target other than the first is
  /// impossible (the first stays reachable).
  unsigned minMove = 0, moveRange = 8;
  bool someImpossible = true;
  /// Values and uses weigh 1 to 3 (a clustered problem's), else 1.
  bool weighted = false;
};

inline AutoShardProblem randomProblem(std::mt19937 &rng,
                                      const RandomProblemShape &shape) {
  auto pick = [&](unsigned n) { return unsigned(rng() % n); };
  AutoShardProblem p;
  unsigned numNodes = shape.minNodes + pick(shape.extraNodes);
  for (unsigned n = 0; n < numNodes; ++n) {
    AutoShardProblem::Node node;
    unsigned numStrategies = 1 + pick(shape.maxStrategies);
    for (unsigned s = 0; s < numStrategies; ++s)
      node.cost.push_back(double(pick(shape.costRange)));
    p.nodes.push_back(node);
    AutoShardProblem::Value v;
    v.producer = n;
    unsigned numLayouts = 1 + pick(numStrategies);
    for (unsigned s = 0; s < numStrategies; ++s)
      v.layoutOf.push_back(s < numLayouts ? s : pick(numLayouts));
    v.layoutBytes.assign(numLayouts, 0);
    v.weight = shape.weighted ? double(1 + pick(3)) : 1;
    p.values.push_back(v);
  }
  for (unsigned n = 1; n < numNodes; ++n)
    for (unsigned k = 0, reads = 1 + pick(shape.maxReads); k < reads; ++k) {
      AutoShardProblem::Use u;
      if (shape.readsFirstTwo)
        u.value = pick(3) == 0 ? pick(std::min(n, 2u)) : pick(n);
      else
        u.value = pick(4) == 0 ? 0 : pick(n);
      u.consumer = n;
      u.weight = shape.weighted ? double(1 + pick(3)) : 1;
      p.uses.push_back(u);
    }
  // Targets: each use's consumer strategies need one of the value's.
  for (AutoShardProblem::Value &v : p.values) {
    unsigned numTargets = 1 + pick(3);
    v.targetBytes.assign(numTargets, 0);
    for (unsigned l = 0; l < v.layoutBytes.size(); ++l) {
      v.moveSeconds.emplace_back();
      v.isSame.emplace_back();
      for (unsigned t = 0; t < numTargets; ++t) {
        bool same = l == t && pick(2) == 0;
        v.isSame.back().push_back(same);
        double seconds =
            same ? 0 : double(shape.minMove + pick(shape.moveRange));
        if (shape.someImpossible && !same && t > 0 && pick(8) == 0)
          seconds = kNoPlan;
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

} // namespace shardc::detail

#endif // SHARDC_UNITTESTS_TRANSFORMS_RANDOMAUTOSHARDPROBLEM_H

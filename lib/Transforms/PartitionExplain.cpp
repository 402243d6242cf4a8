//===- PartitionExplain.cpp - which consumer needed each reshard ----------===//
//
// With --shardc-partition=explain=true: for each reshard, the consumer that
// asked for it and the consumer's chosen layout against the alternatives
// for that operand, every one priced by the partitioner's own candidate
// pricing (PartitionLayout.h), so the figures are those it chose by. The
// alternatives for an operand that was in layout F and moved to T:
//
//   * as it is: the consumer computed with the operand left in F (for a
//     pending sum, the sum passed through an op linear in it, the op's
//     other summands made pending too, and its result reduced later);
//   * whole: a pending sum all-reduced, when the chosen layout split it;
//   * split on dim d: a pending sum reduce-scattered into dim d instead of
//     all-reduced (the cheapest d the dim's size allows);
//   * as it is, with the inputs read by this consumer alone that the
//     layout moves annotated as it takes them (the move is then the
//     annotation's doing: a wrongly split weight shows here).
//
// An output's move is priced alone against the output annotated as the
// value is, whole or split; a sharding_constraint has no alternative; an
// op's own all_reduce max is weighed against computing it with the
// reduced dim whole.
//
// Each is the cheapest layout of the consumer taking the operand so, among
// the views the partitioner weighs plus views starting from that operand
// layout. What downstream consumers would then do is not re-planned: a
// result is priced into the layout propagation assigned it.
//
//===----------------------------------------------------------------------===//

#include "PartitionLayout.h"
#include "Propagation.h"

#include "shardc/Dialect/CollectiveOpInterface.h"
#include "shardc/Dialect/ShardingRule.h"
#include "shardc/Dialect/ShardingVerifier.h"
#include "shardc/Dialect/ValueNames.h"

#include <limits>

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;

namespace {

/// The name a user knows `v` by, else how diagnostics describe it.
std::string nameOf(Value v) {
  StringRef name = getSourceName(v);
  return name.empty() ? describeValue(v) : name.str();
}

/// The machine the partitioner prices on, and the mesh its groups lie on
/// (null: every group inside one node).
struct Pricing {
  const MachineModel &machine;
  MeshOp mesh;
  double seconds(const ReshardPlan &plan) const {
    return mesh ? plan.seconds(machine, mesh) : plan.seconds(machine);
  }
};

/// `value` moved from `from` to `to` by `plan`, priced as the partitioner
/// prices it.
ReshardMove describeMove(std::string value, ShardingAttr from, ShardingAttr to,
                         const ReshardPlan &plan, const Pricing &pricing) {
  ReshardMove move{std::move(value),     from, to, "", plan.bytesPerDevice,
                   pricing.seconds(plan)};
  for (const ReshardStep &step : plan.steps)
    move.collectives += (move.collectives.empty() ? "" : ", ") +
                        stringifyCollectiveKind(step.kind).str();
  return move;
}

PricedLayout toPriced(Operation *op, StringRef label, ShardingAttr operand,
                      const LayoutPrice &price, const Pricing &pricing) {
  PricedLayout l;
  l.label = label.str();
  l.operand = operand;
  l.possible = price.feasible;
  l.seconds = price.seconds;
  for (const LayoutPrice::Move &m : price.moves) {
    Value v = m.tensor < op->getNumOperands()
                  ? op->getOperand(m.tensor)
                  : op->getResult(m.tensor - op->getNumOperands());
    ReshardMove move = describeMove(nameOf(v), m.from, m.to, m.plan, pricing);
    l.bytes += move.bytes;
    l.moves.push_back(std::move(move));
  }
  return l;
}

struct Cheapest {
  LayoutChoice choice;
  LayoutPrice price;
  /// The moves `free` took out of the price.
  SmallVector<LayoutPrice::Move, 1> freed;
};

/// The cheapest feasible layout `accept` makes of a candidate (null: not
/// one it takes), among the candidates of the partitioner's views and of
/// `extra`; the first on ties. Moves `free` accepts cost nothing.
std::optional<Cheapest>
cheapest(CandidateEnumerator candidates, LayoutPricer price, ExtraViews extra,
         function_ref<std::optional<LayoutChoice>(const LayoutChoice &)> accept,
         const Pricing &pricing,
         function_ref<bool(const LayoutPrice::Move &)> free = nullptr) {
  std::optional<Cheapest> best;
  candidates(extra, [&](const LayoutChoice &c, const LayoutPrice &) {
    std::optional<LayoutChoice> taken = accept(c);
    if (!taken)
      return false;
    Cheapest next{std::move(*taken), price(*taken), {}};
    if (free)
      for (auto *m = next.price.moves.begin(); m != next.price.moves.end();) {
        if (!free(*m)) {
          ++m;
          continue;
        }
        next.price.seconds -= pricing.seconds(m->plan);
        next.price.commSeconds -= pricing.seconds(m->plan);
        next.freed.push_back(std::move(*m));
        m = next.price.moves.erase(m);
      }
    if (next.price.feasible &&
        (!best || next.price.seconds < best->price.seconds))
      best = std::move(next);
    return false;
  });
  return best;
}

/// `s` without pending sums.
ShardingAttr withoutPartial(ShardingAttr s) {
  SmallVector<SmallVector<StringRef>> dims;
  for (size_t d = 0; d < s.getRank(); ++d)
    dims.push_back(s.getDimAxes(d));
  return ShardingAttr::get(s.getContext(), s.getMesh(), dims, {});
}

/// Views starting from operand `i` in `layout` alone, with the results as
/// assigned, and with the other operands as assigned.
SmallVector<SmallVector<TensorShardingInput>>
viewsFrom(const ShardingRule &rule, unsigned i, ShardingAttr layout,
          ArrayRef<TensorShardingInput> assigned) {
  unsigned n = rule.getNumTensors();
  SmallVector<SmallVector<TensorShardingInput>> views(
      3, SmallVector<TensorShardingInput>(n));
  for (unsigned t = 0; t < n; ++t) {
    bool result = t >= rule.getNumOperands();
    if (result)
      views[1][t] = assigned[t];
    else if (t != i)
      views[2][t] = assigned[t];
  }
  for (auto &view : views)
    view[i] = {layout, /*isUser=*/true};
  return views;
}

/// The layouts to take a value that is in `from` in instead, each with its
/// label: as it is, and for a pending sum, whole or split on a dim.
SmallVector<std::pair<std::string, ShardingAttr>>
alternativesTo(ShardingAttr from, RankedTensorType type, MeshOp mesh) {
  SmallVector<std::pair<std::string, ShardingAttr>> targets;
  SmallVector<StringRef> sums = from.getPartialAxes();
  targets.push_back({sums.empty() ? "as it is" : "kept pending", from});
  if (sums.empty())
    return targets;
  ShardingAttr whole = withoutPartial(from);
  targets.push_back({"whole", whole});
  int64_t n = 1;
  for (StringRef a : sums)
    n *= std::max<int64_t>(mesh.getAxisSize(a), 1);
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t split = n;
    for (StringRef a : from.getDimAxes(d))
      split *= std::max<int64_t>(mesh.getAxisSize(a), 1);
    if (type.getDimSize(d) % split != 0)
      continue;
    SmallVector<SmallVector<StringRef>> dims;
    for (size_t e = 0; e < whole.getRank(); ++e)
      dims.push_back(whole.getDimAxes(e));
    dims[d].append(sums.begin(), sums.end());
    targets.push_back(
        {"split on dim " + std::to_string(d),
         ShardingAttr::get(from.getContext(), from.getMesh(), dims, {})});
  }
  return targets;
}

} // namespace

ReshardPlan shardc::detail::maxReducePlan(ArrayRef<StringRef> axes,
                                          int64_t groupSize,
                                          int64_t localBytes) {
  ReshardStep step{CollectiveKind::AllReduce, {}};
  step.axes.assign(axes.begin(), axes.end());
  step.groupSize = groupSize;
  step.localBytesBefore = localBytes;
  step.bytesPerDevice = collectiveBytesPerDevice(CollectiveKind::AllReduce,
                                                 groupSize, localBytes);
  ReshardPlan plan;
  plan.steps.push_back(step);
  plan.bytesPerDevice = step.bytesPerDevice;
  return plan;
}

ReshardRecord shardc::detail::explainOperandReshard(
    Operation *op, const ShardingRule &rule, unsigned operand,
    ShardingAttr from, ArrayRef<TensorShardingInput> assigned,
    const LayoutChoice &chosen, MeshOp mesh, CandidateEnumerator candidates,
    LayoutPricer price, const MachineModel &machine) {
  Pricing pricing{machine, mesh};
  ReshardRecord record;
  record.kind = ReshardRecord::Consumer::Operand;
  record.op = op->getName().getStringRef().str();
  record.name = getNameFromLoc(op->getLoc()).str();
  record.where = formatLoc(op->getLoc());
  record.index = operand;
  record.value = nameOf(op->getOperand(operand));
  record.from = from;
  record.to = chosen.operands[operand];
  record.layouts.push_back(
      toPriced(op, "chosen", record.to, price(chosen), pricing));

  SmallVector<std::pair<std::string, ShardingAttr>> targets = alternativesTo(
      from, cast<RankedTensorType>(op->getOperand(operand).getType()), mesh);
  SmallVector<StringRef> sums = from.getPartialAxes();
  SmallVector<unsigned, 2> partialSets;
  if (auto ruled = dyn_cast<ShardingRuleOpInterface>(op))
    ruled.getPartialSumOperandSets(partialSets);
  // The best split of a pending sum is one alternative, whichever dim.
  std::optional<PricedLayout> bestSplit;
  // Alternatives that change an annotation, listed last.
  std::vector<PricedLayout> extra;
  for (auto &[label, target] : targets) {
    if (target == record.to)
      continue;
    std::optional<Cheapest> best;
    if (!target.isPartial()) {
      auto takes = [&](const LayoutChoice &c) -> std::optional<LayoutChoice> {
        if (c.operands[operand] != target)
          return std::nullopt;
        return c;
      };
      auto views = viewsFrom(rule, operand, target, assigned);
      best = cheapest(candidates, price, views, takes, pricing);
      // An input read by this consumer alone could have been annotated as
      // this layout takes it: its move is the annotation's doing. The
      // same, with such inputs arriving as taken.
      auto annotatable = [&](const LayoutPrice::Move &m) {
        if (m.tensor >= op->getNumOperands())
          return false;
        Value v = op->getOperand(m.tensor);
        return isa<BlockArgument>(v) && v.hasOneUse();
      };
      std::optional<Cheapest> reannotated =
          label == "as it is"
              ? cheapest(candidates, price, views, takes, pricing, annotatable)
              : std::nullopt;
      if (reannotated && !reannotated->freed.empty()) {
        std::string inputs;
        for (const LayoutPrice::Move &m : reannotated->freed) {
          std::string layout;
          llvm::raw_string_ostream os(layout);
          os << m.to;
          inputs += (inputs.empty() ? "" : ", ") +
                    nameOf(op->getOperand(m.tensor)) + " annotated " + layout;
        }
        extra.push_back(toPriced(op, "as it is, " + inputs, target,
                                 reannotated->price, pricing));
      }
    } else {
      // A pending sum stays pending only through an op linear in it: each
      // candidate's factors with the operand's set of summands (and the
      // result) pending over the same axes, the other summands moved into
      // that state too.
      best = cheapest(
          candidates, price,
          viewsFrom(rule, operand, withoutPartial(target), assigned),
          [&](const LayoutChoice &c) -> std::optional<LayoutChoice> {
            const FactorShardings &fs = *c.factors;
            for (int64_t f = 0; f < rule.getNumFactors(); ++f)
              for (StringRef a : fs.getFactorAxes(f))
                if (llvm::is_contained(sums, a))
                  return std::nullopt;
            for (unsigned set : partialSets) {
              if (!(set >> operand & 1) || set >> op->getNumOperands())
                continue;
              LayoutChoice v;
              v.factors = &fs;
              for (unsigned j = 0; j < op->getNumOperands(); ++j)
                v.operands.push_back(
                    set >> j & 1 ? withPartial(fs.getOperandSharding(j), sums)
                                 : fs.getOperandSharding(j));
              for (unsigned j = 0; j < op->getNumResults(); ++j)
                v.results.push_back(
                    withPartial(fs.getResultSharding(j), sums));
              if (v.operands[operand] == target)
                return v;
            }
            return std::nullopt;
          },
          pricing);
    }
    PricedLayout priced =
        best ? toPriced(op, label, target, best->price, pricing)
             : PricedLayout();
    if (!best) {
      priced.label = label;
      priced.operand = target;
      priced.possible = false;
    }
    if (StringRef(label).starts_with("split on dim")) {
      if (best && (!bestSplit || !bestSplit->possible ||
                   priced.seconds < bestSplit->seconds))
        bestSplit = priced;
      else if (!bestSplit)
        bestSplit = priced;
      continue;
    }
    record.layouts.push_back(std::move(priced));
  }
  if (bestSplit)
    record.layouts.push_back(std::move(*bestSplit));
  llvm::append_range(record.layouts, extra);
  return record;
}

ReshardRecord shardc::detail::explainOwnReduction(
    Operation *op, const LayoutChoice &chosen, CandidateEnumerator candidates,
    LayoutPricer price, const MachineModel &machine) {
  // Its all_reduce max is over a group inside the op's own layout.
  Pricing pricing{machine, nullptr};
  ReshardRecord record;
  record.kind = ReshardRecord::Consumer::OwnReduction;
  record.op = op->getName().getStringRef().str();
  record.name = getNameFromLoc(op->getLoc()).str();
  record.where = formatLoc(op->getLoc());
  record.value = nameOf(op->getResult(0));
  record.from = record.to = chosen.results.front();
  record.layouts.push_back(
      toPriced(op, "chosen", nullptr, price(chosen), pricing));
  std::optional<Cheapest> best = cheapest(
      candidates, price, {},
      [&](const LayoutChoice &c) -> std::optional<LayoutChoice> {
        if (!c.factors->getMaxReducedAxes().empty())
          return std::nullopt;
        return c;
      },
      pricing);
  PricedLayout whole =
      best ? toPriced(op, "reduced dim whole", nullptr, best->price, pricing)
           : PricedLayout();
  if (!best) {
    whole.label = "reduced dim whole";
    whole.possible = false;
  }
  record.layouts.push_back(std::move(whole));
  return record;
}

ReshardRecord shardc::detail::explainFixedReshard(
    Value value, ShardingAttr from, ShardingAttr to, int64_t output,
    Operation *constraint, MeshOp mesh, const MachineModel &machine) {
  Pricing pricing{machine, mesh};
  ReshardRecord record;
  record.value = nameOf(value);
  record.from = from;
  record.to = to;
  if (constraint) {
    record.kind = ReshardRecord::Consumer::Constraint;
    record.op = constraint->getName().getStringRef().str();
    record.name = getNameFromLoc(constraint->getLoc()).str();
    record.where = formatLoc(constraint->getLoc());
    return record;
  }
  record.kind = ReshardRecord::Consumer::Output;
  record.index = output;
  // The output annotated otherwise: the one move, priced alone.
  auto type = cast<RankedTensorType>(value.getType());
  auto priced = [&](StringRef label, ShardingAttr target) {
    PricedLayout l;
    l.label = label.str();
    l.operand = target;
    FailureOr<ReshardPlan> plan =
        planReshard(from, target, mesh, type.getShape(),
                    (type.getElementTypeBitWidth() + 7) / 8);
    l.possible = succeeded(plan);
    if (failed(plan) || plan->steps.empty())
      return l;
    ReshardMove move = describeMove(record.value, from, target, *plan, pricing);
    l.bytes = move.bytes;
    l.seconds = move.seconds;
    l.moves.push_back(std::move(move));
    return l;
  };
  record.layouts.push_back(priced("chosen", to));
  std::optional<PricedLayout> bestSplit;
  for (auto &[label, target] : alternativesTo(from, type, mesh)) {
    if (target == to)
      continue;
    std::string layout;
    llvm::raw_string_ostream os(layout);
    os << "output annotated " << target;
    PricedLayout l = priced(layout, target);
    if (!StringRef(label).starts_with("split on dim"))
      record.layouts.push_back(std::move(l));
    else if (l.possible && (!bestSplit || l.seconds < bestSplit->seconds))
      bestSplit = std::move(l);
  }
  if (bestSplit)
    record.layouts.push_back(std::move(*bestSplit));
  return record;
}

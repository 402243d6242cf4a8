//===- PartitionCandidates.cpp - which layout an op is computed in --------===//
//
// The partitioner's choice for each op: the candidate layouts its sharding
// rule allows, each from a different view of the shardings around it
// (and, where a pending sum may pass through the op, the same kept
// pending), priced by the estimated time of the reshards they need and the
// op's compute, the cheapest kept. The choice is memoized per distinct
// question (LayoutChoices), since models repeat the same ops in the same
// shardings layer after layer. With `explain`, the same enumeration and
// prices make each reshard's record (PartitionExplain.cpp).
//
//===----------------------------------------------------------------------===//

#include "FunctionPartitioner.h"

#include "shardc/Analysis/FactorSharding.h"
#include "shardc/Dialect/CostOpInterface.h"
#include "shardc/Dialect/MeshLookup.h"
#include "shardc/Dialect/ShardingRule.h"
#include "shardc/Dialect/TensorOpBuilders.h"
#include "shardc/Dialect/UnevenDims.h"

using namespace mlir;
using namespace shardc;
using shardc::detail::elementBytes;
using shardc::detail::ExtraViews;
using shardc::detail::FunctionPartitioner;
using shardc::detail::LayoutChoice;
using shardc::detail::LayoutPrice;
using shardc::detail::withPartial;

bool shardc::detail::isCheaperLayout(const LayoutPrice &a,
                                     const LayoutPrice &b) {
  if (a.seconds < b.seconds * (1 - kLayoutTimeTie))
    return true;
  if (b.seconds < a.seconds * (1 - kLayoutTimeTie))
    return false;
  if (a.bytes != b.bytes)
    return a.bytes < b.bytes;
  return a.seconds < b.seconds;
}

ShardingAttr shardc::detail::withPartial(ShardingAttr s,
                                         ArrayRef<StringRef> axes) {
  if (axes.empty())
    return s;
  SmallVector<SmallVector<StringRef>> dims;
  for (size_t d = 0; d < s.getRank(); ++d)
    dims.push_back(s.getDimAxes(d));
  SmallVector<StringRef> partial = s.getPartialAxes();
  partial.append(axes.begin(), axes.end());
  return ShardingAttr::get(s.getContext(), s.getMesh(), dims, partial);
}

/// `s` with `axes` taken off its dims and its pending sums.
static ShardingAttr withoutAxes(ShardingAttr s, ArrayRef<StringRef> axes) {
  auto keep = [&](ArrayRef<StringRef> from) {
    SmallVector<StringRef> kept;
    for (StringRef a : from)
      if (!llvm::is_contained(axes, a))
        kept.push_back(a);
    return kept;
  };
  SmallVector<SmallVector<StringRef>> dims;
  for (size_t d = 0; d < s.getRank(); ++d)
    dims.push_back(keep(s.getDimAxes(d)));
  return ShardingAttr::get(s.getContext(), s.getMesh(), dims,
                           keep(s.getPartialAxes()));
}

/// Whether `rule` sums over a dim of one operand alone (no other operand
/// or result has that factor): split, each device's result is a selection
/// of its own block, as a gather's lookup among a table's local rows is,
/// not a product of two split operands.
static bool sumsOneOperandDim(const ShardingRule &rule) {
  for (int64_t f = 0; f < rule.getNumFactors(); ++f) {
    if (rule.getFactor(f).kind != FactorKind::Reduction)
      continue;
    auto holds = [&](ArrayRef<DimFactors> dims) {
      return llvm::any_of(dims, [&](const auto &factors) {
        return llvm::is_contained(factors, f);
      });
    };
    unsigned operands = 0;
    for (unsigned i = 0; i < rule.getNumOperands(); ++i)
      operands += holds(rule.getOperand(i));
    bool inResult = false;
    for (unsigned i = 0; i < rule.getNumResults(); ++i)
      inResult |= holds(rule.getResult(i));
    if (operands == 1 && !inResult)
      return true;
  }
  return false;
}

bool FunctionPartitioner::isCarriedByReaders(Value v) {
  // Only the sum a lookup in a split table leaves (the gathered expert
  // weights): where a pending sum came through other ops (a reshape of a
  // vocab-parallel embedding read by a projection), reducing it where it
  // is stays the partitioner's usual choice.
  auto producer = v.getDefiningOp<ShardingRuleOpInterface>();
  if (!producer || v.use_empty() ||
      !sumsOneOperandDim(producer.getShardingRule()))
    return false;
  for (OpOperand &use : v.getUses()) {
    Operation *reader = use.getOwner();
    auto ruled = dyn_cast<ShardingRuleOpInterface>(reader);
    if (!ruled || getConstrainedSharding(reader))
      return false;
    // Read through two operands (a product of v with itself), the reader
    // is not linear in v.
    if (llvm::count(reader->getOperands(), v) != 1)
      return false;
    SmallVector<unsigned, 2> linear;
    ruled.getLinearOperands(linear);
    if (!llvm::is_contained(linear, use.getOperandNumber()))
      return false;
  }
  return true;
}

const LayoutChoice *
FunctionPartitioner::chooseLayout(Operation *op, const ShardingRule &rule,
                                  ArrayRef<TensorShardingInput> assigned) {
  SmallVector<int64_t, 64> key;
  appendRuleKey(rule, key);
  auto addPointer = [&](const void *p) {
    key.push_back(reinterpret_cast<intptr_t>(p));
  };
  addPointer(mesh.getOperation());
  for (Type t : op->getOperandTypes())
    addPointer(t.getAsOpaquePointer());
  for (Type t : op->getResultTypes())
    addPointer(t.getAsOpaquePointer());
  for (const TensorShardingInput &t : assigned)
    addPointer(t.sharding.getAsOpaquePointer());
  for (Value v : op->getOperands())
    addPointer(current.lookup(v).second.getAsOpaquePointer());
  // Ops of one rule differ in the operands a pending sum passes through
  // (add: both; div: the dividend).
  SmallVector<unsigned, 2> partialSets;
  if (auto ruled = dyn_cast<ShardingRuleOpInterface>(op))
    ruled.getPartialSumOperandSets(partialSets);
  key.push_back(-1 - int64_t(partialSets.size()));
  key.append(partialSets.begin(), partialSets.end());
  // ... and in whether a summand has other consumers (see variantsOf).
  if (!partialSets.empty())
    for (Value v : op->getOperands())
      key.push_back(v.hasOneUse());
  // ... and in whether their operands' and results' readers all carry a
  // pending sum (isCarriedByReaders).
  SmallVector<unsigned, 2> linearOperands;
  if (auto ruled = dyn_cast<ShardingRuleOpInterface>(op))
    ruled.getLinearOperands(linearOperands);
  key.push_back(-1 - int64_t(linearOperands.size()));
  for (unsigned i : linearOperands)
    key.push_back(isCarriedByReaders(op->getOperand(i)));
  for (Value v : op->getResults())
    key.push_back(isCarriedByReaders(v));
  bool found;
  if (const LayoutChoice *memo = choices.lookup(key, found); found)
    return memo;

  // The candidate whose reshards take the least estimated time wins (bytes
  // and per-message latency, so a plan of many small collectives does not
  // beat the one an expert writes), the first on ties (all tensors together
  // is the usual answer).
  // Times within a few per cent tie, and the candidate moving and holding
  // fewer bytes wins (isCheaperLayout).
  std::optional<LayoutChoice> best;
  std::optional<LayoutPrice> bestPrice;
  forEachCandidate(op, rule, assigned, {}, /*withMoves=*/false,
                   [&](const LayoutChoice &choice, const LayoutPrice &price) {
                     if (price.feasible &&
                         (!bestPrice || isCheaperLayout(price, *bestPrice))) {
                       bestPrice = price;
                       best = choice;
                     }
                     // Nothing beats moving nothing: the usual case (an op
                     // whose operands already sit in the layout its result
                     // wants) costs one candidate.
                     return best && price.commSeconds == 0 && price.feasible;
                   });
  return choices.insert(key, std::move(best));
}

LayoutPrice
FunctionPartitioner::priceCandidate(Operation *op, const ShardingRule &rule,
                                    ArrayRef<TensorShardingInput> assigned,
                                    const LayoutChoice &choice,
                                    bool withMoves) {
  const FactorShardings &fs = *choice.factors;
  LayoutPrice price;
  // A sharded max_reduction factor costs the all_reduce max of the local
  // result, emitted right after the op.
  if (AxisList axes = fs.getMaxReducedAxes(); !axes.empty()) {
    int64_t n = 1;
    for (StringRef axis : axes)
      n *= std::max<int64_t>(mesh.getAxisSize(axis), 1);
    for (auto [i, v] : llvm::enumerate(op->getResults())) {
      auto type = cast<RankedTensorType>(v.getType());
      int64_t bytes = elementBytes(type);
      for (int64_t size :
           getLocalShape(fs.getResultSharding(i), mesh, type.getShape()))
        bytes *= size;
      SmallVector<int64_t, 2> indices;
      for (StringRef axis : axes)
        indices.push_back(mesh.getAxisIndex(axis));
      price.commSeconds += machine.collectiveSeconds(
          CollectiveKind::AllReduce,
          machine.groupSpan(mesh.getAxisSizes(), indices), double(bytes));
      price.bytes +=
          collectiveBytesPerDevice(CollectiveKind::AllReduce, n, bytes);
      if (withMoves)
        price.moves.push_back({op->getNumOperands() + unsigned(i),
                               fs.getResultSharding(i), fs.getResultSharding(i),
                               shardc::detail::maxReducePlan(axes, n, bytes)});
    }
  }
  auto addMove = [&](unsigned tensor, Value v, ShardingAttr from,
                     ShardingAttr to) {
    auto type = cast<RankedTensorType>(v.getType());
    FailureOr<ReshardPlan> plan =
        planReshard(from, to, mesh, type.getShape(), elementBytes(type));
    price.feasible &= succeeded(plan);
    if (failed(plan))
      return;
    price.commSeconds += plan->seconds(machine, mesh);
    price.bytes += plan->bytesPerDevice;
    if (withMoves && !plan->steps.empty())
      price.moves.push_back({tensor, from, to, std::move(*plan)});
  };
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    // Moved into that layout already (for an earlier consumer): free.
    if (!moved.count({v, Attribute(choice.operands[i])}))
      addMove(i, v, current.lookup(v).second, choice.operands[i]);
  for (auto [i, v] : llvm::enumerate(op->getResults())) {
    ShardingAttr target = assigned[rule.getResultTensor(i)].sharding;
    // A sum its readers all keep pending is reduced at their results: then
    // the move of its blocks counts here, and, for each reader, the
    // reduction of its result into the layout assigned to it (not listed
    // as a move: the reader makes it). Where reducing the sum itself once
    // is cheaper, the readers would do that, and it is priced so.
    if (choice.results[i].isPartial() && isCarriedByReaders(v)) {
      SmallVector<StringRef> pending = choice.results[i].getPartialAxes();
      double seconds = 0;
      int64_t bytes = 0;
      bool feasible = true;
      auto add = [&](Value x, ShardingAttr from, ShardingAttr to) {
        auto type = cast<RankedTensorType>(x.getType());
        FailureOr<ReshardPlan> plan =
            planReshard(from, to, mesh, type.getShape(), elementBytes(type));
        feasible &= succeeded(plan);
        if (succeeded(plan)) {
          seconds += plan->seconds(machine, mesh);
          bytes += plan->bytesPerDevice;
        }
      };
      ShardingAttr kept = withPartial(withoutAxes(target, pending), pending);
      add(v, choice.results[i], kept);
      for (Operation *reader : v.getUsers())
        for (Value r : reader->getResults()) {
          ShardingAttr to = getAssigned(r);
          add(r, withPartial(withoutAxes(to, pending), pending), to);
        }
      FailureOr<ReshardPlan> once =
          planReshard(choice.results[i], target, mesh,
                      cast<RankedTensorType>(v.getType()).getShape(),
                      elementBytes(v.getType()));
      if (feasible &&
          (failed(once) || seconds < once->seconds(machine, mesh))) {
        price.commSeconds += seconds;
        price.bytes += bytes;
        continue;
      }
    }
    addMove(op->getNumOperands() + i, v, choice.results[i], target);
  }
  // What a device holds of the op's tensors in this layout.
  auto held = [&](Value v, ShardingAttr layout) {
    auto type = cast<RankedTensorType>(v.getType());
    int64_t bytes = elementBytes(type);
    for (int64_t size : getLocalShape(layout, mesh, type.getShape()))
      bytes *= size;
    price.bytes += bytes;
  };
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    held(v, choice.operands[i]);
  for (auto [i, v] : llvm::enumerate(op->getResults()))
    held(v, choice.results[i]);
  price.seconds = price.commSeconds;
  // A layout that leaves factors unsplit makes every device compute more:
  // without this term, gathering a data-parallel backward's activations
  // (to compute the whole weight gradient everywhere) looks cheaper than
  // the all_reduce of the gradient an expert writes. The FLOPs are the op's
  // cost (CostOpInterface, the simulator's too) at the local factor sizes.
  if (auto cost = dyn_cast<CostOpInterface>(op)) {
    SmallVector<double, 8> localSizes;
    for (int64_t f = 0; f < rule.getNumFactors(); ++f) {
      int64_t shards = 1;
      for (StringRef axis : fs.getFactorAxes(f))
        shards *= std::max<int64_t>(mesh.getAxisSize(axis), 1);
      // Devices compute their padding too.
      localSizes.push_back(
          double(paddedBlockSize(rule.getFactor(f).size, shards)));
    }
    price.seconds += cost.getFlops(localSizes) / machine.flopsPerSecond;
  }
  return price;
}

void FunctionPartitioner::forEachCandidate(
    Operation *op, const ShardingRule &rule,
    ArrayRef<TensorShardingInput> assigned, ExtraViews extra, bool withMoves,
    function_ref<bool(const LayoutChoice &, const LayoutPrice &)> fn) {
  // Candidate layouts for computing the op, each from a different view of
  // the shardings around it.
  unsigned numTensors = rule.getNumTensors();
  SmallVector<SmallVector<TensorShardingInput>> views;
  views.emplace_back(assigned.begin(), assigned.end());
  {
    SmallVector<TensorShardingInput> resultOnly(numTensors);
    for (unsigned t = rule.getNumOperands(); t < numTensors; ++t)
      resultOnly[t] = assigned[t];
    views.push_back(resultOnly);
    SmallVector<TensorShardingInput> operandsOnly(assigned.begin(),
                                                  assigned.end());
    for (unsigned t = rule.getNumOperands(); t < numTensors; ++t)
      operandsOnly[t] = {};
    views.push_back(operandsOnly);
    for (unsigned i = 0; i < rule.getNumOperands(); ++i) {
      SmallVector<TensorShardingInput> one(numTensors);
      one[i] = assigned[i];
      views.push_back(one);
    }
    // The operands where they are now, which may not be where propagation
    // put them: summands still pending over an axis the result is split
    // over are added in their own layout and reduce-scattered once (under
    // sequence parallelism, the q, k and v branches' input gradients).
    SmallVector<TensorShardingInput> asTheyAre(numTensors);
    bool differs = false;
    for (auto [i, v] : llvm::enumerate(op->getOperands())) {
      ShardingAttr layout = current.lookup(v).second;
      asTheyAre[i] = {layout, true};
      differs |= layout != assigned[i].sharding;
    }
    if (differs)
      views.push_back(asTheyAre);
    views.push_back(SmallVector<TensorShardingInput>(numTensors));
  }

  // Sums kept pending through contractions (getLinearOperands), as a
  // gather of a table split along its gathered dim leaves them: each
  // device holds the rows of its experts and zeros for the others.
  SmallVector<unsigned, 2> linearOperands;
  if (auto ruled = dyn_cast<ShardingRuleOpInterface>(op))
    ruled.getLinearOperands(linearOperands);
  // The axes of the sum pending on operand `i` when every reader of it
  // carries that sum (isCarriedByReaders), with the operand's layout.
  auto carriedSum = [&](unsigned i)
      -> std::optional<std::pair<ShardingAttr, SmallVector<StringRef>>> {
    Value v = op->getOperand(i);
    ShardingAttr layout = current.lookup(v).second;
    if (!layout || !layout.isPartial() || !isCarriedByReaders(v))
      return std::nullopt;
    SmallVector<StringRef> pending = layout.getPartialAxes();
    return std::make_pair(layout, std::move(pending));
  };
  // The assigned shardings with `axes` taken off every tensor but `keep`.
  auto withoutSummed = [&](ArrayRef<StringRef> axes,
                           std::optional<unsigned> keep) {
    SmallVector<TensorShardingInput> view(assigned.begin(), assigned.end());
    for (unsigned t = 0; t < numTensors; ++t)
      if (t != keep && view[t].sharding)
        view[t].sharding = withoutAxes(view[t].sharding, axes);
    return view;
  };
  // A reader of such a sum: the layout that leaves its summed axes to it
  // (its other tensors gathered over them), the operand where it is.
  for (unsigned i : linearOperands) {
    auto carried = carriedSum(i);
    if (!carried)
      continue;
    auto &[layout, pending] = *carried;
    SmallVector<TensorShardingInput> view = withoutSummed(pending, {});
    view[i] = {withoutAxes(layout, pending), true};
    views.push_back(std::move(view));
  }
  // Its producer: the sum an operand alone makes of the result (a table
  // split along its gathered dim), the other tensors split as assigned
  // over the remaining axes (the tokens over "data" only), where the
  // readers would otherwise have the sum reduced at once.
  if (llvm::any_of(op->getResults(),
                   [&](Value r) { return isCarriedByReaders(r); }))
    for (unsigned i = 0; i < rule.getNumOperands(); ++i) {
      SmallVector<TensorShardingInput> one(numTensors);
      one[i] = assigned[i];
      AxisList pending = choices.factors.get(rule, mesh, one).getPartialAxes();
      if (!pending.empty())
        views.push_back(withoutSummed(pending, i));
    }

  views.append(extra.begin(), extra.end());
  SmallVector<unsigned, 2> partialSets;
  if (auto ruled = dyn_cast<ShardingRuleOpInterface>(op))
    ruled.getPartialSumOperandSets(partialSets);
  // The variants of one factor sharding: its projections, and, for each
  // set of operands a pending sum passes through whose members are all
  // pending sums over the same axes (which no factor uses) read by this op
  // alone, the same with those operands and the result kept pending.
  auto variantsOf = [&](const FactorShardings &fs) {
    SmallVector<LayoutChoice, 2> variants;
    for (unsigned set : partialSets) {
      std::optional<SmallVector<StringRef>> axes;
      bool ok = true;
      for (auto [i, v] : llvm::enumerate(op->getOperands())) {
        if (!(set >> i & 1))
          continue;
        // A summand with other consumers is reduced for them anyway: kept
        // pending here, its sum would be reduced a second time downstream.
        ShardingAttr layout = current.lookup(v).second;
        if (!layout || !layout.isPartial() || !v.hasOneUse()) {
          ok = false;
          break;
        }
        SmallVector<StringRef> pending = layout.getPartialAxes();
        if (!axes)
          axes = pending;
        ok &= *axes == pending;
      }
      if (!ok || !axes || set >> op->getNumOperands() != 0)
        continue;
      for (int64_t f = 0; f < rule.getNumFactors() && ok; ++f)
        for (StringRef axis : fs.getFactorAxes(f))
          ok &= !llvm::is_contained(*axes, axis);
      if (!ok)
        continue;
      LayoutChoice &c = variants.emplace_back();
      c.factors = &fs;
      for (unsigned i = 0; i < op->getNumOperands(); ++i)
        c.operands.push_back(set >> i & 1
                                 ? withPartial(fs.getOperandSharding(i), *axes)
                                 : fs.getOperandSharding(i));
      for (unsigned i = 0; i < op->getNumResults(); ++i)
        c.results.push_back(withPartial(fs.getResultSharding(i), *axes));
    }
    // A sum every reader carries (isCarriedByReaders) stays pending through
    // this one too when no factor is split over its axes; the reader's
    // results are the summands.
    for (unsigned i : linearOperands) {
      auto carried = carriedSum(i);
      if (!carried)
        continue;
      const SmallVector<StringRef> &pending = carried->second;
      bool ok = true;
      for (int64_t f = 0; f < rule.getNumFactors() && ok; ++f)
        for (StringRef axis : fs.getFactorAxes(f))
          ok &= !llvm::is_contained(pending, axis);
      if (!ok)
        continue;
      LayoutChoice &c = variants.emplace_back();
      c.factors = &fs;
      for (unsigned j = 0; j < op->getNumOperands(); ++j)
        c.operands.push_back(
            j == i ? withPartial(fs.getOperandSharding(j), pending)
                   : fs.getOperandSharding(j));
      for (unsigned r = 0; r < op->getNumResults(); ++r)
        c.results.push_back(withPartial(fs.getResultSharding(r), pending));
    }
    // Last: on a tie, a sum kept pending wins, since it may still meet
    // another one downstream and be reduced once for both.
    LayoutChoice &plain = variants.emplace_back();
    plain.factors = &fs;
    for (unsigned i = 0; i < op->getNumOperands(); ++i)
      plain.operands.push_back(fs.getOperandSharding(i));
    for (unsigned i = 0; i < op->getNumResults(); ++i)
      plain.results.push_back(fs.getResultSharding(i));
    return variants;
  };
  for (const auto &view : views) {
    const FactorShardings &fs = choices.factors.get(rule, mesh, view);
    bool exact = true;
    for (unsigned t = 0; t < numTensors; ++t)
      exact &= fs.isExactFor(t);
    if (!exact)
      continue;
    for (LayoutChoice &choice : variantsOf(fs))
      if (fn(choice, priceCandidate(op, rule, assigned, choice, withMoves)))
        return;
  }
}

DictionaryAttr
FunctionPartitioner::explainReshard(Operation *op, const ShardingRule &rule,
                                    ArrayRef<TensorShardingInput> assigned,
                                    const LayoutChoice &best,
                                    std::optional<unsigned> operand) {
  auto candidates = [&](ExtraViews extra, auto fn) {
    forEachCandidate(op, rule, assigned, extra, /*withMoves=*/true, fn);
  };
  auto price = [&](const LayoutChoice &c) {
    return priceCandidate(op, rule, assigned, c, /*withMoves=*/true);
  };
  if (!operand)
    return encodeReshardRecord(op->getContext(),
                               shardc::detail::explainOwnReduction(
                                   op, best, candidates, price, machine));
  Value v = op->getOperand(*operand);
  ShardingAttr from = current.lookup(v).second;
  if (!from || from == best.operands[*operand] ||
      moved.count({v, Attribute(best.operands[*operand])}))
    return nullptr;
  return encodeReshardRecord(op->getContext(),
                             shardc::detail::explainOperandReshard(
                                 op, rule, *operand, from, assigned, best, mesh,
                                 candidates, price, machine));
}

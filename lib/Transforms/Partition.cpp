//===- Partition.cpp - global program to per-device SPMD program ----------===//
//
// Rewrites a fully sharded function into the program every device runs on
// its local blocks. Each op is computed in the layout its sharding rule
// allows that moves the fewest bytes (operands resharded into it, its result
// resharded out of it); pending partial sums travel with a value until a
// consumer needs it whole (all_reduce) or split over the summed axis
// (reduce_scatter). What a device computes for an op is the op's local
// computation (ShardingRuleOpInterface::buildLocalComputation): the op on
// its local blocks, or, for an op whose block depends on where it sits, the
// op offset by axis_index. Reshards go through the ReshardPlanner and are
// cached per (value, target sharding), so a value feeding several consumers
// in the same layout is moved once. The choice of layout is memoized per distinct
// question (LayoutChoices), since models repeat the same ops in the same
// shardings layer after layer.
//
//===----------------------------------------------------------------------===//

#include "PartitionLayout.h"

#include "shardc/Analysis/FactorSharding.h"
#include "shardc/Analysis/FactorShardingCache.h"
#include "shardc/Analysis/ReshardPlanner.h"
#include "shardc/Dialect/CollectiveOpInterface.h"
#include "shardc/Dialect/CostOpInterface.h"
#include "shardc/Dialect/MeshLookup.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/TensorOpBuilders.h"
#include "shardc/Dialect/ShardingRule.h"
#include "shardc/Dialect/ShardingVerifier.h"
#include "shardc/Dialect/UnevenDims.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Transforms/Passes.h"
#include "shardc/Transforms/ReshardRecord.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <deque>
#include <vector>

namespace shardc {
#define GEN_PASS_DEF_SHARDCPARTITION
#include "shardc/Transforms/Passes.h.inc"
} // namespace shardc

using namespace mlir;
using namespace shardc;
using shardc::detail::ExtraViews;
using shardc::detail::LayoutChoice;
using shardc::detail::LayoutChoices;
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

ShardingAttr shardc::detail::withPartial(ShardingAttr s, ArrayRef<StringRef> axes) {
  if (axes.empty())
    return s;
  SmallVector<SmallVector<StringRef>> dims;
  for (size_t d = 0; d < s.getRank(); ++d)
    dims.push_back(s.getDimAxes(d));
  SmallVector<StringRef> partial = s.getPartialAxes();
  partial.append(axes.begin(), axes.end());
  return ShardingAttr::get(s.getContext(), s.getMesh(), dims, partial);
}

namespace {

int64_t elementBytes(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return (tensor.getElementTypeBitWidth() + 7) / 8;
}

/// The location collectives get: the source position of the value they
/// move, without its name (the name belongs to the op computing the value).
Location stripName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getChildLoc();
  return loc;
}

class FunctionPartitioner {
public:
  FunctionPartitioner(func::FuncOp func, MeshOp mesh, LayoutChoices &choices,
                      bool explain, const MachineModel &machine)
      : func(func), mesh(mesh), explain(explain), machine(machine),
        meshRef(FlatSymbolRefAttr::get(mesh.getSymNameAttr())),
        builder(func.getContext()), choices(choices),
        shardingAttrName(StringAttr::get(
            func.getContext(), ShardcDialect::getShardingAttrName())) {}

  LogicalResult run();

private:
  /// The sharding propagation assigned to `v`.
  ShardingAttr getAssigned(Value v);
  /// `v`'s local value, moved into `target`; the collectives a move emits
  /// carry `record` (ReshardRecord.h) if it is set.
  FailureOr<Value> getLocal(Value v, ShardingAttr target, Location loc,
                            DictionaryAttr record = {});
  /// Materializes `plan` on `local`.
  Value emitPlan(Value local, const ReshardPlan &plan, Location loc,
                 DictionaryAttr record);
  /// The layout to compute `op` in (owned by `choices`), or null if no
  /// candidate layout works.
  const LayoutChoice *chooseLayout(Operation *op, const ShardingRule &rule,
                                   ArrayRef<TensorShardingInput> assigned);
  /// Calls `fn` on each candidate layout of `op` (the views chooseLayout
  /// weighs, then `extra`), priced, until it returns true.
  void forEachCandidate(
      Operation *op, const ShardingRule &rule,
      ArrayRef<TensorShardingInput> assigned, ExtraViews extra,
      bool withMoves,
      function_ref<bool(const LayoutChoice &, const LayoutPrice &)> fn);
  /// `choice`'s price (LayoutPrice), with its moves if `withMoves`.
  LayoutPrice priceCandidate(Operation *op, const ShardingRule &rule,
                             ArrayRef<TensorShardingInput> assigned,
                             const LayoutChoice &choice, bool withMoves);
  /// With `explain`: the record of `operand`'s move into `best` (null if
  /// it moves nothing), or without one, of `op`'s own all_reduce max.
  DictionaryAttr explainReshard(Operation *op, const ShardingRule &rule,
                                ArrayRef<TensorShardingInput> assigned,
                                const LayoutChoice &best,
                                std::optional<unsigned> operand);
  /// With `explain`: the record of `v`'s move into `target` for output
  /// `output` or for `constraint`.
  DictionaryAttr explainFixed(Value v, ShardingAttr target, int64_t output,
                              Operation *constraint) {
    return explain
               ? encodeReshardRecord(func.getContext(),
                                     shardc::detail::explainFixedReshard(
                                         v, current.lookup(v).second, target,
                                         output, constraint, mesh, machine))
               : nullptr;
  }
  /// Emits `local`'s all_reduce of kind max over `axes` (a sharded
  /// max_reduction factor), with the sharding `after`.
  Value emitAllReduceMax(Value local, ArrayRef<StringRef> axes,
                         ShardingAttr after, Location loc,
                         DictionaryAttr record);
  /// Overwrites, in `locals`, the padding of every unevenly split dim that
  /// `op` would fold into real elements with the fill the op asks for
  /// (ShardingRuleOpInterface::getPaddingFill).
  void fillPadding(Operation *op, const ShardingRule &rule,
                   const LayoutChoice &layout, SmallVectorImpl<Value> &locals);
  LogicalResult partitionRuleOp(Operation *op, const ShardingRule &rule);
  LogicalResult partitionConstant(Operation *op);

  RankedTensorType localType(Value global, ShardingAttr sharding) {
    auto type = cast<RankedTensorType>(global.getType());
    return RankedTensorType::get(getLocalShape(sharding, mesh, type.getShape()),
                                 type.getElementType());
  }

  func::FuncOp func;
  MeshOp mesh;
  /// Whether collectives get the record of the reshard they belong to.
  bool explain;
  /// The machine candidates are priced on (the pass's `machine` option,
  /// else cost-model.md's defaults).
  MachineModel machine;
  /// `@mesh`, made once: every local computation and collective names it.
  FlatSymbolRefAttr meshRef;
  OpBuilder builder;
  LayoutChoices &choices;
  /// Each global value's local value and the layout it is in.
  llvm::DenseMap<Value, std::pair<Value, ShardingAttr>> current;
  /// Reshards already made: (global value, target) -> local value.
  llvm::DenseMap<std::pair<Value, Attribute>, Value> moved;
  /// Plans by (from, to, global type): models reshard the same layouts of
  /// the same shapes layer after layer, and planning one is the costly part.
  llvm::DenseMap<std::tuple<Attribute, Attribute, Type>, ReshardPlan> plans;
  /// "shardc.sharding", uniqued once per function instead of once per op.
  StringAttr shardingAttrName;
  /// Padding already filled: (local value, dim, fill) -> filled value, so a
  /// value read by several sums (forward and backward) is masked once.
  llvm::DenseMap<std::tuple<Value, int64_t, unsigned>, Value> filled;
};

ShardingAttr FunctionPartitioner::getAssigned(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return func.getArgAttrOfType<ShardingAttr>(
        arg.getArgNumber(), ShardcDialect::getShardingAttrName());
  return v.getDefiningOp()->getAttrOfType<ShardingAttr>(shardingAttrName);
}

Value FunctionPartitioner::emitPlan(Value local, const ReshardPlan &plan,
                                    Location loc, DictionaryAttr record) {
  MLIRContext *ctx = builder.getContext();
  auto elementType = cast<RankedTensorType>(local.getType()).getElementType();
  for (const ReshardStep &step : plan.steps) {
    auto type = RankedTensorType::get(step.localShapeAfter, elementType);
    SmallVector<Attribute> axisAttrs;
    for (StringRef a : step.axes)
      axisAttrs.push_back(StringAttr::get(ctx, a));
    auto axes = ArrayAttr::get(ctx, axisAttrs);
    Operation *op = nullptr;
    switch (step.kind) {
    case ReshardStep::Kind::AllGather:
      op = AllGatherOp::create(builder, loc, type, local, meshRef, axes,
                               builder.getI64IntegerAttr(step.dim));
      break;
    case ReshardStep::Kind::AllSlice:
      op = AllSliceOp::create(builder, loc, type, local, meshRef, axes,
                              builder.getI64IntegerAttr(step.dim));
      break;
    case ReshardStep::Kind::ReduceScatter:
      op = ReduceScatterOp::create(
          builder, loc, type, local, meshRef, axes,
          builder.getI64IntegerAttr(step.dim),
          ReductionKindAttr::get(ctx, ReductionKind::Sum));
      break;
    case ReshardStep::Kind::AllReduce:
      op = AllReduceOp::create(builder, loc, type, local, meshRef, axes,
                               ReductionKindAttr::get(ctx, ReductionKind::Sum));
      break;
    case ReshardStep::Kind::AllToAll:
      op = AllToAllOp::create(builder, loc, type, local, meshRef, axes,
                              builder.getI64IntegerAttr(step.dim),
                              builder.getI64IntegerAttr(step.concatDim));
      break;
    case ReshardStep::Kind::CollectivePermute: {
      SmallVector<Attribute> pairs;
      // Nested integer arrays: the form the textual syntax parses to.
      for (auto [s, t] : step.pairs)
        pairs.push_back(builder.getArrayAttr(
            {builder.getI64IntegerAttr(s), builder.getI64IntegerAttr(t)}));
      op = CollectivePermuteOp::create(builder, loc, type, local, meshRef, axes,
                                       builder.getArrayAttr(pairs));
      break;
    }
    }
    op->setAttr(shardingAttrName, step.after);
    if (record)
      op->setAttr(ShardcDialect::getReshardForAttrName(), record);
    local = op->getResult(0);
  }
  return local;
}

FailureOr<Value> FunctionPartitioner::getLocal(Value v, ShardingAttr target,
                                               Location loc,
                                               DictionaryAttr record) {
  auto [local, layout] = current.lookup(v);
  if (!local)
    return emitError(loc) << "internal error: " << describeValue(v)
                          << " has no local value";
  if (layout == target)
    return local;
  auto key = std::make_pair(v, Attribute(target));
  if (Value done = moved.lookup(key))
    return done;
  auto type = cast<RankedTensorType>(v.getType());
  auto planKey =
      std::make_tuple(Attribute(layout), Attribute(target), Type(type));
  auto planIt = plans.find(planKey);
  if (planIt == plans.end()) {
    std::string why;
    FailureOr<ReshardPlan> plan = planReshard(
        layout, target, mesh, type.getShape(), elementBytes(type), &why);
    if (failed(plan))
      return emitError(loc) << "cannot reshard " << describeValue(v) << " from "
                            << layout << " to " << target << ": " << why;
    planIt = plans.try_emplace(planKey, std::move(*plan)).first;
  }
  Value result = emitPlan(local, planIt->second, stripName(loc), record);
  moved[key] = result;
  return result;
}

LogicalResult FunctionPartitioner::partitionConstant(Operation *op) {
  // Every device materializes the whole constant (it is replicated), then
  // keeps its block: an all_slice, which costs no communication.
  Operation *clone = builder.clone(*op);
  clone->removeAttr(shardingAttrName);
  auto replicated = ShardingAttr::getReplicated(
      op->getContext(), meshRef,
      cast<RankedTensorType>(op->getResult(0).getType()).getRank());
  clone->setAttr(shardingAttrName, replicated);
  current[op->getResult(0)] = {clone->getResult(0), replicated};
  return success();
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
  forEachCandidate(
      op, rule, assigned, {}, /*withMoves=*/false,
      [&](const LayoutChoice &choice, const LayoutPrice &price) {
        if (price.feasible &&
            (!bestPrice || isCheaperLayout(price, *bestPrice))) {
          bestPrice = price;
          best = choice;
        }
        // Nothing beats moving nothing: the usual case (an op whose
        // operands already sit in the layout its result wants) costs one
        // candidate.
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
  for (auto [i, v] : llvm::enumerate(op->getResults()))
    addMove(op->getNumOperands() + i, v, choice.results[i],
            assigned[rule.getResultTensor(i)].sharding);
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

DictionaryAttr FunctionPartitioner::explainReshard(
    Operation *op, const ShardingRule &rule,
    ArrayRef<TensorShardingInput> assigned, const LayoutChoice &best,
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

Value FunctionPartitioner::emitAllReduceMax(Value local,
                                            ArrayRef<StringRef> axes,
                                            ShardingAttr after, Location loc,
                                            DictionaryAttr record) {
  MLIRContext *ctx = builder.getContext();
  SmallVector<Attribute> axisAttrs;
  for (StringRef a : axes)
    axisAttrs.push_back(StringAttr::get(ctx, a));
  Operation *op = AllReduceOp::create(
      builder, loc, local.getType(), local,
      meshRef,
      ArrayAttr::get(ctx, axisAttrs),
      ReductionKindAttr::get(ctx, ReductionKind::Max));
  op->setAttr(shardingAttrName, after);
  if (record)
    op->setAttr(ShardcDialect::getReshardForAttrName(), record);
  return op->getResult(0);
}

void FunctionPartitioner::fillPadding(Operation *op, const ShardingRule &rule,
                                      const LayoutChoice &layout,
                                      SmallVectorImpl<Value> &locals) {
  const FactorShardings &factors = *layout.factors;
  auto ruled = cast<ShardingRuleOpInterface>(op);
  for (unsigned i = 0; i < rule.getNumOperands(); ++i) {
    for (auto [d, dimFactors] : llvm::enumerate(rule.getOperand(i))) {
      // Only a dim of one factor is split unevenly (FactorShardings).
      if (dimFactors.size() != 1)
        continue;
      int64_t f = dimFactors.front();
      ArrayRef<StringRef> axes = factors.getFactorAxes(f);
      int64_t split = 1;
      for (StringRef axis : axes)
        split *= std::max<int64_t>(mesh.getAxisSize(axis), 1);
      int64_t size = rule.getFactor(f).size;
      if (!isUnevenSplit(size, split))
        continue;
      PaddingFill fill = ruled.getPaddingFill(i, rule, f);
      if (fill == PaddingFill::Any)
        continue;
      auto key = std::make_tuple(locals[i], int64_t(d), unsigned(fill));
      Value &done = filled[key];
      if (!done) {
        done = buildPaddingFill(builder, stripName(op->getLoc()), locals[i], d,
                                size, meshRef, axes, fill);
        // The masked value keeps the operand's layout.
        done.getDefiningOp()->setAttr(shardingAttrName, layout.operands[i]);
      }
      locals[i] = done;
    }
  }
}

LogicalResult FunctionPartitioner::partitionRuleOp(Operation *op,
                                                   const ShardingRule &rule) {
  std::string why;
  if (!rule.matchesOp(op, why))
    return op->emitOpError() << "has an inconsistent sharding rule: " << why;

  SmallVector<TensorShardingInput> assigned;
  for (Value v : op->getOperands())
    assigned.push_back({getAssigned(v), true});
  for (Value v : op->getResults())
    assigned.push_back({getAssigned(v), true});
  const LayoutChoice *best = chooseLayout(op, rule, assigned);
  if (!best)
    return op->emitOpError("found no layout to compute this op in");

  // Operands are set one by one, not through an IRMapping keyed by value:
  // one value read through two operands (matmul(x, x)) may be wanted in a
  // different layout by each.
  // Each move's record is made before any is emitted, so each prices the
  // op's layouts from the same state.
  SmallVector<DictionaryAttr, 4> records(op->getNumOperands());
  for (unsigned i = 0; explain && i < op->getNumOperands(); ++i)
    records[i] = explainReshard(op, rule, assigned, *best, i);
  SmallVector<Value, 4> locals;
  for (auto [i, v] : llvm::enumerate(op->getOperands())) {
    FailureOr<Value> local =
        getLocal(v, best->operands[i], op->getLoc(), records[i]);
    if (failed(local))
      return failure();
    locals.push_back(*local);
  }
  // Uneven dims: padding a sum, max or contraction would fold into real
  // elements holds the op's neutral element first.
  fillPadding(op, rule, *best, locals);
  AxisList maxAxes = best->factors->getMaxReducedAxes();
  SmallVector<Type, 2> localTypes;
  for (auto [i, v] : llvm::enumerate(op->getResults()))
    localTypes.push_back(localType(v, best->results[i]));
  // The op says what a device computes in this layout: usually itself on
  // the local blocks; an op whose sharded factor shifts what a block means
  // (a vocab-parallel gather, a sharded iota) offsets it by axis_index.
  FactorLayout layout;
  layout.mesh = meshRef;
  for (int64_t f = 0; f < rule.getNumFactors(); ++f) {
    ArrayRef<StringRef> axes = best->factors->getFactorAxes(f);
    layout.factorAxes.emplace_back(axes.begin(), axes.end());
  }
  SmallVector<Value, 2> results;
  if (failed(cast<ShardingRuleOpInterface>(op).buildLocalComputation(
          builder, locals, localTypes, layout, results)))
    return failure();
  if (results.size() != op->getNumResults())
    return op->emitOpError("internal error: its local computation built ")
           << results.size() << " results for " << op->getNumResults();
  for (auto [i, v] : llvm::enumerate(op->getResults())) {
    ShardingAttr produced = best->results[i];
    if (results[i].getType() != localTypes[i])
      return op->emitOpError("internal error: its local computation built a ")
             << results[i].getType() << " result where the layout needs "
             << localTypes[i];
    if (Operation *def = results[i].getDefiningOp())
      def->setAttr(shardingAttrName, produced);
    current[v] = {results[i], produced};
  }
  // Each device holds the max of its block: the max over the groups makes
  // the result whole (it is never a pending state, so it is done here).
  if (!maxAxes.empty()) {
    DictionaryAttr record =
        explain ? explainReshard(op, rule, assigned, *best, std::nullopt)
                : nullptr;
    for (auto [i, v] : llvm::enumerate(op->getResults()))
      current[v].first =
          emitAllReduceMax(results[i], maxAxes, best->results[i],
                           stripName(op->getLoc()), record);
  }
  return success();
}

LogicalResult FunctionPartitioner::run() {
  Block &oldBlock = func.getBody().front();

  // Every value needs a sharding on this mesh: propagation gives them.
  auto check = [&](Value v, Location loc) -> LogicalResult {
    ShardingAttr s = getAssigned(v);
    if (!s)
      return emitError(loc) << describeValue(v)
                            << " has no sharding; run --shardc-propagate "
                               "before --shardc-partition";
    if (s.getMesh() != meshRef)
      return emitError(loc) << describeValue(v) << " is sharded on mesh "
                            << s.getMesh() << " but the function uses "
                            << meshRef << "; one mesh per function";
    return success();
  };
  for (BlockArgument arg : oldBlock.getArguments())
    if (failed(check(arg, func.getLoc())))
      return failure();
  for (Operation &op : oldBlock.without_terminator())
    for (Value r : op.getResults())
      if (failed(check(r, op.getLoc())))
        return failure();
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (!func.getResultAttrOfType<ShardingAttr>(
            i, ShardcDialect::getShardingAttrName()))
      return func.emitOpError()
             << "result #" << i
             << " has no sharding; run --shardc-propagate first";

  auto *newBlock = new Block();
  SmallVector<Type> argTypes;
  for (BlockArgument arg : oldBlock.getArguments()) {
    ShardingAttr s = getAssigned(arg);
    Type local = localType(arg, s);
    argTypes.push_back(local);
    BlockArgument newArg = newBlock->addArgument(local, arg.getLoc());
    current[arg] = {newArg, s};
  }
  builder.setInsertionPointToEnd(newBlock);

  for (Operation &op : oldBlock) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      SmallVector<Value> results;
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        auto target = func.getResultAttrOfType<ShardingAttr>(
            i, ShardcDialect::getShardingAttrName());
        FailureOr<Value> local =
            getLocal(v, target, ret.getLoc(), explainFixed(v, target, i, {}));
        if (failed(local)) {
          delete newBlock;
          return failure();
        }
        results.push_back(*local);
      }
      func::ReturnOp::create(builder, ret.getLoc(), results);
      continue;
    }
    LogicalResult done = failure();
    if (ShardingAttr pinned = getConstrainedSharding(&op)) {
      FailureOr<Value> local =
          getLocal(op.getOperand(0), pinned, op.getLoc(),
                   explainFixed(op.getOperand(0), pinned, -1, &op));
      if (succeeded(local)) {
        current[op.getResult(0)] = {*local, pinned};
        done = success();
      }
    } else if (op.hasTrait<mlir::OpTrait::ConstantLike>()) {
      done = partitionConstant(&op);
    } else if (auto ruled = dyn_cast<ShardingRuleOpInterface>(op)) {
      done = partitionRuleOp(&op, ruled.getShardingRule());
    } else {
      done = op.emitOpError("cannot be partitioned: it has no sharding rule");
    }
    if (failed(done)) {
      delete newBlock;
      return failure();
    }
  }

  SmallVector<Type> resultTypes;
  for (Value v : newBlock->getTerminator()->getOperands())
    resultTypes.push_back(v.getType());
  // A result whose sharding leaves padding: its local shape and sharding no
  // longer say its global shape, which reassembly needs.
  for (auto [i, v] : llvm::enumerate(oldBlock.getTerminator()->getOperands())) {
    auto type = cast<RankedTensorType>(v.getType());
    auto sharding = func.getResultAttrOfType<ShardingAttr>(
        i, ShardcDialect::getShardingAttrName());
    SmallVector<int64_t, 4> local =
        getLocalShape(sharding, mesh, type.getShape());
    bool padded = false;
    for (size_t d = 0; d < local.size(); ++d) {
      int64_t split = 1;
      for (StringRef a : sharding.getDimAxes(d))
        split *= std::max<int64_t>(mesh.getAxisSize(a), 1);
      padded |= local[d] * split != type.getDimSize(d);
    }
    if (padded)
      func.setResultAttr(i, getGlobalShapeAttrName(),
                         DenseI64ArrayAttr::get(func.getContext(),
                                                type.getShape()));
  }
  func.getBody().push_back(newBlock);
  oldBlock.dropAllDefinedValueUses();
  oldBlock.erase();
  func.setFunctionType(
      FunctionType::get(func.getContext(), argTypes, resultTypes));
  func->setAttr(ShardcDialect::getSpmdAttrName(),
                UnitAttr::get(func.getContext()));
  return success();
}

struct PartitionPass : public shardc::impl::ShardcPartitionBase<PartitionPass> {
  using ShardcPartitionBase::ShardcPartitionBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::Expected<MachineModel> machineModel =
        resolveMachineModel(machine, linkLatency, linkBandwidth, flopRate);
    if (!machineModel) {
      module.emitError() << llvm::toString(machineModel.takeError());
      return signalPassFailure();
    }
    LayoutChoices choices;
    for (func::FuncOp func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || func->hasAttr(ShardcDialect::getSpmdAttrName()))
        continue;
      MeshOp mesh = findFunctionMesh(func).mesh;
      if (!mesh) {
        func.emitOpError("has no mesh to partition over");
        return signalPassFailure();
      }
      if (failed(
              FunctionPartitioner(func, mesh, choices, explain, *machineModel)
                  .run()))
        return signalPassFailure();
    }
  }
};

} // namespace

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
// in the same layout is moved once. Which layout each op is computed in
// is PartitionCandidates.cpp's.
//
//===----------------------------------------------------------------------===//

#include "FunctionPartitioner.h"

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
using shardc::detail::elementBytes;
using shardc::detail::FunctionPartitioner;
using shardc::detail::LayoutChoices;
using shardc::detail::stripName;

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

namespace {

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

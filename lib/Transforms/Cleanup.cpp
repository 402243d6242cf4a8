//===- Cleanup.cpp - removing redundant collective pairs ------------------===//

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/TensorOpBuilders.h"
#include "shardc/Dialect/ShardingVerifier.h"
#include "shardc/Transforms/Passes.h"
#include "shardc/Transforms/ReshardRecord.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace shardc {
#define GEN_PASS_DEF_SHARDCCLEANUP
#include "shardc/Transforms/Passes.h.inc"
} // namespace shardc

using namespace mlir;
using namespace shardc;

namespace {

/// all_slice(all_gather(x)) over the same axes and dim: the gather undone.
struct SliceOfGather : OpRewritePattern<AllSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AllSliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto gather = slice.getInput().getDefiningOp<AllGatherOp>();
    if (!gather || gather.getAxes() != slice.getAxes() ||
        gather.getDim() != slice.getDim() ||
        gather.getMeshAttr() != slice.getMeshAttr() ||
        gather.getInput().getType() != slice.getType())
      return failure();
    rewriter.replaceOp(slice, gather.getInput());
    return success();
  }
};

/// all_slice(all_reduce(x)) over the same axes: a reduce_scatter.
struct SliceOfAllReduce : OpRewritePattern<AllSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AllSliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto reduce = slice.getInput().getDefiningOp<AllReduceOp>();
    if (!reduce || reduce.getAxes() != slice.getAxes() ||
        reduce.getMeshAttr() != slice.getMeshAttr())
      return failure();
    // Read the slice's sharding before the rewrite erases the slice, and
    // the record of the reshard (explain's): the slice's consumer, which
    // the reduce_scatter now serves.
    Attribute sharding = slice->getAttr(ShardcDialect::getShardingAttrName());
    Attribute record = slice->getAttr(ShardcDialect::getReshardForAttrName());
    if (!record)
      record = reduce->getAttr(ShardcDialect::getReshardForAttrName());
    auto scatter = rewriter.replaceOpWithNewOp<ReduceScatterOp>(
        slice, slice.getType(), reduce.getInput(), slice.getMeshAttr(),
        slice.getAxes(), slice.getDimAttr(), reduce.getReductionAttr());
    if (sharding)
      scatter->setAttr(ShardcDialect::getShardingAttrName(), sharding);
    if (record)
      scatter->setAttr(ShardcDialect::getReshardForAttrName(), record);
    return success();
  }
};

/// all_slice of a splat constant: the smaller splat, built on the device
/// (every device's slice of a splat is the same splat).
struct SliceOfSplat : OpRewritePattern<AllSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AllSliceOp slice,
                                PatternRewriter &rewriter) const override {
    Attribute splat = getSplatConstantValue(slice.getInput());
    if (!splat)
      return failure();
    auto local = cast<ShapedType>(slice.getType());
    auto value = DenseElementsAttr::get(local, splat);
    Attribute sharding = slice->getAttr(ShardcDialect::getShardingAttrName());
    Value smaller =
        buildConstant(rewriter, slice.getLoc(), cast<ElementsAttr>(value));
    rewriter.replaceOp(slice, smaller);
    if (sharding)
      smaller.getDefiningOp()->setAttr(ShardcDialect::getShardingAttrName(),
                                       sharding);
    return success();
  }
};

/// A collective that moves nothing: identity permutations, or groups of
/// one device.
template <typename Op> struct TrivialCollective : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    if (op.getInput().getType() != op.getType())
      return failure();
    MeshOp mesh = lookupMesh(op, op.getMeshAttr());
    if (!mesh)
      return failure();
    int64_t groupSize = op.getGroupSize(mesh);
    bool trivial = groupSize == 1;
    // A permutation is the identity only if it maps every device of the
    // group to itself: a device that is no pair's target gets zeros (the
    // planner's [0, 0] turns a value into a pending sum that way).
    if constexpr (std::is_same_v<Op, CollectivePermuteOp>) {
      auto pairs = op.getSourceTargetPairs();
      trivial |= static_cast<int64_t>(pairs.size()) == groupSize &&
                 llvm::all_of(pairs,
                              [](auto p) { return p.first == p.second; });
    }
    if (!trivial)
      return failure();
    rewriter.replaceOp(op, op.getInput());
    return success();
  }
};

struct CleanupPass : public shardc::impl::ShardcCleanupBase<CleanupPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SliceOfGather, SliceOfAllReduce, SliceOfSplat,
                 TrivialCollective<CollectivePermuteOp>,
                 TrivialCollective<AllReduceOp>, TrivialCollective<AllGatherOp>,
                 TrivialCollective<AllSliceOp>>(&getContext());
    // In a single-block function, region simplification (unreachable
    // blocks, dead non-entry block arguments, dead ops) finds nothing that
    // the driver's own erasure of dead ops leaves, and its liveness walk
    // cost as much as the rewrites.
    GreedyRewriteConfig config;
    if (getOperation().getBody().hasOneBlock())
      config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
    // The partitioner builds what a consumer needs where the consumer is:
    // an uneven dim's padding mask (axis_index, iota, compare) is rebuilt
    // for every op that must ignore the padding, and two consumers of one
    // splat get a constant each. Each device computes the same thing again,
    // so equal pure ops become one.
    // explain's record of a collective's consumer (shardc.reshard_for)
    // tells two equal collectives apart; it is set aside meanwhile, so that
    // explain lists the collectives simulate runs, the one kept naming its
    // own consumer.
    StringRef recordName = ShardcDialect::getReshardForAttrName();
    llvm::DenseMap<Operation *, Attribute> records;
    getOperation().walk([&](Operation *op) {
      if (Attribute record = op->getAttr(recordName)) {
        records[op] = record;
        op->removeAttr(recordName);
      }
    });
    IRRewriter rewriter(&getContext());
    eliminateCommonSubExpressions(rewriter, getAnalysis<DominanceInfo>(),
                                  getOperation());
    getOperation().walk([&](Operation *op) {
      if (Attribute record = records.lookup(op))
        op->setAttr(recordName, record);
    });
  }
};

} // namespace

//===- ReductionOps.cpp - reduce_sum and reduce_max -----------------------===//
//
// Type inference, sharding rule, gradient rule and cost of the reductions.
//
//===----------------------------------------------------------------------===//

#include "TensorOpHelpers.h"

#include "shardc/Dialect/CostOpInterface.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/TensorOpBuilders.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;

//===----------------------------------------------------------------------===//
// Type inference
//===----------------------------------------------------------------------===//

template <typename Adaptor>
static LogicalResult inferReduce(std::optional<Location> loc, Adaptor adaptor,
                                 SmallVectorImpl<Type> &types) {
  auto input = asTensor(adaptor.getInput());
  if (!input)
    return failInference(loc, "reduce operand must be a ranked tensor");
  if (failed(checkDimList(loc, adaptor.getDims(), input.getRank(), "reduce")))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < input.getRank(); ++d)
    if (!llvm::is_contained(adaptor.getDims(), d))
      shape.push_back(input.getDimSize(d));
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult ReduceSumOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  return inferReduce(loc, adaptor, types);
}

LogicalResult ReduceMaxOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  return inferReduce(loc, adaptor, types);
}

//===----------------------------------------------------------------------===//
// Sharding rules
//===----------------------------------------------------------------------===//

/// `reducedKind` is the kind of the summed-away factors.
static ShardingRule reduceRule(Value input, ArrayRef<int64_t> reduced,
                               FactorKind reducedKind) {
  ShardingRule rule;
  ArrayRef<int64_t> shape = shapeOf(input);
  TensorFactors in, out;
  for (int64_t d = 0, e = shape.size(); d < e; ++d) {
    bool isReduced = llvm::is_contained(reduced, d);
    int64_t f = rule.addFactor(shape[d],
                               isReduced ? reducedKind : FactorKind::Parallel);
    in.push_back({f});
    if (!isReduced)
      out.push_back({f});
  }
  rule.addOperand(std::move(in));
  rule.addResult(std::move(out));
  return rule;
}

ShardingRule ReduceSumOp::getShardingRule() {
  return reduceRule(getInput(), getDims(), FactorKind::Reduction);
}

// A sharded max reduction leaves each device the max of its block; the
// partitioner takes the max of those at once (all_reduce max over the
// factor's axes, a [B,S]-sized message for vocab-parallel cross-entropy)
// rather than gathering the operand.
ShardingRule ReduceMaxOp::getShardingRule() {
  return reduceRule(getInput(), getDims(), FactorKind::MaxReduction);
}

//===----------------------------------------------------------------------===//
// Gradient rules
//===----------------------------------------------------------------------===//

LogicalResult ReduceSumOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                                  Value g,
                                                  ArrayRef<bool> wanted,
                                                  SmallVectorImpl<Value> &out) {
  // Every summed element gets g: g broadcast back over the reduced dims.
  clearCotangents(*this, out);
  if (want(wanted, 0))
    out[0] = GradientBuilder(b, loc).broadcast(
        g, getInput(), otherDims(rankOf(getInput()), getDims()));
  return success();
}

LogicalResult ReduceMaxOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                                  Value g,
                                                  ArrayRef<bool> wanted,
                                                  SmallVectorImpl<Value> &out) {
  // The maximal elements share g equally (JAX's rule):
  // mask = 1 - step(y - x) is 1 exactly where x equals its row's max.
  clearCotangents(*this, out);
  if (!want(wanted, 0))
    return success();
  GradientBuilder gb(b, loc);
  Value x = getInput();
  SmallVector<int64_t> kept = otherDims(rankOf(x), getDims());
  Value yb = gb.broadcast(getResult(), x, kept);
  Value mask = gb.sub(gb.splat(x, 1.0), gb.step(gb.sub(yb, x)));
  Value count = gb.reduceSum(mask, getDims());
  Value share = gb.broadcast(gb.div(g, count), x, kept);
  out[0] = gb.mul(share, mask);
  return success();
}

//===----------------------------------------------------------------------===//
// Cost: one operation per operand element
//===----------------------------------------------------------------------===//

double ReduceSumOp::getFlops(ArrayRef<double> factorSizes) {
  return getIterationSpaceFlops(1, factorSizes);
}

double ReduceMaxOp::getFlops(ArrayRef<double> factorSizes) {
  return getIterationSpaceFlops(1, factorSizes);
}

//===----------------------------------------------------------------------===//
// Builders
//===----------------------------------------------------------------------===//

Value shardc::buildReduceSum(OpBuilder &b, Location loc, Value input,
                             ArrayRef<int64_t> dims) {
  return ReduceSumOp::create(b, loc, input, b.getDenseI64ArrayAttr(dims));
}

Value shardc::buildReduction(OpBuilder &b, Location loc, OperationName name,
                             Value input, ArrayRef<int64_t> dims) {
  // Every reduction is a Shardc_ReduceOp: one operand, `dims`, a result
  // type its inference gives.
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (!llvm::is_contained(dims, d))
      shape.push_back(type.getDimSize(d));
  OperationState state(loc, name);
  state.addOperands(input);
  state.addAttribute("dims", b.getDenseI64ArrayAttr(dims));
  state.addTypes(RankedTensorType::get(shape, type.getElementType()));
  return b.create(state)->getResult(0);
}

//===- ConstantOps.cpp - shardc.constant ----------------------------------===//
//
// Folding, materialization, sharding rule, gradient rule, cost and builders
// of the constant op.
//
//===----------------------------------------------------------------------===//

#include "TensorOpHelpers.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/TensorOpBuilders.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

Operation *ShardcDialect::materializeConstant(OpBuilder &builder,
                                              Attribute value, Type type,
                                              Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

// Nothing to relate: a fresh factor per result dim.
ShardingRule ConstantOp::getShardingRule() {
  ShardingRule rule;
  rule.addResult(freshFactors(rule, shapeOf(getResult())));
  return rule;
}

LogicalResult ConstantOp::buildOperandCotangents(OpBuilder &, Location, Value,
                                                 ArrayRef<bool>,
                                                 SmallVectorImpl<Value> &out) {
  clearCotangents(*this, out); // no operands
  return success();
}

// Materializing a constant is not arithmetic.
double ConstantOp::getFlops(ArrayRef<double>) { return 0; }

Value shardc::buildConstant(OpBuilder &b, Location loc, ElementsAttr value) {
  return ConstantOp::create(b, loc, value);
}

Value shardc::buildSplatConstant(OpBuilder &b, Location loc, Type type,
                                 double value) {
  auto tensor = cast<RankedTensorType>(type);
  auto attr = DenseElementsAttr::get(
      tensor, b.getFloatAttr(tensor.getElementType(), value));
  return ConstantOp::create(b, loc, cast<ElementsAttr>(attr));
}

Attribute shardc::getSplatConstantValue(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  if (!constant)
    return {};
  auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
  if (!splat)
    return {};
  return splat.getSplatValue<Attribute>();
}

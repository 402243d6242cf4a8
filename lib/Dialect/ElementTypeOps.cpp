//===- ElementTypeOps.cpp - iota, compare, select and convert -------------===//
//
// Type inference, sharding rules, gradient rules and cost of the ops that
// create integer and boolean tensors or change a tensor's element type.
//
// Differentiability follows the types: a cotangent exists only for a
// floating-point operand of an op with a floating-point result. So compare
// (i1 result) and iota (no operands) have none, select's `pred` has none,
// and convert passes the cotangent through only from float to float.
//
//===----------------------------------------------------------------------===//

#include "TensorOpHelpers.h"

#include "shardc/Dialect/GradientBuilder.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/TensorOpBuilders.h"
#include "shardc/Dialect/TensorOpQueries.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;

/// The executed float types: f32, and bf16 and f16 (computed in f32,
/// rounded on store; docs/precision.md).
static bool isExecutedFloat(Type t) { return t.isF32() || t.isBF16() || t.isF16(); }

/// The element types the element-type ops produce and convert between.
static bool isComputedElementType(Type t) {
  return isExecutedFloat(t) || t.isSignlessInteger(1) ||
         t.isSignlessInteger(32) || t.isSignlessInteger(64);
}

static bool isFloatTensor(Value v) {
  return isa<FloatType>(cast<ShapedType>(v.getType()).getElementType());
}

std::optional<CompareDirection>
shardc::symbolizeCompareDirection(StringRef name) {
  return llvm::StringSwitch<std::optional<CompareDirection>>(name)
      .Case("EQ", CompareDirection::EQ)
      .Case("NE", CompareDirection::NE)
      .Case("LT", CompareDirection::LT)
      .Case("LE", CompareDirection::LE)
      .Case("GT", CompareDirection::GT)
      .Case("GE", CompareDirection::GE)
      .Default(std::nullopt);
}

//===----------------------------------------------------------------------===//
// Type inference (the verifiers: every constraint is checked here)
//===----------------------------------------------------------------------===//

LogicalResult IotaOp::verify() {
  RankedTensorType type = getType();
  Type element = type.getElementType();
  if (!(element.isF32() || element.isSignlessInteger(32) ||
        element.isSignlessInteger(64)))
    return emitOpError() << "counts in f32, i32 or i64, not " << element;
  if (getDimension() < 0 || getDimension() >= type.getRank())
    return emitOpError() << "dimension " << getDimension()
                         << " is out of range for " << type;
  return success();
}

LogicalResult CompareOp::inferReturnTypes(MLIRContext *ctx,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto lhs = asTensor(adaptor.getLhs()), rhs = asTensor(adaptor.getRhs());
  if (!lhs || !rhs || lhs != rhs)
    return failInference(loc, "compare operands must have the same type");
  Type element = lhs.getElementType();
  if (!(isExecutedFloat(element) || element.isSignlessInteger(32) ||
        element.isSignlessInteger(64)))
    return failInference(loc, "compare operands must be f32, bf16, f16, i32 "
                              "or i64");
  if (!symbolizeCompareDirection(adaptor.getDirection()))
    return failInference(loc, "compare direction must be one of \"EQ\", "
                              "\"NE\", \"LT\", \"LE\", \"GT\", \"GE\"");
  types.push_back(
      RankedTensorType::get(lhs.getShape(), IntegerType::get(ctx, 1)));
  return success();
}

LogicalResult SelectOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto pred = asTensor(adaptor.getPred());
  auto onTrue = asTensor(adaptor.getOnTrue());
  auto onFalse = asTensor(adaptor.getOnFalse());
  if (!pred || !onTrue || !onFalse || onTrue != onFalse)
    return failInference(loc, "select on_true and on_false must have the "
                              "same type");
  if (pred.getShape() != onTrue.getShape())
    return failInference(loc, "select pred must have the shape of on_true");
  types.push_back(onTrue);
  return success();
}

LogicalResult ConvertOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto input = asTensor(adaptor.getInput());
  Type dtype = adaptor.getDtype();
  if (!input)
    return failInference(loc, "convert operand must be a ranked tensor");
  if (!dtype || !isComputedElementType(dtype) ||
      !isComputedElementType(input.getElementType()))
    return failInference(loc, "convert converts between f32, bf16, f16, i1, "
                              "i32 and i64");
  types.push_back(RankedTensorType::get(input.getShape(), dtype));
  return success();
}

//===----------------------------------------------------------------------===//
// Sharding rules
//===----------------------------------------------------------------------===//

// Every dim is a parallel factor, the counted one too: a device holding a
// block of it counts from the block's offset (buildLocalComputation).
ShardingRule IotaOp::getShardingRule() {
  ShardingRule rule;
  rule.addResult(freshFactors(rule, shapeOf(getResult())));
  return rule;
}

LogicalResult IotaOp::buildLocalComputation(OpBuilder &b, ValueRange locals,
                                            TypeRange localTypes,
                                            const FactorLayout &layout,
                                            SmallVectorImpl<Value> &results) {
  int64_t dim = getDimension();
  ArrayRef<StringRef> axes = layout.factorAxes[dim];
  if (axes.empty())
    return buildClonedLocalComputation(*this, b, locals, localTypes, results);
  // The device's block of the counted dim starts at its index along `axes`
  // times the block size: a local iota plus that offset.
  auto type = cast<RankedTensorType>(localTypes[0]);
  Location loc = getLoc(), helper = helperLoc(loc);
  Value offset = buildBlockOffset(b, helper, layout.mesh, axes,
                                  type.getDimSize(dim), type.getElementType());
  Value local = IotaOp::create(b, helper, type, dim);
  results.push_back(buildAdd(b, loc, local,
                             buildBroadcastInDim(b, helper, type, offset, {})));
  return success();
}

/// All operands and the result share one parallel factor per dim.
static ShardingRule elementwiseRule(Operation *op) {
  ShardingRule rule;
  TensorFactors dims = freshFactors(rule, shapeOf(op->getResult(0)));
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    rule.addOperand(dims);
  rule.addResult(std::move(dims));
  return rule;
}

ShardingRule CompareOp::getShardingRule() { return elementwiseRule(*this); }
ShardingRule SelectOp::getShardingRule() { return elementwiseRule(*this); }
ShardingRule ConvertOp::getShardingRule() { return elementwiseRule(*this); }

//===----------------------------------------------------------------------===//
// Gradient rules
//===----------------------------------------------------------------------===//

LogicalResult IotaOp::buildOperandCotangents(OpBuilder &, Location, Value,
                                             ArrayRef<bool>,
                                             SmallVectorImpl<Value> &out) {
  clearCotangents(*this, out); // no operands
  return success();
}

LogicalResult CompareOp::buildOperandCotangents(OpBuilder &, Location, Value,
                                                ArrayRef<bool>,
                                                SmallVectorImpl<Value> &out) {
  clearCotangents(*this, out); // a boolean result has no cotangent
  return success();
}

LogicalResult SelectOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                               Value g, ArrayRef<bool> wanted,
                                               SmallVectorImpl<Value> &out) {
  clearCotangents(*this, out);
  if (!isFloatTensor(getResult()))
    return success();
  // d on_true = pred ? g : 0; d on_false = pred ? 0 : g.
  GradientBuilder gb(b, loc);
  Value zero = gb.splat(g, 0.0);
  if (want(wanted, 1))
    out[1] = SelectOp::create(b, loc, getPred(), g, zero);
  if (want(wanted, 2))
    out[2] = SelectOp::create(b, loc, getPred(), zero, g);
  return success();
}

LogicalResult ConvertOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                                Value g, ArrayRef<bool> wanted,
                                                SmallVectorImpl<Value> &out) {
  clearCotangents(*this, out);
  // A conversion between float types is the identity up to rounding: the
  // cotangent goes back converted to the input's type (a bf16 activation's
  // gradient is bf16, an f32 master weight's f32).
  if (!want(wanted, 0) || !isFloatTensor(getInput()) ||
      !isFloatTensor(getResult()))
    return success();
  Type from = cast<RankedTensorType>(getInput().getType()).getElementType();
  out[0] = getInput().getType() == getResult().getType()
               ? g
               : buildConvert(b, loc, g, from);
  return success();
}

//===----------------------------------------------------------------------===//
// Cost: one operation per element, except iota's counting (free, like a
// constant)
//===----------------------------------------------------------------------===//

double IotaOp::getFlops(ArrayRef<double>) { return 0; }
double CompareOp::getFlops(ArrayRef<double> factorSizes) {
  return getIterationSpaceFlops(1, factorSizes);
}
double SelectOp::getFlops(ArrayRef<double> factorSizes) {
  return getIterationSpaceFlops(1, factorSizes);
}
double ConvertOp::getFlops(ArrayRef<double> factorSizes) {
  return getIterationSpaceFlops(1, factorSizes);
}

//===----------------------------------------------------------------------===//
// Builders (TensorOpBuilders.h)
//===----------------------------------------------------------------------===//

Value shardc::buildIota(OpBuilder &b, Location loc, RankedTensorType type,
                        int64_t dimension) {
  return IotaOp::create(b, loc, type, b.getI64IntegerAttr(dimension));
}

Value shardc::buildConvert(OpBuilder &b, Location loc, Value input,
                           Type element) {
  return ConvertOp::create(b, loc, input, TypeAttr::get(element));
}

Value shardc::buildCompare(OpBuilder &b, Location loc, Value lhs, Value rhs,
                           StringRef direction) {
  return CompareOp::create(b, loc, lhs, rhs, b.getStringAttr(direction));
}

Value shardc::buildSelect(OpBuilder &b, Location loc, Value pred, Value onTrue,
                          Value onFalse) {
  return SelectOp::create(b, loc, pred, onTrue, onFalse);
}

//===----------------------------------------------------------------------===//
// Queries (TensorOpQueries.h)
//===----------------------------------------------------------------------===//

Value shardc::getConvertedOperand(Operation *op) {
  auto convert = dyn_cast_or_null<ConvertOp>(op);
  return convert ? convert.getInput() : Value();
}

std::optional<int64_t> shardc::getCountedDim(Operation *op) {
  if (auto iota = dyn_cast_or_null<IotaOp>(op))
    return iota.getDimension();
  return std::nullopt;
}

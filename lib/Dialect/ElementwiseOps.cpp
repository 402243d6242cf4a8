//===- ElementwiseOps.cpp - building elementwise ops by class -------------===//
//
// An elementwise op is its ODS line: formula, kernel, gradient and cost are
// all in ElementwiseOps.td (Shardc_UnaryElementwiseOp,
// Shardc_BinaryElementwiseOp) and its sharding rule is the identity
// (getElementwiseShardingRule). What remains here is building the ones other
// families' gradient rules, the composites' expansions and the passes use
// (GradientBuilder, TensorOpBuilders.h), each by its class, so that no other
// C++ file names an elementwise op class and a misspelt op does not compile.
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/GradientBuilder.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/TensorOpBuilders.h"

using namespace mlir;
using namespace shardc;

Value GradientBuilder::add(Value x, Value y) { return build<AddOp>({x, y}); }
Value GradientBuilder::sub(Value x, Value y) { return build<SubOp>({x, y}); }
Value GradientBuilder::mul(Value x, Value y) { return build<MulOp>({x, y}); }
Value GradientBuilder::div(Value x, Value y) { return build<DivOp>({x, y}); }
Value GradientBuilder::neg(Value x) { return build<NegOp>({x}); }
Value GradientBuilder::step(Value x) { return build<StepOp>({x}); }
Value GradientBuilder::tanh(Value x) { return build<TanhOp>({x}); }
Value GradientBuilder::exp(Value x) { return build<ExpOp>({x}); }
Value GradientBuilder::log(Value x) { return build<LogOp>({x}); }
Value GradientBuilder::rsqrt(Value x) { return build<RsqrtOp>({x}); }
Value GradientBuilder::stopGradient(Value x) {
  return build<StopGradientOp>({x});
}

Value shardc::buildAdd(OpBuilder &b, Location loc, Value x, Value y) {
  return GradientBuilder(b, loc).build<AddOp>({x, y});
}
Value shardc::buildSub(OpBuilder &b, Location loc, Value x, Value y) {
  return GradientBuilder(b, loc).build<SubOp>({x, y});
}
Value shardc::buildMul(OpBuilder &b, Location loc, Value x, Value y) {
  return GradientBuilder(b, loc).build<MulOp>({x, y});
}
Value shardc::buildDiv(OpBuilder &b, Location loc, Value x, Value y) {
  return GradientBuilder(b, loc).build<DivOp>({x, y});
}
Value shardc::buildSqrt(OpBuilder &b, Location loc, Value x) {
  return GradientBuilder(b, loc).build<SqrtOp>({x});
}

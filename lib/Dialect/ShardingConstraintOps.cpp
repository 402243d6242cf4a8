//===- ShardingConstraintOps.cpp - shardc.sharding_constraint -------------===//
//
// Verifier, sharding rule, gradient rule, cost and builders of the op that
// pins a value's sharding.
//
//===----------------------------------------------------------------------===//

#include "TensorOpHelpers.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ShardingVerifier.h"
#include "shardc/Dialect/TensorOpBuilders.h"
#include "shardc/Dialect/ValueNames.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;

LogicalResult ShardingConstraintOp::verify() {
  ShardingAttr sharding = getSharding();
  MeshOp mesh = lookupMesh(*this, sharding.getMesh());
  if (!mesh)
    return emitOpError() << "names unknown mesh " << sharding.getMesh();
  return verifyShardingForType(
      sharding, mesh, getInput().getType(),
      [&] { return describeValue(getResult()); },
      [&] { return emitOpError(); });
}

// A sharding constraint moves no data in the global program: identity. (It
// pins its result's sharding, which propagation reads as an annotation.)
ShardingRule ShardingConstraintOp::getShardingRule() {
  return getElementwiseShardingRule(getOperation());
}

LogicalResult
ShardingConstraintOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                             Value g, ArrayRef<bool> wanted,
                                             SmallVectorImpl<Value> &out) {
  // The cotangent is pinned like the value: a layout the user chose for
  // the forward value is as good a choice for its gradient.
  clearCotangents(*this, out);
  if (want(wanted, 0))
    out[0] = ShardingConstraintOp::create(b, loc, g, getSharding());
  return success();
}

// It returns its operand: no arithmetic.
double ShardingConstraintOp::getFlops(ArrayRef<double>) { return 0; }

Value shardc::buildShardingConstraint(OpBuilder &b, Location loc, Value input,
                                      ShardingAttr sharding) {
  return ShardingConstraintOp::create(b, loc, input, sharding);
}

ShardingAttr shardc::getConstrainedSharding(Operation *op) {
  if (auto constraint = dyn_cast_or_null<ShardingConstraintOp>(op))
    return constraint.getSharding();
  return {};
}

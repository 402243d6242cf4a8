//===- SeededParameters.cpp - how --seed draws a parameter ----------------===//

#include "shardc/Analysis/SeededParameters.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ShardcOps.h"
#include "shardc/Dialect/ShardingRule.h"

#include <cmath>

using namespace mlir;
using namespace shardc;

/// Ops that only move a value's elements (or tag it): the parameter's role
/// is decided by what consumes their result.
static bool isLayoutOnly(Operation *op) {
  return op->hasTrait<shardc::OpTrait::MovesElements>();
}

/// The first op in program order that uses `value`, and which operand it is.
static OpOperand *firstUse(Value value) {
  OpOperand *first = nullptr;
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (!first) {
      first = &use;
      continue;
    }
    Operation *best = first->getOwner();
    if (user->getBlock() == best->getBlock() && user->isBeforeInBlock(best))
      first = &use;
  }
  return first;
}

/// The number of elements `op` sums over for each element of its result,
/// when operand `operandIndex` is contracted with another operand: the
/// product of the reduction factors the operand shares with another one.
/// 0 when it is not such a contraction.
static int64_t contractionFanIn(Operation *op, unsigned operandIndex) {
  auto ruleOp = dyn_cast<ShardingRuleOpInterface>(op);
  if (!ruleOp || op->getNumOperands() < 2)
    return 0;
  ShardingRule rule = ruleOp.getShardingRule();
  if (operandIndex >= rule.getNumOperands())
    return 0;
  llvm::SmallDenseSet<int64_t, 4> elsewhere;
  for (unsigned i = 0; i < rule.getNumOperands(); ++i)
    if (i != operandIndex)
      for (const DimFactors &dim : rule.getOperand(i))
        elsewhere.insert(dim.begin(), dim.end());
  int64_t fanIn = 1;
  bool found = false;
  for (const DimFactors &dim : rule.getOperand(operandIndex))
    for (int64_t f : dim)
      if (rule.getFactor(f).kind == FactorKind::Reduction &&
          elsewhere.contains(f)) {
        fanIn *= rule.getFactor(f).size;
        found = true;
      }
  return found ? fanIn : 0;
}

/// The fan-in of the contraction that computes `value`, looking through
/// layout ops; 0 when none does.
static int64_t producerFanIn(Value value) {
  for (int depth = 0; depth < 8; ++depth) {
    Operation *def = value.getDefiningOp();
    if (!def)
      return 0;
    if (isLayoutOnly(def) && def->getNumOperands() == 1) {
      value = def->getOperand(0);
      continue;
    }
    int64_t best = 0;
    for (unsigned i = 0; i < def->getNumOperands(); ++i)
      best = std::max(best, contractionFanIn(def, i));
    return best;
  }
  return 0;
}

static SeededInputScale fanInScale(int64_t fanIn, llvm::StringRef what) {
  SeededInputScale s;
  s.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(fanIn)));
  s.reason = (what + " " + llvm::Twine(fanIn)).str();
  return s;
}

SeededInputScale shardc::getSeededInputScale(func::FuncOp func,
                                             unsigned index) {
  SeededInputScale data;
  if (index >= func.getNumArguments() ||
      !func.getArgAttr(index, ShardcDialect::getParamAttrName()))
    return data;
  BlockArgument arg = func.getArgument(index);
  auto type = dyn_cast<RankedTensorType>(arg.getType());
  if (!type || !isa<FloatType>(type.getElementType()))
    return data;

  SeededInputScale plain;
  plain.reason = "parameter";
  Value value = arg;
  // Follow the parameter through ops that only lay it out (a transposed or
  // reshaped weight) to the op that computes with it.
  for (int depth = 0; depth < 8; ++depth) {
    OpOperand *use = firstUse(value);
    if (!use)
      return plain;
    Operation *user = use->getOwner();
    if (isLayoutOnly(user) && user->getNumResults() == 1) {
      value = user->getResult(0);
      continue;
    }
    unsigned operand = use->getOperandNumber();
    if (int64_t fanIn = contractionFanIn(user, operand))
      return fanInScale(fanIn, "fan-in");
    // A norm's gain, drawn as its expansion's multiply draws it; its bias
    // is a plain parameter, as its expansion's add (no contraction's bias)
    // has it: the draw is the same whether the norm is expanded or not
    // (the executing commands keep it until autodiff, docs/autodiff.md).
    if (isa<LayerNormOp, RmsNormOp>(user)) {
      if (operand != 1)
        return plain;
      SeededInputScale s;
      s.scale = 0.1f;
      s.offset = 1.0f;
      s.reason = "gain";
      return s;
    }
    if (isa<MulOp>(user)) {
      SeededInputScale s;
      s.scale = 0.1f;
      s.offset = 1.0f;
      s.reason = "gain";
      return s;
    }
    if (isa<AddOp, SubOp>(user)) {
      Value other = user->getOperand(1 - operand);
      if (int64_t fanIn = producerFanIn(other))
        return fanInScale(fanIn, "bias of fan-in");
    }
    return plain;
  }
  return plain;
}

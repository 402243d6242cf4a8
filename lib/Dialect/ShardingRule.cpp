//===- ShardingRule.cpp - sharding rules in factor form -------------------===//
//
// The ShardingRule class (see ShardingRule.h). Each op's rule is in its
// family's file (or, for elementwise ops, in ElementwiseOps.td).
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/ShardingRule.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace shardc;

//===----------------------------------------------------------------------===//
// ShardingRule
//===----------------------------------------------------------------------===//

StringRef shardc::stringifyFactorKind(FactorKind kind) {
  switch (kind) {
  case FactorKind::Parallel:
    return "parallel";
  case FactorKind::Reduction:
    return "reduction";
  case FactorKind::MaxReduction:
    return "max_reduction";
  case FactorKind::NeedReplication:
    return "need_replication";
  }
  return "unknown";
}

PaddingFill shardc::getDefaultPaddingFill(FactorKind kind) {
  switch (kind) {
  case FactorKind::Reduction:
    return PaddingFill::Zero;
  case FactorKind::MaxReduction:
    return PaddingFill::Lowest;
  case FactorKind::Parallel:
  case FactorKind::NeedReplication:
    return PaddingFill::Any;
  }
  return PaddingFill::Any;
}

int64_t ShardingRule::addFactor(int64_t size, FactorKind kind) {
  factors.push_back({size, kind});
  return static_cast<int64_t>(factors.size()) - 1;
}

void ShardingRule::addOperand(TensorFactors dims) {
  // Operands stay in front of results even if added late.
  tensors.insert(tensors.begin() + numOperands, std::move(dims));
  ++numOperands;
}

void ShardingRule::addResult(TensorFactors dims) {
  tensors.push_back(std::move(dims));
}

int64_t ShardingRule::getDimSize(unsigned t, unsigned d) const {
  int64_t size = 1;
  for (int64_t f : tensors[t][d])
    size *= factors[f].size;
  return size;
}

int64_t ShardingRule::getTensorNumElements(unsigned t) const {
  int64_t n = 1;
  for (unsigned d = 0, e = tensors[t].size(); d < e; ++d)
    n *= getDimSize(t, d);
  return n;
}

bool ShardingRule::matchesShapes(ArrayRef<ArrayRef<int64_t>> shapes,
                                 std::string &why) const {
  llvm::raw_string_ostream os(why);
  if (shapes.size() != tensors.size()) {
    os << "rule has " << tensors.size() << " tensors, op has " << shapes.size();
    return false;
  }
  for (const Factor &f : factors)
    if (f.size < 0) {
      os << "negative factor size " << f.size;
      return false;
    }
  for (auto [t, shape] : llvm::enumerate(shapes)) {
    if (shape.size() != tensors[t].size()) {
      os << "tensor #" << t << " has rank " << shape.size() << ", rule has "
         << tensors[t].size() << " dims";
      return false;
    }
    for (auto [d, dimFactors] : llvm::enumerate(tensors[t])) {
      for (int64_t f : dimFactors)
        if (f < 0 || f >= getNumFactors()) {
          os << "tensor #" << t << " dim " << d << " names factor " << f;
          return false;
        }
      if (getDimSize(t, d) != shape[d]) {
        os << "tensor #" << t << " dim " << d << " has size " << shape[d]
           << ", its factors make " << getDimSize(t, d);
        return false;
      }
    }
  }
  return true;
}

bool ShardingRule::matchesOp(Operation *op, std::string &why) const {
  SmallVector<ArrayRef<int64_t>> shapes;
  auto add = [&](Type type) {
    if (auto shaped = dyn_cast<ShapedType>(type); shaped && shaped.hasRank())
      shapes.push_back(shaped.getShape());
    else
      shapes.push_back({});
  };
  for (Type t : op->getOperandTypes())
    add(t);
  for (Type t : op->getResultTypes())
    add(t);
  return matchesShapes(shapes, why);
}

void ShardingRule::print(raw_ostream &os) const {
  auto printTensors = [&](unsigned begin, unsigned end) {
    os << "(";
    for (unsigned t = begin; t < end; ++t) {
      if (t != begin)
        os << ", ";
      os << "[";
      llvm::interleaveComma(tensors[t], os, [&](const DimFactors &dim) {
        if (dim.size() != 1)
          os << "(";
        llvm::interleave(
            dim, os, [&](int64_t f) { os << "f" << f; }, " ");
        if (dim.size() != 1)
          os << ")";
      });
      os << "]";
    }
    os << ")";
  };
  printTensors(0, numOperands);
  os << " -> ";
  printTensors(numOperands, tensors.size());
  os << " {";
  llvm::interleaveComma(llvm::enumerate(factors), os, [&](auto it) {
    os << "f" << it.index() << "=" << it.value().size;
    if (it.value().kind != FactorKind::Parallel)
      os << " " << stringifyFactorKind(it.value().kind);
  });
  os << "}";
}

std::string ShardingRule::str() const {
  std::string out;
  llvm::raw_string_ostream os(out);
  print(os);
  return out;
}

ShardingRule ShardingRule::getIdentity(ArrayRef<int64_t> shape,
                                       unsigned numOperands,
                                       unsigned numResults) {
  ShardingRule rule;
  TensorFactors dims;
  for (int64_t size : shape)
    dims.push_back({rule.addFactor(size, FactorKind::Parallel)});
  for (unsigned i = 0; i < numOperands; ++i)
    rule.addOperand(dims);
  for (unsigned i = 0; i < numResults; ++i)
    rule.addResult(dims);
  return rule;
}

ShardingRule shardc::getElementwiseShardingRule(Operation *op) {
  return ShardingRule::getIdentity(
      cast<ShapedType>(op->getResult(0).getType()).getShape(),
      op->getNumOperands(), 1);
}

LogicalResult shardc::buildClonedLocalComputation(
    Operation *op, OpBuilder &builder, ValueRange localOperands,
    TypeRange localResultTypes, SmallVectorImpl<Value> &results) {
  Operation *clone = builder.clone(*op);
  clone->setOperands(localOperands);
  for (auto [result, type] : llvm::zip(clone->getResults(), localResultTypes))
    result.setType(type);
  // Attributes that spell out a sharded dim's size follow its local size.
  if (auto ruleOp = dyn_cast<ShardingRuleOpInterface>(clone))
    ruleOp.localizeAttributes();
  llvm::append_range(results, clone->getResults());
  return success();
}

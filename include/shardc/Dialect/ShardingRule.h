//===- ShardingRule.h - per-op sharding rules in factor form ----*- C++ -*-===//
//
// A sharding rule says how an op's tensor dimensions relate, so that a
// sharding known on one operand or result can be carried to the others.
//
// It is written in *factor form*: the op's iteration space is a set of
// factors, each with a size and a kind, and every dimension of every operand
// and result is the row-major product of a list of factors (major to minor).
// `matmul [16,64] x [64,128]` is factors i=16, k=64, j=128 with
//
//   lhs = [i, k], rhs = [k, j], result = [i, j], k a reduction factor.
//
// A dimension is usually one factor; a reshape's merged dimension is several
// (`[8,4] -> [32]`: result dim 0 = [f8, f4]); an expanded size-1 dimension of
// broadcast_in_dim is none. Sharding a factor over some mesh axes shards, in
// every tensor that has it, the dimension that factor is in.
//
// Every tensor op implements `ShardingRuleOpInterface` (each rule is in its
// op family's file, lib/Dialect/*Ops.cpp, or in ShardcOps.td for the
// elementwise ops); lib/Analysis/FactorSharding.cpp turns a
// rule plus known shardings into factor shardings and back.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_SHARDINGRULE_H
#define SHARDC_DIALECT_SHARDINGRULE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace shardc {

/// What sharding a factor costs.
enum class FactorKind : uint8_t {
  /// Appears in results as in operands: sharding it is free, every device
  /// computes its block.
  Parallel,
  /// Summed away (matmul's k, reduce_sum's dims): sharding it leaves the
  /// result a pending partial sum over the factor's axes.
  Reduction,
  /// Maxed away (reduce_max's dims): sharding it leaves each device the max
  /// of its block, which the partitioner combines at once with an
  /// all_reduce of kind max over the factor's axes (a pending max is not a
  /// state a value can carry, unlike a pending sum).
  MaxReduction,
  /// Cannot be sharded at all (a reshape that cannot be followed):
  /// any sharding of its dims must be gathered first.
  NeedReplication,
};

/// "parallel", "reduction", "max_reduction" or "need_replication".
llvm::StringRef stringifyFactorKind(FactorKind kind);

/// What the padding of an operand's unevenly split dim must hold when an op
/// reads it (docs/partitioning.md#uneven-dims): a device's block of a dim
/// the mesh axes do not divide ends in padding whose contents are
/// unspecified.
enum class PaddingFill : uint8_t {
  /// Anything: the op never folds it into a real element (a parallel
  /// factor: padding stays where it is, in the result's padding).
  Any,
  /// Zero: summed away (reduce_sum, both sides of a contraction) or used as
  /// an index that must stay in range (a gather's ids).
  Zero,
  /// The lowest value of the element type (-inf for floats): maxed away.
  Lowest,
};
/// The fill a factor's kind implies: parallel and need-replication Any,
/// reduction Zero, max_reduction Lowest (the default of
/// ShardingRuleOpInterface::getPaddingFill).
PaddingFill getDefaultPaddingFill(FactorKind kind);
/// One factor of an op's iteration space.
struct Factor {
  int64_t size;
  FactorKind kind;
};

/// The factors (indices into ShardingRule::getFactors()) one tensor
/// dimension is made of, major to minor.
using DimFactors = llvm::SmallVector<int64_t, 1>;
/// One DimFactors per tensor dimension.
using TensorFactors = llvm::SmallVector<DimFactors, 4>;

/// An op's sharding rule: its factors and, for every operand then every
/// result (together, the op's *tensors*), the factors of each dimension.
class ShardingRule {
public:
  /// Adds a factor and returns its index.
  int64_t addFactor(int64_t size, FactorKind kind);
  /// Appends the next operand; all operands must be added before results.
  void addOperand(TensorFactors dims);
  void addResult(TensorFactors dims);

  llvm::ArrayRef<Factor> getFactors() const { return factors; }
  int64_t getNumFactors() const { return factors.size(); }
  const Factor &getFactor(int64_t f) const { return factors[f]; }

  unsigned getNumOperands() const { return numOperands; }
  unsigned getNumResults() const { return tensors.size() - numOperands; }
  /// Operands then results.
  unsigned getNumTensors() const { return tensors.size(); }
  llvm::ArrayRef<DimFactors> getTensor(unsigned t) const { return tensors[t]; }
  llvm::ArrayRef<DimFactors> getOperand(unsigned i) const { return tensors[i]; }
  llvm::ArrayRef<DimFactors> getResult(unsigned i) const {
    return tensors[numOperands + i];
  }
  /// Index among getTensor() of result `i`.
  unsigned getResultTensor(unsigned i) const { return numOperands + i; }
  bool isResultTensor(unsigned t) const { return t >= numOperands; }

  /// Element count of tensor `t` (the product of its factor sizes).
  int64_t getTensorNumElements(unsigned t) const;
  /// Size tensor `t`'s dim `d` has according to its factors.
  int64_t getDimSize(unsigned t, unsigned d) const;

  /// Checks the rule against the shapes of the op's tensors (operands then
  /// results): the tensor count, every rank, every factor index, and that
  /// each dim is the product of its factors. On failure `why` says what.
  bool matchesShapes(llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes,
                     std::string &why) const;
  /// Same, with the shapes of `op`'s operands and results.
  bool matchesOp(mlir::Operation *op, std::string &why) const;

  /// `([f1, f0], [f0, f2]) -> ([f1, f2]) {f0=64 reduction, f1=16, f2=128}`;
  /// a compound dim prints as `(f0 f1)`, a dim without factors as `()`.
  void print(llvm::raw_ostream &os) const;
  std::string str() const;

  /// Every tensor of `shape` shares one parallel factor per dim (elementwise
  /// ops, sharding_constraint, func.return).
  static ShardingRule getIdentity(llvm::ArrayRef<int64_t> shape,
                                  unsigned numOperands, unsigned numResults);

private:
  llvm::SmallVector<Factor, 4> factors;
  llvm::SmallVector<TensorFactors, 3> tensors;
  unsigned numOperands = 0;
};

/// The rule of an elementwise op (every operand and the result share one
/// parallel factor per dim): ShardingRule::getIdentity of its result shape.
ShardingRule getElementwiseShardingRule(mlir::Operation *op);

/// The layout the partitioner computes an op in, as its local computation
/// (ShardingRuleOpInterface::buildLocalComputation) sees it: the mesh and,
/// for every factor of the op's rule, the mesh axes sharding it (major to
/// minor; none: whole on every device). The local types give the block
/// sizes.
struct FactorLayout {
  mlir::FlatSymbolRefAttr mesh;
  llvm::SmallVector<llvm::SmallVector<llvm::StringRef, 2>, 4> factorAxes;
};

/// The default local computation: `op` cloned with `localOperands` and
/// `localResultTypes`, its attributes localized; appends its results.
mlir::LogicalResult buildClonedLocalComputation(
    mlir::Operation *op, mlir::OpBuilder &builder,
    mlir::ValueRange localOperands, mlir::TypeRange localResultTypes,
    llvm::SmallVectorImpl<mlir::Value> &results);

} // namespace shardc

#include "shardc/Dialect/ShardingRuleInterface.h.inc"

#endif // SHARDC_DIALECT_SHARDINGRULE_H

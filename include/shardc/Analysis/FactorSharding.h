//===- FactorSharding.h - shardings through an op's factors -----*- C++ -*-===//
//
// Given an op's sharding rule (ShardingRule.h) and what is known of the
// shardings of its operands and results, decides which mesh axes shard each
// factor, and projects that back: the sharding each operand must have for
// the op to run locally, and the (partial) sharding each result comes out
// with. Propagation uses it to carry shardings across an op; the partitioner
// uses it to decide how to compute an op. The merge and conflict rules are
// in docs/propagation.md ("Merging candidates").
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_ANALYSIS_FACTORSHARDING_H
#define SHARDC_ANALYSIS_FACTORSHARDING_H

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ShardingRule.h"

#include "llvm/ADT/SmallVector.h"

namespace shardc {

/// Mesh axes, major to minor.
using AxisList = llvm::SmallVector<llvm::StringRef, 2>;

/// What is known of one of the op's tensors (operand or result).
struct TensorShardingInput {
  /// Null when nothing is known: the tensor then proposes nothing.
  ShardingAttr sharding;
  /// A user annotation (func arg/result sharding, sharding_constraint, an op
  /// result attribute present before propagation) beats a propagated one.
  bool isUser = false;
  /// A parameter (a function argument marked `shardc.param`): weights stay
  /// where the user put them and activations move to them, so between
  /// otherwise equal candidates the parameter's keeps its axes.
  bool isStationary = false;
};

/// Why a candidate lost a conflict (in the order the rules are tried).
enum class ConflictReason : uint8_t {
  /// An axis was claimed by a parallel and a reduction factor (of a sum or
  /// a max): a sharded reduction factor costs a collective, a sharded
  /// parallel one does not.
  ParallelOverReduction,
  /// A user annotation beat a propagated sharding.
  UserPriority,
  /// Same priority: the candidate of the larger tensor is kept, since
  /// resharding the smaller one moves fewer bytes.
  LargerTensor,
  /// Two factors of an op whose every tensor holds every factor (an
  /// element-wise op) claimed an axis with the same priority and tensor
  /// size: the one split over more devices keeps it, since resharding
  /// towards the finer split mostly slices (free) where the other way
  /// gathers.
  MoreSplit,
  /// Same priority and size: a parameter's candidate beats a computed
  /// value's (Megatron's weights stay in place; the activation moves).
  StationaryTensor,
  /// Same priority and size: the earlier tensor (operands in order, then
  /// results) wins.
  TensorOrder,
  /// Two factors of the same tensor: the earlier factor wins.
  FactorOrder,
  /// The factor cannot be sharded (FactorKind::NeedReplication).
  NeedReplication,
};

/// "user annotation beats propagated sharding", ... (for remarks).
llvm::StringRef describeConflictReason(ConflictReason reason);

/// A conflict resolved while computing factor shardings.
struct FactorConflict {
  enum class Kind : uint8_t {
    /// Two tensors proposed incompatible axes (neither a prefix of the
    /// other) for `factor`: `loserTensor`'s `loserAxes` were dropped in
    /// favour of `winnerTensor`'s `winnerAxes`.
    IncompatibleCandidates,
    /// Two factors claimed mesh axis `axis`: `factor` keeps it, `loserFactor`
    /// drops it and every axis after it (`loserAxes`).
    AxisClaimedTwice,
    /// `loserTensor` shards `factor`, which cannot be sharded: `loserAxes`
    /// were dropped (the operand must be gathered along that dim).
    Unshardable,
  };
  Kind kind;
  ConflictReason reason;
  int64_t factor = -1;
  int64_t loserFactor = -1;
  int loserTensor = -1;
  int winnerTensor = -1;
  AxisList loserAxes;
  AxisList winnerAxes;
  llvm::StringRef axis;
};

/// The factor shardings of one op, and their projections onto its tensors.
///
/// ```
///   ShardingRule rule = cast<ShardingRuleOpInterface>(op).getShardingRule();
///   FactorShardings fs = FactorShardings::compute(rule, mesh,
///       {{xSharding, /*isUser=*/true}, {wSharding}, {resultSharding}});
///   ShardingAttr lhsNeeded = fs.getOperandSharding(0);
///   ShardingAttr produced = fs.getResultSharding(0); // partial = sharded k
/// ```
class FactorShardings {
public:
  /// Decides the axes of every factor of `rule` on `mesh` from `tensors`
  /// (one entry per operand, then per result; missing trailing entries are
  /// unknown). Shardings naming another mesh, or of the wrong rank, propose
  /// nothing. Partial axes of an input are not factor shardings and are
  /// ignored.
  static FactorShardings compute(const ShardingRule &rule, MeshOp mesh,
                                 llvm::ArrayRef<TensorShardingInput> tensors);

  /// The axes `sharding` (of the rule's tensor `t`) puts on each factor of
  /// the rule (empty for factors `t` lacks). A compound dim's axes go to its
  /// factors major first while each axis divides what is left of its
  /// factor; axes after the first that does not are not followed.
  static llvm::SmallVector<AxisList> factorAxesOf(const ShardingRule &rule,
                                                  unsigned t,
                                                  ShardingAttr sharding,
                                                  MeshOp mesh);

  const ShardingRule &getRule() const { return rule; }
  MeshOp getMesh() const { return mesh; }

  /// Axes sharding factor `f`, major to minor.
  llvm::ArrayRef<llvm::StringRef> getFactorAxes(int64_t f) const {
    return factorAxes[f];
  }
  /// The tensor whose candidate gave factor `f` its axes, or -1 if it has
  /// none.
  int getFactorSource(int64_t f) const { return factorSource[f]; }
  /// Conflicts resolved, in the order they were met.
  llvm::ArrayRef<FactorConflict> getConflicts() const { return conflicts; }

  /// The sharding of the rule's tensor `t` under these factor shardings:
  /// each dim is split by the axes of its factors, major first. A minor
  /// factor's axes only count once every factor before it in the dim is
  /// fully split (else that layout is no split of the dim; see
  /// isExactFor). For a result and `withPartial`, the axes of sharded
  /// reduction factors form the partial set: the local result is a pending
  /// sum over them.
  ShardingAttr getTensorSharding(unsigned t, bool withPartial = true) const;
  /// The sharding operand `i` must have for the op to compute locally.
  ShardingAttr getOperandSharding(unsigned i) const {
    return getTensorSharding(i, /*withPartial=*/false);
  }
  /// The sharding result `i` comes out with (partial when a reduction factor
  /// is sharded), or without the partial set.
  ShardingAttr getResultSharding(unsigned i, bool withPartial = true) const {
    return getTensorSharding(rule.getResultTensor(i), withPartial);
  }
  /// Axes of the sharded reduction factors, in factor order.
  AxisList getPartialAxes() const;
  /// Axes of the sharded max-reduction factors, in factor order: each
  /// device's result is the max of its block, and the op's result is the
  /// max over these axes (an all_reduce of kind max the partitioner emits
  /// right after the op). Not part of any getTensorSharding.
  AxisList getMaxReducedAxes() const;
  /// False if getTensorSharding(t) had to leave out axes of a factor (a
  /// minor factor of a compound dim sharded while a major one is not fully
  /// split): the op then needs a layout that tensor cannot express.
  bool isExactFor(unsigned t) const;

private:
  FactorShardings(const ShardingRule &rule, MeshOp mesh)
      : rule(rule), mesh(mesh) {}
  /// Dim `d` of tensor `t`; returns false if some axis had to be left out.
  bool projectDim(unsigned t, unsigned d, AxisList &axes) const;
  /// getTensorSharding without the memo.
  ShardingAttr projectTensor(unsigned t, bool withPartial) const;
  int64_t axisSize(llvm::StringRef axis) const;

  ShardingRule rule;
  MeshOp mesh;
  llvm::SmallVector<AxisList> factorAxes;
  llvm::SmallVector<int> factorSource;
  llvm::SmallVector<FactorConflict> conflicts;
  /// getTensorSharding's answers, at 2 * t + withPartial, filled on first
  /// use: they depend only on the members above, which never change after
  /// compute(), and a memoized FactorShardings (FactorShardingCache) is
  /// asked the same projections over and over.
  mutable llvm::SmallVector<ShardingAttr, 8> projections;
};

} // namespace shardc

#endif // SHARDC_ANALYSIS_FACTORSHARDING_H

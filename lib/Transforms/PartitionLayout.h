//===- PartitionLayout.h - the partitioner's candidate layouts --*- C++ -*-===//
//
// Private to lib/Transforms: what Partition.cpp weighs when it chooses the
// layout to compute an op in (a candidate and its price), and the
// explainer (PartitionExplain.cpp) that, with `explain=true`, records for
// each reshard the consumer that needed it and what its alternatives would
// have cost, priced by the same function.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_TRANSFORMS_PARTITIONLAYOUT_H
#define SHARDC_LIB_TRANSFORMS_PARTITIONLAYOUT_H

#include "shardc/Analysis/FactorSharding.h"
#include "shardc/Analysis/FactorShardingCache.h"
#include "shardc/Analysis/ReshardPlanner.h"
#include "shardc/Transforms/ReshardRecord.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <deque>
#include <optional>
#include <vector>

namespace shardc::detail {

/// How to compute one op: its factor shardings, the layouts its operands
/// are moved into and the layouts its results come out in. These are the
/// factor shardings' projections, except that a pending partial sum may
/// pass through an op linear in some operands (getPartialSumOperandSets):
/// those operands stay summands and so does the result.
struct LayoutChoice {
  const FactorShardings *factors = nullptr;
  llvm::SmallVector<ShardingAttr, 3> operands;
  llvm::SmallVector<ShardingAttr, 1> results;
};

/// The layouts chosen for ops, memoized.
///
/// The choice (FunctionPartitioner::chooseLayout) is a pure function of the
/// op's sharding rule, the operand sets a pending sum passes through (and
/// which operands have one use), the mesh, the types of its operands and
/// results, the shardings propagation assigned to them and the layouts its
/// operands are currently in; the key holds all of these (types and
/// attributes are uniqued, so their pointers stand for their content). The
/// answers are
/// owned by `factors`, which outlives the memo.
class LayoutChoices {
public:
  FactorShardingCache factors;

  /// The stored choice for `key`, or null if none is stored; `found` says
  /// which (a stored choice may be null: no layout works).
  const LayoutChoice *lookup(llvm::ArrayRef<int64_t> key, bool &found) const {
    auto it = index.find(key);
    found = it != index.end();
    return found ? it->second : nullptr;
  }
  /// Stores `choice` (or that there is none) for `key`; returns the copy.
  const LayoutChoice *insert(llvm::ArrayRef<int64_t> key,
                             std::optional<LayoutChoice> choice) {
    const std::vector<int64_t> &stored =
        keys.emplace_back(key.begin(), key.end());
    const LayoutChoice *copy =
        choice ? &answers.emplace_back(std::move(*choice)) : nullptr;
    index[stored] = copy;
    return copy;
  }

private:
  /// Deques, so that the keys the index points into and the answers it
  /// hands out never move.
  std::deque<std::vector<int64_t>> keys;
  std::deque<LayoutChoice> answers;
  llvm::DenseMap<llvm::ArrayRef<int64_t>, const LayoutChoice *> index;
};

/// `s` with `axes` added to its pending sums.
ShardingAttr withPartial(ShardingAttr s, llvm::ArrayRef<llvm::StringRef> axes);

/// A candidate's price on the default machine: the reshards of its operands
/// from where they are (free if already moved there for an earlier
/// consumer) and of its results into their assigned layouts, the all_reduce
/// max of a split max-reduction factor, and its FLOPs at the local factor
/// sizes.
struct LayoutPrice {
  struct Move {
    /// Rule tensor index: an operand, or numOperands + a result.
    unsigned tensor;
    ShardingAttr from, to;
    ReshardPlan plan;
  };
  bool feasible = true;
  /// The reshards and the all_reduce max.
  double commSeconds = 0;
  /// commSeconds and the compute.
  double seconds = 0;
  /// The bytes a device sends for the moves plus those it holds of the
  /// op's operands and results in this layout: what decides between
  /// candidates whose times tie (isCheaperLayout).
  int64_t bytes = 0;
  /// Filled only when asked for (the explainer): the moves that send bytes
  /// or take steps.
  llvm::SmallVector<Move, 4> moves;
};

/// Times within this fraction of each other are a tie: the latency terms
/// dominate small moves, and a plan a few per cent faster that moves and
/// holds several times the bytes (gathering a whole tensor to slice it,
/// where one all_to_all would do) is a poor trade on any real machine.
constexpr double kLayoutTimeTie = 0.05;

/// Whether candidate `a` beats `b`: clearly faster, or as fast within
/// kLayoutTimeTie and moving and holding fewer bytes, or equal in bytes and
/// faster. Never true of two equal prices, so the first of those wins.
bool isCheaperLayout(const LayoutPrice &a, const LayoutPrice &b);

/// The all_reduce max of a split max-reduction factor, as a one-step plan
/// (for the moves a price lists).
ReshardPlan maxReducePlan(llvm::ArrayRef<llvm::StringRef> axes,
                          int64_t groupSize, int64_t localBytes);

/// Views of an op's tensors (per rule tensor, the sharding a candidate
/// starts from), beyond those the partitioner always tries.
using ExtraViews = llvm::ArrayRef<llvm::SmallVector<TensorShardingInput>>;
/// Calls its argument on every candidate the partitioner weighs for the op
/// (and those of the extra views) with its price and moves, until it
/// returns true.
using CandidateEnumerator = llvm::function_ref<void(
    ExtraViews,
    llvm::function_ref<bool(const LayoutChoice &, const LayoutPrice &)>)>;
/// Prices one layout of the op, with its moves.
using LayoutPricer = llvm::function_ref<LayoutPrice(const LayoutChoice &)>;

/// The record of the reshard of operand `operand` of `op` (the value was in
/// `from`; `chosen` is the layout the partitioner computes `op` in): the
/// chosen layout and its alternatives for that operand (docs/cli.md,
/// "shardc explain").
ReshardRecord explainOperandReshard(
    mlir::Operation *op, const ShardingRule &rule, unsigned operand,
    ShardingAttr from, llvm::ArrayRef<TensorShardingInput> assigned,
    const LayoutChoice &chosen, MeshOp mesh, CandidateEnumerator candidates,
    LayoutPricer price, const MachineModel &machine);

/// The record of `op`'s own all_reduce max, against computing it with the
/// reduced dim whole.
ReshardRecord explainOwnReduction(mlir::Operation *op,
                                  const LayoutChoice &chosen,
                                  CandidateEnumerator candidates,
                                  LayoutPricer price,
                                  const MachineModel &machine);

/// The record of a reshard an output's annotation (`output` >= 0) or a
/// sharding_constraint `constraint` asks for. A constraint is the program's
/// own reshard (no alternative); an output's alternatives are the output
/// annotated as the value is, whole or split (its move priced alone).
ReshardRecord explainFixedReshard(mlir::Value value, ShardingAttr from,
                                  ShardingAttr to, int64_t output,
                                  mlir::Operation *constraint, MeshOp mesh,
                                  const MachineModel &machine);

} // namespace shardc::detail

#endif // SHARDC_LIB_TRANSFORMS_PARTITIONLAYOUT_H

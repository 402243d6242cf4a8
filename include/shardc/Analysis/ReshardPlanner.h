//===- ReshardPlanner.h - moving a value between two shardings --*- C++ -*-===//
//
// Plans the collectives that turn a value laid out by one sharding into the
// same value laid out by another, moving as few bytes as it can: pending
// sums are reduce-scattered straight into the dim that wants the axis (never
// all-reduced and then sliced), an axis moving between dims is an
// all_to_all (not a gather and a slice), blocks that only change owners are
// a collective_permute, and a split of replicated data is a free all_slice.
// A partial target over axes the value is not summed over keeps the value on
// one device of each group and zeros elsewhere (a collective_permute).
// The partitioner materializes the plan as ops; `explain` prints it; the
// cost model prices it.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_ANALYSIS_RESHARDPLANNER_H
#define SHARDC_ANALYSIS_RESHARDPLANNER_H

#include "shardc/Analysis/CostModel.h"
#include "shardc/Dialect/ShardcDialect.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

#include <string>

namespace shardc {

/// One collective of a reshard.
struct ReshardStep {
  /// The collective kinds are the dialect's, so a step and the op that
  /// materializes it agree by construction.
  using Kind = CollectiveKind;
  Kind kind;
  /// The mesh axes of the collective's groups, major to minor.
  llvm::SmallVector<llvm::StringRef, 2> axes;
  /// all_gather / reduce_scatter / all_slice: the dim; all_to_all: split_dim.
  int64_t dim = -1;
  /// all_to_all: concat_dim.
  int64_t concatDim = -1;
  /// collective_permute: (source, target) group indices.
  llvm::SmallVector<std::pair<int64_t, int64_t>> pairs;
  /// Local shapes before and after the step.
  llvm::SmallVector<int64_t, 4> localShapeBefore, localShapeAfter;
  /// The value's sharding after the step.
  ShardingAttr after;
  /// Bytes each device sends (the bandwidth-optimal volume; see
  /// docs/cost-model.md).
  int64_t bytesPerDevice = 0;
  /// Devices per group and the bytes of each one's input block, which
  /// price the step.
  int64_t groupSize = 1;
  int64_t localBytesBefore = 0;
};

struct ReshardPlan {
  llvm::SmallVector<ReshardStep, 2> steps;
  int64_t bytesPerDevice = 0;
  /// Estimated duration on `machine`, every group inside one node.
  double seconds(const MachineModel &machine) const {
    double t = 0;
    for (const ReshardStep &s : steps)
      if (s.bytesPerDevice)
        t += machine.collectiveSeconds(s.kind, s.groupSize, s.localBytesBefore);
    return t;
  }
  /// The same with each group placed on `mesh`'s devices (which of its
  /// members share a node, docs/machines.md).
  double seconds(const MachineModel &machine, MeshOp mesh) const {
    llvm::ArrayRef<int64_t> sizes = mesh.getAxisSizes();
    double t = 0;
    for (const ReshardStep &s : steps) {
      if (!s.bytesPerDevice)
        continue;
      llvm::SmallVector<int64_t, 2> axes;
      for (llvm::StringRef a : s.axes)
        axes.push_back(mesh.getAxisIndex(a));
      t += machine.collectiveSeconds(s.kind, machine.groupSpan(sizes, axes),
                                     double(s.localBytesBefore));
    }
    return t;
  }
};

/// The per-device shape of a tensor of `globalShape` under `sharding`:
/// each dim's paddedBlockSize over the product of its axes' sizes.
llvm::SmallVector<int64_t, 4>
getLocalShape(ShardingAttr sharding, MeshOp mesh,
              llvm::ArrayRef<int64_t> globalShape);

/// Plans `from` -> `to` for a tensor of `globalShape` whose elements take
/// `elementBytes`. Every pair of valid shardings of the shape has a plan:
/// even a pending sum the value lacks is made, by keeping the value on the
/// first device of each group and zeros on the others (a collective_permute
/// with the single pair [0, 0]). The failure path, with `why` set, is kept
/// for callers that report it.
mlir::FailureOr<ReshardPlan> planReshard(ShardingAttr from, ShardingAttr to,
                                         MeshOp mesh,
                                         llvm::ArrayRef<int64_t> globalShape,
                                         int64_t elementBytes,
                                         std::string *why = nullptr);

/// A collective op read back as a reshard step (kind, axes, dims, pairs),
/// for everything that executes or prices an SPMD program. Null for ops
/// that are not collectives.
std::optional<ReshardStep> describeCollective(mlir::Operation *op);

} // namespace shardc

#endif // SHARDC_ANALYSIS_RESHARDPLANNER_H

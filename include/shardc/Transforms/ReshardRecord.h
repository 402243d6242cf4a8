//===- ReshardRecord.h - which consumer asked for a collective --*- C++ -*-===//
//
// With `--shardc-partition=explain=true` every collective the partitioner
// emits carries the record of the reshard it belongs to (the attribute
// `shardc.reshard_for`): the consumer that needed the value in another
// layout, the layout the value had and the one the consumer wanted, and the
// consumer's chosen layout against its alternatives, each priced as the
// partitioner prices a candidate (docs/cost-model.md). `shardc explain`
// prints it; `shardc-cleanup` keeps it on the collectives it rewrites. This
// file is its one home: the struct, and its encoding as an attribute.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_TRANSFORMS_RESHARDRECORD_H
#define SHARDC_TRANSFORMS_RESHARDRECORD_H

#include "shardc/Dialect/ShardcDialect.h"

#include <optional>
#include <string>
#include <vector>

namespace shardc {

/// One value moved by a priced layout.
struct ReshardMove {
  /// The moved value's name ("h0_w2"; "" when it has none).
  std::string value;
  ShardingAttr from, to;
  /// The collectives the move takes, in order ("reduce_scatter, all_gather").
  std::string collectives;
  int64_t bytes = 0;
  double seconds = 0;
};

/// One way of computing the consumer, priced: the reshards of its operands
/// from where they are and of its results into the layouts propagation gave
/// them, its FLOPs at the local factor sizes and any all_reduce max.
struct PricedLayout {
  /// "chosen", "as it is", "whole", "split on dim 2", "reduced dim whole".
  std::string label;
  /// The layout the moved value is taken in (null for the own reduction).
  ShardingAttr operand;
  /// False when no layout of the consumer the partitioner weighs takes it.
  bool possible = true;
  int64_t bytes = 0;
  double seconds = 0;
  std::vector<ReshardMove> moves;
};

struct ReshardRecord {
  enum class Consumer {
    /// Operand `index` of `op` needed the value in `to`.
    Operand,
    /// Output `index` of the function is annotated `to`.
    Output,
    /// A sharding_constraint pins the value to `to`.
    Constraint,
    /// `op`'s own max over a split reduction dim (an all_reduce max).
    OwnReduction,
  };
  Consumer kind = Consumer::Operand;
  /// The consumer op's name ("shardc.add"), its value's name ("h0_res1")
  /// and its source position ("gpt_tiny.json:61:5"); empty for an output.
  std::string op, name, where;
  int64_t index = 0;
  /// The moved value's name.
  std::string value;
  ShardingAttr from, to;
  /// The chosen layout first, then the alternatives (Operand and
  /// OwnReduction only).
  std::vector<PricedLayout> layouts;
};

/// The attribute that stores `record`.
mlir::DictionaryAttr encodeReshardRecord(mlir::MLIRContext *ctx,
                                         const ReshardRecord &record);

/// `op`'s record, if it carries one that reads back.
std::optional<ReshardRecord> readReshardRecord(mlir::Operation *op);

} // namespace shardc

#endif // SHARDC_TRANSFORMS_RESHARDRECORD_H

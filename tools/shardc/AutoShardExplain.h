//===- AutoShardExplain.h - explain --auto-shard's verdicts -----*- C++ -*-===//
//
// `explain --auto-shard`'s comparison (docs/auto-sharding.md): the plan's
// totals and those of the hand-written layouts of the same model, all
// simulated.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_TOOLS_SHARDC_AUTOSHARDEXPLAIN_H
#define SHARDC_TOOLS_SHARDC_AUTOSHARDEXPLAIN_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <optional>

namespace shardc {

/// Prints, for the planned module `planned` and for `original` (the model
/// before planning) laid out as annotated (if it has annotations),
/// replicated, data parallel and FSDP, the simulator's est_time, comm bytes
/// and peak bytes per device; a peak over `budget` is marked. A layout that
/// cannot be partitioned or run says so.
void printAutoShardTotals(mlir::ModuleOp original, mlir::ModuleOp planned,
                          std::optional<int64_t> budget);

} // namespace shardc

#endif // SHARDC_TOOLS_SHARDC_AUTOSHARDEXPLAIN_H

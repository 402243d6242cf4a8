//===- CollectiveOpInterface.h - what a collective is -----------*- C++ -*-===//
//
// The six collective ops implement `CollectiveOpInterface` (mesh, axes,
// dims, kind, reduction, bytes moved). The byte and message formulas are
// free functions of the kind too, because the reshard planner prices
// collectives it has not built yet.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_COLLECTIVEOPINTERFACE_H
#define SHARDC_DIALECT_COLLECTIVEOPINTERFACE_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include "shardc/Dialect/ShardcAttrs.h"

#include <utility>

namespace shardc {
/// The collectives, in the order the reshard planner has always listed them.
enum class CollectiveKind : uint8_t {
  AllReduce,
  ReduceScatter,
  AllGather,
  AllToAll,
  AllSlice,
  CollectivePermute,
};

/// "all_gather", "reduce_scatter", ... (the op mnemonics).
llvm::StringRef stringifyCollectiveKind(CollectiveKind kind);

/// Bytes each device sends for one collective of `kind` over a group of
/// `groupSize` devices whose input block has `localBytes` bytes (ring
/// algorithms; see docs/cost-model.md).
int64_t collectiveBytesPerDevice(CollectiveKind kind, int64_t groupSize,
                                 int64_t localBytes);

/// Sequential messages of that collective's ring algorithm.
int64_t collectiveMessages(CollectiveKind kind, int64_t groupSize);

/// True if every (source, target) pair keeps its block in place.
bool isIdentityPermutation(llvm::ArrayRef<std::pair<int64_t, int64_t>> pairs);
} // namespace shardc

#include "shardc/Dialect/CollectiveOpInterface.h.inc"

#endif // SHARDC_DIALECT_COLLECTIVEOPINTERFACE_H

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
/// `groupSize` devices whose input block has `localBytes` bytes, with the
/// bandwidth-optimal algorithm (the volume a report counts; see
/// docs/cost-model.md).
int64_t collectiveBytesPerDevice(CollectiveKind kind, int64_t groupSize,
                                 int64_t localBytes);

/// One way to run a collective: its sequential messages (latency terms) and
/// the bytes each device sends.
struct CollectiveAlgorithm {
  int64_t messages = 0;
  int64_t bytesPerDevice = 0;
};

/// The algorithms an MPI library chooses among for one collective of `kind`
/// over `groupSize` devices with `localBytes`-byte input blocks: a
/// latency-optimal one for small blocks (recursive doubling, Bruck) and a
/// bandwidth-optimal one for large blocks (Rabenseifner's all-reduce, the
/// ring). The cost model takes the faster on its machine
/// (docs/cost-model.md).
llvm::SmallVector<CollectiveAlgorithm, 2>
collectiveAlgorithms(CollectiveKind kind, int64_t groupSize,
                     int64_t localBytes);

/// True if every (source, target) pair keeps its block in place.
bool isIdentityPermutation(llvm::ArrayRef<std::pair<int64_t, int64_t>> pairs);
} // namespace shardc

#include "shardc/Dialect/CollectiveOpInterface.h.inc"

#endif // SHARDC_DIALECT_COLLECTIVEOPINTERFACE_H

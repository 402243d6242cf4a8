//===- IndexingShapes.h - the shapes of gather and scatter_add --*- C++ -*-===//
//
// gather's result shape, which is also scatter_add's updates' shape: the
// ops' type inference (lib/Dialect/IndexingOps.cpp, where it is defined),
// their kernels and the difftest's drawing of them all ask here.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_INDEXINGSHAPES_H
#define SHARDC_DIALECT_INDEXINGSHAPES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace shardc {

/// `numpy.take`'s shape: `table` with dim `axis` (in range) replaced by the
/// dims of `ids`.
llvm::SmallVector<int64_t> takeShape(llvm::ArrayRef<int64_t> table,
                                     llvm::ArrayRef<int64_t> ids, int64_t axis);

} // namespace shardc

#endif // SHARDC_DIALECT_INDEXINGSHAPES_H

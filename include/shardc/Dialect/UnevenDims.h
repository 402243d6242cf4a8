//===- UnevenDims.h - dims the mesh axes do not divide ----------*- C++ -*-===//
//
// A dim of size n split over mesh axes of total size k is a block of
// ceil(n / k) elements on every device; block b holds elements
// [b * ceil(n / k), (b + 1) * ceil(n / k)), so the last devices hold padding
// (possibly a whole block of it). Padding holds no particular value: ops
// that only move or combine elements position by position carry it along,
// and the partitioner replaces it with the neutral element of a consumer
// that would fold it into real elements (a sum, a max, a contraction) —
// see docs/sharding.md#uneven-dims and docs/partitioning.md#uneven-dims.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_UNEVENDIMS_H
#define SHARDC_DIALECT_UNEVENDIMS_H

#include "shardc/Dialect/ShardingRule.h"

#include "mlir/IR/Builders.h"

namespace shardc {

/// Name of the result attribute of a partitioned (per-device) function
/// giving a result's global shape (an i64 array) where its local shape and
/// sharding do not: a dim split unevenly. Reassembly drops the padding.
/// (Kept here, not with the dialect's other names in ShardcDialect.td: only
/// uneven dims need it.)
inline constexpr llvm::StringLiteral getGlobalShapeAttrName() {
  return llvm::StringLiteral("shardc.global_shape");
}

/// ceil(size / split): the elements one device holds of a dim of `size`
/// split over `split` devices, padding included.
inline int64_t paddedBlockSize(int64_t size, int64_t split) {
  if (split <= 1)
    return size;
  return (size + split - 1) / split;
}

/// True if `split` devices leave padding in a dim of `size`.
inline bool isUnevenSplit(int64_t size, int64_t split) {
  return split > 1 && size % split != 0;
}

/// True if, for a dim of `size` split over `coarse` devices, every coarse
/// block holding real elements is exactly the concatenation of the `group`
/// finer blocks of the same dim split over `coarse * group` devices that
/// lie in it: then an all_gather over the group concatenates (and drops the
/// padding past the coarse block) and an all_slice cuts (padding the last
/// pieces) without any device needing another group's elements. Always
/// true when the sizes divide evenly; false for `size` 10, `coarse` 2,
/// `group` 4 (coarse blocks of 5, fine blocks of 2: elements 8 and 9 are in
/// the second coarse block but the fifth fine one).
inline bool nestsEvenly(int64_t size, int64_t coarse, int64_t group) {
  int64_t outer = paddedBlockSize(size, coarse);
  return coarse <= 1 || group <= 1 || size <= outer ||
         outer == group * paddedBlockSize(size, coarse * group);
}

/// Builds, at `b`'s insertion point in an SPMD function, `local` (a device's
/// block of a tensor) with the padding of dim `dim` replaced by `fill`:
/// that dim has global size `globalSize` and is split over `axes` of mesh
/// `mesh` (major first), so this device's block starts at
/// axis_index(axes) * local size. A select against an iota-based "is a real
/// element" mask.
mlir::Value buildPaddingFill(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value local, int64_t dim,
                             int64_t globalSize, mlir::FlatSymbolRefAttr mesh,
                             llvm::ArrayRef<llvm::StringRef> axes,
                             PaddingFill fill);

} // namespace shardc

#endif // SHARDC_DIALECT_UNEVENDIMS_H

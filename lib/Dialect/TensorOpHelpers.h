//===- TensorOpHelpers.h - what the op family files share -------*- C++ -*-===//
//
// Private to lib/Dialect: type-inference diagnostics, dim-list checks and
// the small index helpers that sharding and gradient rules are built from.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_DIALECT_TENSOROPHELPERS_H
#define SHARDC_LIB_DIALECT_TENSOROPHELPERS_H

#include "shardc/Dialect/ShardingRule.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"

#include <optional>

namespace shardc::detail {

/// Type inference reports at `loc` when it has one (verification), and
/// fails silently otherwise (a builder probing types).
inline mlir::LogicalResult failInference(std::optional<mlir::Location> loc,
                                         const llvm::Twine &message) {
  if (loc)
    return mlir::emitError(*loc, message);
  return mlir::failure();
}

inline mlir::RankedTensorType asTensor(mlir::Value v) {
  return v ? llvm::dyn_cast<mlir::RankedTensorType>(v.getType())
           : mlir::RankedTensorType();
}

/// Checks that `dims` are distinct and in [0, rank).
inline mlir::LogicalResult checkDimList(std::optional<mlir::Location> loc,
                                        llvm::ArrayRef<int64_t> dims,
                                        int64_t rank, llvm::StringRef what) {
  llvm::SmallBitVector seen(rank > 0 ? rank : 0);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank)
      return failInference(loc, what + " dimension " + llvm::Twine(d) +
                                    " is out of range for rank " +
                                    llvm::Twine(rank));
    if (seen.test(d))
      return failInference(loc, what + " dimension " + llvm::Twine(d) +
                                    " is listed twice");
    seen.set(d);
  }
  return mlir::success();
}

inline llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
  return llvm::cast<mlir::ShapedType>(v.getType()).getShape();
}

inline int64_t rankOf(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType()).getRank();
}

/// One fresh factor per dim of `shape`, all of `kind`.
inline TensorFactors freshFactors(ShardingRule &rule,
                                  llvm::ArrayRef<int64_t> shape,
                                  FactorKind kind = FactorKind::Parallel) {
  TensorFactors dims;
  for (int64_t size : shape)
    dims.push_back({rule.addFactor(size, kind)});
  return dims;
}

inline llvm::SmallVector<int64_t> iota(int64_t begin, int64_t end) {
  llvm::SmallVector<int64_t> out;
  for (int64_t i = begin; i < end; ++i)
    out.push_back(i);
  return out;
}

/// Dims of a rank-`rank` tensor listed in neither `a` nor `b`, ascending.
inline llvm::SmallVector<int64_t> otherDims(int64_t rank,
                                            llvm::ArrayRef<int64_t> a,
                                            llvm::ArrayRef<int64_t> b = {}) {
  llvm::SmallVector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(a, d) && !llvm::is_contained(b, d))
      out.push_back(d);
  return out;
}

/// Every gradient rule starts with one null cotangent per operand.
inline void clearCotangents(mlir::Operation *op,
                            llvm::SmallVectorImpl<mlir::Value> &out) {
  out.assign(op->getNumOperands(), mlir::Value());
}

inline bool want(llvm::ArrayRef<bool> wanted, unsigned i) {
  return i < wanted.size() && wanted[i];
}

//===----------------------------------------------------------------------===//
// Local computations (defined in IndexingOps.cpp)
//===----------------------------------------------------------------------===//

/// The location of the helper ops a local computation builds: the op's
/// source position without its value name (which belongs to the result).
mlir::Location helperLoc(mlir::Location loc);

/// This device's index along `axes` of `mesh` (axis_index) times
/// `blockSize`, as a 0-d tensor of `element` type: where its block of a dim
/// cut into blocks of `blockSize` over `axes` starts.
mlir::Value buildBlockOffset(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::FlatSymbolRefAttr mesh,
                             llvm::ArrayRef<llvm::StringRef> axes,
                             int64_t blockSize, mlir::Type element);

} // namespace shardc::detail

#endif // SHARDC_LIB_DIALECT_TENSOROPHELPERS_H

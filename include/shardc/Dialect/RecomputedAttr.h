//===- RecomputedAttr.h - the mark on recomputed forward ops ----*- C++ -*-===//
//
// `--shardc-recompute` copies forward ops into the backward pass of a
// training step (docs/recompute.md) and marks each copy with this unit
// attribute; `shardc estimate` counts the marked ops' FLOPs as recompute
// FLOPs, and the dialect's verifier accepts it on any op.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_RECOMPUTEDATTR_H
#define SHARDC_DIALECT_RECOMPUTEDATTR_H

#include "llvm/ADT/StringRef.h"

namespace shardc {

inline constexpr llvm::StringLiteral kRecomputedAttrName = "shardc.recomputed";

} // namespace shardc

#endif // SHARDC_DIALECT_RECOMPUTEDATTR_H

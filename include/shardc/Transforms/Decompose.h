//===- Decompose.h - one composite into its primitives ----------*- C++ -*-===//
//
// What --shardc-decompose does to each composite op, for the passes that
// expand a copy of a program (propagation through a program that still
// holds composites, lib/Transforms/PropagateComposites.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_TRANSFORMS_DECOMPOSE_H
#define SHARDC_TRANSFORMS_DECOMPOSE_H

#include "shardc/Dialect/DecomposableOpInterface.h"

namespace shardc {

/// Replaces `composite` by the primitive ops of its expansion, moving a
/// `shardc.sharding` on it to the value replacing it, and erases it.
/// Returns that value; fails (with an error at the op) when the expansion
/// does not have the op's result type.
mlir::FailureOr<mlir::Value>
decomposeComposite(DecomposableOpInterface composite);

} // namespace shardc

#endif // SHARDC_TRANSFORMS_DECOMPOSE_H

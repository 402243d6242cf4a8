//===- ForwardPass.h - what a training step's loss depends on ---*- C++ -*-===//
//
// A training step returns its loss first. Its forward pass is every op the
// loss depends on: the estimate splits the step into phases by it, and the
// recompute pass copies only such ops into the backward pass.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_ANALYSIS_FORWARDPASS_H
#define SHARDC_ANALYSIS_FORWARDPASS_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseSet.h"

namespace shardc {

/// The ops the first `numResults` operands of `terminator` (a training
/// step's return: the loss; a pipeline stage's: the activations it sends
/// and its loss) depend on, transitively. Empty when it has no operands.
llvm::DenseSet<mlir::Operation *>
collectForwardPass(mlir::Operation *terminator, unsigned numResults = 1);

} // namespace shardc

#endif // SHARDC_ANALYSIS_FORWARDPASS_H

//===- Recompute.h - activation recomputation of a step ---------*- C++ -*-===//
//
// The rewrite `--shardc-recompute` runs on a training step
// (docs/recompute.md), for the callers that hold a differentiated function
// of another shape: a pipeline stage's, whose primal results are the
// activations it sends on (and, on the last stage, the loss) and whose
// layer inputs may be arguments (received from the previous stage).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_TRANSFORMS_RECOMPUTE_H
#define SHARDC_TRANSFORMS_RECOMPUTE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace shardc {

struct RecomputeRequest {
  /// none, selective or full.
  std::string mode = "none";
  /// Full recompute's layer inputs: a regex over value names.
  std::string layerInputs = "^x0$|_res2$";
  /// The forward pass is what the first `forwardResults` results depend
  /// on (a training step's loss: 1; 0: nothing is rewritten, the options
  /// are still checked).
  unsigned forwardResults = 1;
  /// Whether a layer starts at the function's entry and one ends at its
  /// return, besides at the values the pattern names: a pipeline stage
  /// after the first keeps what it receives, and one before the last ends
  /// with what it sends, so a layer a stage boundary cuts is recomputed on
  /// each side from what that side keeps.
  bool entryIsLayerInput = false, exitIsLayerInput = false;
  /// Whether full recompute fails when no layer input is found (a whole
  /// step's check; a stage may hold none).
  bool requireLayerInput = true;
};

/// Copies the forward ops `request` recomputes into the backward pass of
/// `func` (a single-block differentiated function), each copy marked
/// `shardc.recomputed`. Fails after a diagnostic on an unknown mode, a bad
/// pattern, or (with `requireLayerInput`) full recompute without a layer
/// input.
mlir::LogicalResult recomputeActivations(mlir::func::FuncOp func,
                                         const RecomputeRequest &request);

} // namespace shardc

#endif // SHARDC_TRANSFORMS_RECOMPUTE_H

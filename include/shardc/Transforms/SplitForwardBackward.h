//===- SplitForwardBackward.h - a VJP as forward + backward -----*- C++ -*-===//
//
// The autodiff pass turns f(args) -> outputs into one function
//   vjp(args..., cotangents...) -> (outputs..., gradients...).
// An engine with the forward/backward API of docs/engine.md runs the two
// halves at different times: forward(x) now, backward(dy) later, keeping
// what the backward half needs (the activations tape) in device memory in
// between. This
// splits a (partitioned or global) VJP function into
//   forward(args...) -> (outputs..., residuals...)
//   backward(args..., residuals..., cotangents...) -> (gradients...)
// The forward half holds exactly the ops the outputs need; every other op
// (those reading a cotangent, and those only the gradients need, like a
// second all_gather of a weight) runs in the backward half, so residuals
// are only values the forward pass computed anyway.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_TRANSFORMS_SPLITFORWARDBACKWARD_H
#define SHARDC_TRANSFORMS_SPLITFORWARDBACKWARD_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace shardc {

struct ForwardBackwardSplit {
  mlir::func::FuncOp forward;
  mlir::func::FuncOp backward;
  unsigned numResiduals = 0;
};

/// Splits `vjp`, whose first `numPrimalArgs` arguments are the primal ones
/// (the rest cotangents) and whose first `numOutputs` results are the
/// primal outputs (the rest gradients). The two new functions are inserted
/// after `vjp` in its module as @<forwardName> and @<backwardName>,
/// keeping argument and result attributes and the function's attributes.
/// Fails with a diagnostic when `vjp` is not a single-block function or
/// the counts do not fit it.
mlir::FailureOr<ForwardBackwardSplit>
splitForwardBackward(mlir::func::FuncOp vjp, unsigned numPrimalArgs,
                     unsigned numOutputs, llvm::StringRef forwardName,
                     llvm::StringRef backwardName);

} // namespace shardc

#endif // SHARDC_TRANSFORMS_SPLITFORWARDBACKWARD_H

//===- Autodiff.h - reverse-mode differentiation as a library ---*- C++ -*-===//
//
// The core of --shardc-autodiff, for passes that build on gradients without
// wanting the VJP's signature (the training-step pass seeds the loss with 1 and
// consumes the gradients itself).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_TRANSFORMS_AUTODIFF_H
#define SHARDC_TRANSFORMS_AUTODIFF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace shardc {

/// Checks that `func` can be differentiated: a global (unpartitioned)
/// single-block function whose ops all have gradient rules and one result,
/// over float tensors. Emits the reason on failure.
mlir::LogicalResult checkDifferentiable(mlir::func::FuncOp func);

/// The arguments to differentiate, sorted: those named in `names` (their
/// shardc.name; an unknown name is an error listing the inputs); without
/// names, the `shardc.param` ones, else all.
mlir::FailureOr<llvm::SmallVector<unsigned>>
selectDifferentiatedArguments(mlir::func::FuncOp func,
                              llvm::ArrayRef<std::string> names);

/// Builds, before `func`'s return, the gradient of each argument in `wrt`
/// given the cotangent `resultCotangents[i]` of each result i (a null value
/// contributes nothing). Each gradient is a value named "<argument>.grad";
/// an argument with no path to a seeded result gets a zero constant. Ops the
/// gradients turn out not to need are erased. `func` must have passed
/// checkDifferentiable.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
buildGradients(mlir::func::FuncOp func, llvm::ArrayRef<unsigned> wrt,
               llvm::ArrayRef<mlir::Value> resultCotangents);

/// `loc` carrying the value name `name` (replacing any name it had).
mlir::Location withValueName(mlir::Location loc, const llvm::Twine &name);

} // namespace shardc

#endif // SHARDC_TRANSFORMS_AUTODIFF_H

//===- MixedPrecision.h - a forward pass in bf16 or f16 ---------*- C++ -*-===//
//
// The mixed-precision training step (--shardc-training-step precision=...,
// docs/precision.md): the forward pass computes in bf16 or f16 on working
// copies of the f32 parameters, so that its activations, and through
// autodiff its gradients, are half floats, while the parameters the
// optimizer updates (the master weights) and its state stay f32.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_TRANSFORMS_MIXEDPRECISION_H
#define SHARDC_LIB_TRANSFORMS_MIXEDPRECISION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>

namespace shardc::detail {

/// The working precision of a training step.
enum class Precision { F32, BF16Mixed, F16Mixed };

/// "f32", "bf16-mixed" or "f16-mixed".
std::optional<Precision> parsePrecision(llvm::StringRef name);

/// The element type a precision computes the forward pass in (null for f32).
mlir::Type getWorkingType(mlir::MLIRContext *ctx, Precision precision);

/// Rewrites the body of `func` to compute in `half`: every f32 argument the
/// body reads is converted once, where the body starts (a parameter's
/// working copy `<name>.<half>`), every f32 value the body computes becomes
/// a `half` value (constants are rounded to it; an f32 iota is converted),
/// and every returned value goes back to f32, so the function's signature
/// is unchanged. Fails with a diagnostic on a value it cannot retype.
mlir::LogicalResult castBodyToHalf(mlir::func::FuncOp func, mlir::Type half);

} // namespace shardc::detail

#endif // SHARDC_LIB_TRANSFORMS_MIXEDPRECISION_H

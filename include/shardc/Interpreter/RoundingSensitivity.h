//===- RoundingSensitivity.h - how rounding is amplified --------*- C++ -*-===//
//
// A sharded program adds its partial sums in another order than the
// unsharded one, so the two agree up to rounding (shardc/Support/
// NumericCheck.h). One kind of program makes that rounding large: a step
// of Adam divides each gradient by its own magnitude, so a gradient that
// is zero in exact arithmetic and rounding noise in float32 moves its
// parameter by the learning rate, in a direction the noise picks. For such
// a program the check asks the unsharded program itself how far each
// element of its outputs moves when its inputs change by one ulp, and when
// its sums (reductions, contractions: what a plan reorders) round one ulp
// otherwise, and excuses a sharded element within kSensitivityMargin times
// its own movement; the other elements keep the tolerance. No other
// program gets this allowance: forward, backward and SGD programs are
// checked as they are.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_INTERPRETER_ROUNDINGSENSITIVITY_H
#define SHARDC_INTERPRETER_ROUNDINGSENSITIVITY_H

#include "shardc/Support/Tensor.h"

#include <optional>

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace shardc {

/// Whether `func` is a step of an optimizer that keeps state (Adam): the
/// only programs whose checks allow for amplified rounding.
bool hasAdaptiveOptimizerState(mlir::func::FuncOp func);

/// The coarsest half float type `func` computes in: bf16 if any of its
/// values is bf16, else f16 if one is f16, else none.
std::optional<DType> workingHalfType(mlir::func::FuncOp func);

/// The type an output of dtype `dtype` is judged by: its own if it is a half
/// type, `working` if it is another float type, else none.
std::optional<DType> judgedHalfType(DType dtype,
                                    std::optional<DType> working);

/// The tolerance to check each of `got` (the sharded outputs) against
/// `expected` (the unsharded program `reference` on `inputs`) with:
/// `tolerance`, raised — for a step of Adam only
/// (hasAdaptiveOptimizerState) — to the largest relative error among the
/// output's elements that are within kSensitivityMargin times how far the
/// probes move that element (2 * kSensitivityProbes runs: inputs moved by
/// one ulp, and sums rounded one ulp otherwise, InterpreterOptions::
/// sumRoundingProbe), so an element the program makes sensitive to rounding
/// is excused and the rest are not.
/// Runs the reference again only when some output is beyond `tolerance`;
/// non-finite elements raise nothing, and a `tolerance` of 0 or below is
/// kept as given. A bf16 or f16 output, and every float output of a
/// program that computes in bf16 or f16 (a mixed-precision step's f32 loss
/// and updates), is allowed halfTolerance of that type
/// (shardc/Support/NumericCheck.h), whatever the optimizer.
mlir::FailureOr<llvm::SmallVector<double>>
roundingTolerances(mlir::func::FuncOp reference, llvm::ArrayRef<Tensor> inputs,
                   llvm::ArrayRef<Tensor> expected, llvm::ArrayRef<Tensor> got,
                   double familyScale, double tolerance);

} // namespace shardc

#endif // SHARDC_INTERPRETER_ROUNDINGSENSITIVITY_H

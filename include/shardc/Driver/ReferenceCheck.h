//===- ReferenceCheck.h - outputs against the unsharded program -*- C++ -*-===//
//
// `simulate`, `exec` and `train` check what the sharded program computes
// against the reference interpreter on the unsharded one, and `run`,
// `simulate` and `exec` warn about outputs with NaN or infinite values,
// saying where those first appeared. A NaN the model computes is the
// model's, not the sharding's: compareToReference matches non-finite
// values by class, and the warning points at the op (or input) to look at.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DRIVER_REFERENCECHECK_H
#define SHARDC_DRIVER_REFERENCECHECK_H

#include "shardc/Interpreter/RoundingSensitivity.h"
#include "shardc/Support/NumericCheck.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace shardc {

/// compareToReference(got, want, familyScale) (shardc/Support/NumericCheck.h:
/// `familyScale` is the largest magnitude of the tensors compared together
/// with `want`); beyond `tolerance` it also prints
/// "shardc: error: <what> differs from <reference>: ...", naming the first
/// element that is NaN or infinite in one and not alike in the other when
/// that is the difference, and clears `ok`. Returns the relative and the
/// absolute error.
std::pair<double, double>
checkAgainstReference(const Tensor &got, const Tensor &want, double familyScale,
                      double tolerance, llvm::StringRef what,
                      llvm::StringRef reference, bool &ok);

/// Prints "rounding amplified by <cause>: w within 0.02, ... (10x how far
/// <reference> moves when <perturbed> change by one ulp)" for the tensors
/// (`names`) whose error `errors[i]` passed only by its raised
/// `tolerances[i]` (above `tolerance`); nothing when none did. Outputs of
/// `expected` judged by a half type's rounding (workingHalfType) are listed
/// apart: "bf16 rounding: y within 0.0625 (16 units of 2^-8)".
void printRoundingAmplified(llvm::raw_ostream &os, llvm::StringRef cause,
                            llvm::StringRef reference,
                            llvm::StringRef perturbed,
                            llvm::ArrayRef<std::string> names,
                            llvm::ArrayRef<double> errors,
                            llvm::ArrayRef<double> tolerances, double tolerance,
                            llvm::ArrayRef<Tensor> expected = {},
                            std::optional<DType> working = std::nullopt);

/// For every output of `func` (named `names`, computed from `inputs` as
/// `outputs`) with NaN or infinite elements, a warning at the source of the
/// first of them: the input holding them or the op computing them, found
/// by interpreting `func` again (InterpreterOptions::nonFiniteSources).
/// Returns how many outputs were warned about.
unsigned warnAboutNonFiniteOutputs(mlir::func::FuncOp func,
                                   llvm::ArrayRef<Tensor> inputs,
                                   llvm::ArrayRef<Tensor> outputs,
                                   llvm::ArrayRef<std::string> names);

} // namespace shardc

#endif // SHARDC_DRIVER_REFERENCECHECK_H

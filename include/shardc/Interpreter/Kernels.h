//===- Kernels.h - reference kernels for shardc tensor ops ------*- C++ -*-===//
//
// Evaluates one non-collective shardc operation on runtime tensors. This is
// the single source of truth for what an op computes: the interpreter, the
// multi-device simulator and the tests all go through it.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_INTERPRETER_KERNELS_H
#define SHARDC_INTERPRETER_KERNELS_H

#include "shardc/Dialect/KernelOpInterface.h"
#include "shardc/Support/Tensor.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

namespace shardc {

/// Attaches the interpreter's kernels (KernelOpInterface models, one kernel
/// file per op family) to the shardc ops of every context `registry` is
/// given to. Every context that executes programs needs it; without it,
/// running an op is a diagnostic saying so.
void registerKernelModels(mlir::DialectRegistry &registry);
/// Same, for an existing context.
void registerKernelModels(mlir::MLIRContext &context);

/// `op`'s kernel, or null; with `reportMissing`, a null answer is reported
/// at the op (kernels not registered in this context, or no kernel).
KernelOpInterface getKernel(mlir::Operation *op, bool reportMissing = false);

/// Computes the single result of `op` (any shardc tensor op except the
/// collectives) from `operands`, given in op operand order. The result has
/// the op's result type and is refused (error, nothing allocated) if it
/// would exceed `maxTensorBytes`. Operands must match the op's operand
/// types; anything unexpected (unsupported op or dtype, inconsistent shapes
/// in unverified IR) is reported at `op->getLoc()` and fails.
///
/// The op is run through its verifier first, because the kernels rely on its
/// invariants (operand counts, attributes present). Pass `verifyOp = false`
/// when the enclosing function was verified already (as interpretFunction
/// does), e.g. to avoid re-verifying the same op once per simulated device.
///
/// `inPlace`, when given, is the operand the op updates in place
/// (KernelOpInterface::updatesOperandInPlace), owned by the caller, which
/// no longer needs its values: if it has the result's type, the kernel
/// computes into it and it is moved into the result; otherwise a result is
/// allocated as usual.
mlir::FailureOr<Tensor>
evaluateTensorOp(mlir::Operation *op, llvm::ArrayRef<const Tensor *> operands,
                 uint64_t maxTensorBytes = defaultMaxTensorBytes(),
                 bool verifyOp = true, Tensor *inPlace = nullptr);

} // namespace shardc

#endif // SHARDC_INTERPRETER_KERNELS_H

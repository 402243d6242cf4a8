//===- FunctionPlan.h - what a run decides from the IR alone ----*- C++ -*-===//
//
// Private to lib/Interpreter. Before computing anything the interpreter
// checks a function's body (supported ops, executable types, the byte
// budget, the verifier), plans its elementwise fusion and finds each
// value's last use. None of that depends on the argument tensors, and a
// training step runs the same function every step, on every device: done
// per call, it cost more than a third of a small model's step (gpt_tiny's
// on the threads backend took 5.5 to 6.0 ms of CPU per core with it, 3.4
// to 3.7 ms without). So a plan is made once per function and kept, keyed
// by a fingerprint of the IR it was made from: a function changed in
// place, or another one allocated where a freed one was, is planned again.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_INTERPRETER_FUNCTIONPLAN_H
#define SHARDC_LIB_INTERPRETER_FUNCTIONPLAN_H

#include "ElementwiseFusion.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <memory>
#include <optional>

namespace shardc::detail {

/// The IR-only decisions of one run of a function body.
struct FunctionPlan {
  /// The fused groups; none when non-finite values are tracked (every
  /// value must then be materialized).
  std::optional<FusionPlan> fusion;
  /// The position (in the body, or of the last group it is fused into) at
  /// which each value is last read; an unused value dies where it is born.
  llvm::DenseMap<mlir::Value, size_t> lastUse;
  /// Reductions that can start as soon as their operand is computed, by
  /// the position at which it is (lastUse's positions): a gradient is final
  /// where the backward pass computes it, while the program reduces it only
  /// next to the optimizer's update, after the whole backward pass. Each is
  /// an all_reduce or reduce_scatter (canStartCollective) that is its
  /// operand's only reader and whose result is read later; within a
  /// position, in program order, so every device starts them in the same
  /// order.
  llvm::DenseMap<size_t, llvm::SmallVector<mlir::Operation *, 1>>
      reductionStarts;
};

/// Checks `value`'s type is an executable tensor of at most `maxBytes`;
/// the diagnostic is at `anchor`.
mlir::LogicalResult checkExecutableValue(mlir::Value value,
                                         mlir::Operation *anchor,
                                         uint64_t maxBytes);

/// The plan of `func`'s body (a single block) for runs with
/// `maxTensorBytes` and with fusion or not: made, after checking every op
/// and value of the body and verifying `func`, on the first call, and
/// returned again while the function's IR and the symbols around it are
/// unchanged (safe to call from several threads at once). Fails with the
/// diagnostics of the checks; a failure is not kept.
mlir::FailureOr<std::shared_ptr<const FunctionPlan>>
getFunctionPlan(mlir::func::FuncOp func, uint64_t maxTensorBytes, bool fuse);

} // namespace shardc::detail

#endif // SHARDC_LIB_INTERPRETER_FUNCTIONPLAN_H

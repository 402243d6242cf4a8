//===- PipelineUpdate.h - a pipeline stage's optimizer step -----*- C++ -*-===//
//
// A stage ends its step by updating its parameters with the gradients it
// summed over the micro-batches. The update rule has one home, the
// training-step pass (--shardc-training-step, SGD or Adam): the stage borrows
// it by running the pass on the linear loss sum_k <p_k, g_k>, whose gradient
// with respect to p_k is exactly g_k, and inlining the resulting step. Private
// to the pipeline builder (PipelineProgram.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_TRANSFORMS_PIPELINEUPDATE_H
#define SHARDC_LIB_TRANSFORMS_PIPELINEUPDATE_H

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace shardc {

/// The optimizer's step over parameters of `paramTypes` (named
/// `paramNames`), in a scratch module of its own:
///   @update(params..., gradients..., learning_rate, state...)
///       -> (linear loss, gradients..., next params..., next state...)
/// the state and its attributes (`shardc.optimizer_state`, its initial
/// value) as --shardc-training-step adds them, the update reading the gradient
/// arguments directly (the linear loss and its VJP are left dead). Fails
/// with a diagnostic at `loc`.
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
buildOptimizerStep(mlir::Location loc, MeshOp mesh,
                   llvm::ArrayRef<mlir::Type> paramTypes,
                   llvm::ArrayRef<std::string> paramNames,
                   const ShardcTrainingStepOptions &options);

} // namespace shardc

#endif // SHARDC_LIB_TRANSFORMS_PIPELINEUPDATE_H

//===- PipelineMicrobatch.h - the loss at micro-batch size ------*- C++ -*-===//
//
// Step 1 of the pipeline builder (PipelineProgram.cpp): the loss function
// cloned with every non-parameter input's dim 0 divided by the number of
// micro-batches, result types inferred again op by op. Private to the
// pipeline builder.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_TRANSFORMS_PIPELINEMICROBATCH_H
#define SHARDC_LIB_TRANSFORMS_PIPELINEMICROBATCH_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace shardc {

/// Clones `func` after it as @<name>.microbatch at the micro-batch size
/// (`numMicrobatches` micro-batches; `isParam`: the argument indices kept
/// whole). `opStages[i]` is the stage of the i-th op of `func`; `stageOf`
/// receives the stage of every op of the clone.
///
/// A value that does not follow the batch inputs (built from constants and
/// parameters) but has the batch's rows where it meets a micro-batch value
/// (a causal mask or a position embedding broadcast to the batch's shape,
/// the zeros of a decomposed cross_entropy) is rebuilt with the
/// micro-batch's rows: a splat constant, an iota or broadcast_in_dim that
/// does not vary along dim 0, and elementwise ops of those. Anything else
/// is an error at the op.
mlir::FailureOr<mlir::func::FuncOp>
cloneAtMicrobatchSize(mlir::func::FuncOp func, int64_t numMicrobatches,
                      const llvm::DenseSet<unsigned> &isParam,
                      llvm::ArrayRef<int64_t> opStages,
                      llvm::DenseMap<mlir::Operation *, int64_t> &stageOf);

/// The values of `fn` computed from no argument (constants and what is
/// computed from them alone): each stage recomputes those it uses rather
/// than receiving them.
llvm::DenseSet<mlir::Value> findArgumentFreeValues(mlir::func::FuncOp fn);

} // namespace shardc

#endif // SHARDC_LIB_TRANSFORMS_PIPELINEMICROBATCH_H

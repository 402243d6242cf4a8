//===- PipelineSharding.h - sharding a pipeline stage's halves --*- C++ -*-===//
//
// 3D parallelism (docs/pipeline.md#composition-with-the-other-mesh-axes):
// each stage's differentiated function is an ordinary global function, so
// the partitioner shards it over the mesh axes other than the pipeline axis
// before the schedule is unrolled. The values that cross stages are pinned
// to the sharding propagation gave them in the whole (micro-batch) loss
// function, so the sender's block and the receiver's block of a value are
// the same block: a send goes to the device with the same coordinates on
// every other axis. Private to the pipeline builder (PipelineProgram.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_TRANSFORMS_PIPELINESHARDING_H
#define SHARDC_LIB_TRANSFORMS_PIPELINESHARDING_H

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Transforms/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace shardc {

/// Whether `func` states any sharding (argument, result, op result or
/// sharding_constraint): then its stages are sharded. Fails with a
/// diagnostic at the place when a sharding names the pipeline axis `axis`,
/// whose coordinate is the stage and so cannot also split a tensor.
mlir::FailureOr<bool> statesShardings(mlir::func::FuncOp func,
                                      llvm::StringRef axis);

/// Runs the propagate or partition pipeline (Pipelines.h) on `fn` alone, in
/// a scratch module holding a copy of `mesh`, and puts `fn` back where it
/// was.
mlir::LogicalResult shardFunctionAlone(mlir::func::FuncOp fn, MeshOp mesh,
                                       ShardingStage stage);

/// The sharding `v` has after propagation: its argument's or its op's
/// `shardc.sharding`; null when it has none.
ShardingAttr getStatedSharding(mlir::Value v);

/// Pins `fn`'s arguments and results to `argShardings` and
/// `resultShardings` (null: leave free), checks that each splits its
/// tensor evenly (a micro-batch's rows must split over the data axes), and
/// partitions `fn` into the SPMD function every device of the stage runs.
/// Fails with a diagnostic naming the value.
mlir::LogicalResult
partitionStageFunction(mlir::func::FuncOp fn, MeshOp mesh,
                       llvm::ArrayRef<ShardingAttr> argShardings,
                       llvm::ArrayRef<ShardingAttr> resultShardings);

} // namespace shardc

#endif // SHARDC_LIB_TRANSFORMS_PIPELINESHARDING_H

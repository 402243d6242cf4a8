//===- Pipelines.h - the named pass pipelines -------------------*- C++ -*-===//
//
// The pass sequences the CLI, the engine, the trainer and the benchmarks
// run, each defined once here and registered by name, so `shardc-opt`
// runs exactly what `shardc` runs:
//
//   shardc-propagate-pipeline  decompose, propagate
//   shardc-partition-pipeline  decompose, propagate, partition, cleanup
//   shardc-autodiff-pipeline   decompose, [propagate], autodiff,
//                              decompose, [then]
//   shardc-train-pipeline      decompose, [propagate], optimizer,
//                              decompose, [then]
//
// Each starts with --shardc-decompose, so what follows never sees a
// composite op; the two that differentiate keep the composites that have a
// gradient rule of their own until autodiff has applied it (their first
// decompose has keep-differentiable=true, and propagation goes through
// their expansions).
//
// docs/cli.md lists their options.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_TRANSFORMS_PIPELINES_H
#define SHARDC_TRANSFORMS_PIPELINES_H

#include "shardc/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"

namespace shardc {

/// What sharding follows differentiation (or the optimizer step): nothing,
/// the propagate pipeline or the partition pipeline.
enum class ShardingStage { None, Propagate, Partition };

/// --shardc-decompose, then --shardc-propagate (with `explain`, a remark
/// per value saying where its sharding came from). With `autoShard`,
/// --shardc-auto-shard with those options runs before propagation and
/// chooses every sharding the program does not give.
void buildPropagatePipeline(mlir::OpPassManager &pm, bool explain = false,
                            const ShardcAutoShardOptions *autoShard = nullptr);

/// --shardc-propagate, --shardc-partition, then --shardc-cleanup on every
/// function: a global program in, a per-device SPMD program out.
void buildPartitionPipeline(mlir::OpPassManager &pm, bool explain = false,
                            const ShardcAutoShardOptions *autoShard = nullptr);

/// Nothing, the propagate pipeline or the partition pipeline.
void buildShardingStage(mlir::OpPassManager &pm, ShardingStage stage,
                        bool explain = false,
                        const ShardcAutoShardOptions *autoShard = nullptr);

/// The backward pass (--shardc-autodiff with `autodiff`), then `then`.
/// With `propagateFirst`, propagation runs before differentiating, so each
/// cotangent is laid out like its forward value (what a program about to be
/// sharded wants). With `autoShard`, nothing is propagated first: the whole
/// program, forward and backward, is planned at once.
void buildAutodiffPipeline(mlir::OpPassManager &pm,
                           const ShardcAutodiffOptions &autodiff,
                           bool propagateFirst, ShardingStage then,
                           bool explain = false,
                           const ShardcAutoShardOptions *autoShard = nullptr);

/// The training step (--shardc-training-step with `optimizer`), then `then`;
/// `propagateFirst` and `autoShard` as for buildAutodiffPipeline.
void buildTrainPipeline(mlir::OpPassManager &pm,
                        const ShardcTrainingStepOptions &optimizer,
                        bool propagateFirst, ShardingStage then,
                        bool explain = false,
                        const ShardcAutoShardOptions *autoShard = nullptr);

/// Registers the four pipelines by name (shardc-opt, shardc).
void registerShardcPipelines();

} // namespace shardc

#endif // SHARDC_TRANSFORMS_PIPELINES_H

//===- Pipelines.cpp - the named pass pipelines ---------------------------===//

#include "shardc/Transforms/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace shardc;

// Every pipeline starts by expanding the composites: nothing after
// --shardc-decompose has sharding rules or kernels for them. A pipeline
// that differentiates keeps those with a gradient rule of their own until
// autodiff has applied it (differentiateExpanded), then expands them.
void shardc::buildPropagatePipeline(OpPassManager &pm, bool explain,
                                    const ShardcAutoShardOptions *autoShard) {
  pm.addPass(createShardcDecompose());
  if (autoShard)
    pm.addPass(createShardcAutoShard(*autoShard));
  ShardcPropagateOptions propagate;
  propagate.explain = explain;
  pm.addPass(createShardcPropagate(propagate));
}

void shardc::buildPartitionPipeline(OpPassManager &pm, bool explain,
                                    const ShardcAutoShardOptions *autoShard) {
  buildPropagatePipeline(pm, explain, autoShard);
  pm.addPass(createShardcPartition());
  pm.addNestedPass<func::FuncOp>(createShardcCleanup());
}

void shardc::buildShardingStage(OpPassManager &pm, ShardingStage stage,
                                bool explain,
                                const ShardcAutoShardOptions *autoShard) {
  switch (stage) {
  case ShardingStage::None:
    return;
  case ShardingStage::Propagate:
    return buildPropagatePipeline(pm, explain, autoShard);
  case ShardingStage::Partition:
    return buildPartitionPipeline(pm, explain, autoShard);
  }
}

/// The one place that orders differentiation and expansion: `differentiate`
/// (autodiff or the optimizer step) sees the composites that have a
/// gradient rule of their own, so the backward pass reads what a fused
/// kernel's reads (docs/autodiff.md); everything after it sees only
/// primitives. Propagating first goes through the composites' expansions
/// (--shardc-propagate does, PropagateComposites.cpp).
static void differentiateExpanded(OpPassManager &pm, bool propagateFirst,
                                  const ShardcAutoShardOptions *autoShard,
                                  std::unique_ptr<Pass> differentiate) {
  ShardcDecomposeOptions keepDifferentiable;
  keepDifferentiable.keepDifferentiable = true;
  pm.addPass(createShardcDecompose(keepDifferentiable));
  if (propagateFirst && !autoShard)
    pm.addPass(createShardcPropagate());
  pm.addPass(std::move(differentiate));
  pm.addPass(createShardcDecompose());
}

void shardc::buildAutodiffPipeline(OpPassManager &pm,
                                   const ShardcAutodiffOptions &autodiff,
                                   bool propagateFirst, ShardingStage then,
                                   bool explain,
                                   const ShardcAutoShardOptions *autoShard) {
  differentiateExpanded(pm, propagateFirst, autoShard,
                        createShardcAutodiff(autodiff));
  buildShardingStage(pm, then, explain, autoShard);
}

void shardc::buildTrainPipeline(OpPassManager &pm,
                                const ShardcTrainingStepOptions &optimizer,
                                bool propagateFirst, ShardingStage then,
                                bool explain,
                                const ShardcAutoShardOptions *autoShard) {
  differentiateExpanded(pm, propagateFirst, autoShard,
                        createShardcTrainingStep(optimizer));
  buildShardingStage(pm, then, explain, autoShard);
  // Last: the partitioner's cleanup would merge each recomputed copy back
  // into its original.
  if (optimizer.recompute != "none") {
    ShardcRecomputeOptions recompute;
    recompute.mode = optimizer.recompute;
    recompute.layerInputs = optimizer.layerInputs;
    pm.addNestedPass<func::FuncOp>(createShardcRecompute(recompute));
  }
}

namespace {
// The registered pipelines' textual options. Each mirrors the options of
// the passes it runs, under the same names.

struct ShardingPipelineOptions
    : PassPipelineOptions<ShardingPipelineOptions> {
  Option<bool> explain{*this, "explain",
                       llvm::cl::desc("A remark per value saying where its "
                                      "sharding came from"),
                       llvm::cl::init(false)};
};

/// The `propagate-first` and `then` options of the autodiff and train
/// pipelines.
#define SHARDC_THEN_OPTION                                                     \
  Option<bool> propagateFirst{                                                 \
      *this, "propagate-first",                                                \
      llvm::cl::desc("Propagate before differentiating (default true)"),       \
      llvm::cl::init(true)};                                                   \
  Option<ShardingStage> then{                                                  \
      *this, "then",                                                           \
      llvm::cl::desc("What follows: none, propagate or partition (the "        \
                     "default)"),                                              \
      llvm::cl::init(ShardingStage::Partition),                                \
      llvm::cl::values(                                                        \
          clEnumValN(ShardingStage::None, "none", "nothing"),                  \
          clEnumValN(ShardingStage::Propagate, "propagate",                    \
                     "the propagate pipeline"),                                \
          clEnumValN(ShardingStage::Partition, "partition",                    \
                     "the partition pipeline"))}

struct AutodiffPipelineOptions
    : PassPipelineOptions<AutodiffPipelineOptions> {
  ListOption<std::string> wrt{
      *this, "wrt",
      llvm::cl::desc("As --shardc-autodiff's wrt: the argument names to "
                     "differentiate with respect to")};
  SHARDC_THEN_OPTION;
  Option<bool> explain{*this, "explain",
                       llvm::cl::desc("Propagation remarks in the last "
                                      "propagation"),
                       llvm::cl::init(false)};
};

struct TrainPipelineOptions : PassPipelineOptions<TrainPipelineOptions> {
  Option<std::string> optimizer{
      *this, "optimizer",
      llvm::cl::desc("As --shardc-training-step's: sgd or adam"),
      llvm::cl::init("adam")};
  Option<double> beta1{*this, "beta1", llvm::cl::desc("Adam's beta1"),
                       llvm::cl::init(0.9)};
  Option<double> beta2{*this, "beta2", llvm::cl::desc("Adam's beta2"),
                       llvm::cl::init(0.999)};
  Option<double> epsilon{*this, "epsilon", llvm::cl::desc("Adam's epsilon"),
                         llvm::cl::init(1e-8)};
  ListOption<std::string> params{
      *this, "params",
      llvm::cl::desc("As --shardc-training-step's: the parameters to train")};
  ListOption<std::string> zeroAxes{
      *this, "zero-axes",
      llvm::cl::desc("As --shardc-training-step's: mesh axes to shard the "
                     "optimizer state over")};
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc(
          "As --shardc-training-step's: f32, bf16-mixed or f16-mixed"),
      llvm::cl::init("f32")};
  Option<std::string> recompute{
      *this, "recompute",
      llvm::cl::desc("As --shardc-training-step's: none, selective or full"),
      llvm::cl::init("none")};
  Option<std::string> layerInputs{
      *this, "layer-inputs",
      llvm::cl::desc(
          "As --shardc-training-step's: full recompute's layer inputs"),
      llvm::cl::init("^x0$|_res2$")};
  SHARDC_THEN_OPTION;
  Option<bool> explain{*this, "explain",
                       llvm::cl::desc("Propagation remarks in the last "
                                      "propagation"),
                       llvm::cl::init(false)};
};
#undef SHARDC_THEN_OPTION
} // namespace

void shardc::registerShardcPipelines() {
  PassPipelineRegistration<ShardingPipelineOptions>(
      "shardc-propagate-pipeline",
      "Sharding propagation, as `shardc compile --propagate` runs it",
      [](OpPassManager &pm, const ShardingPipelineOptions &options) {
        buildPropagatePipeline(pm, options.explain);
      });
  PassPipelineRegistration<ShardingPipelineOptions>(
      "shardc-partition-pipeline",
      "Propagation, partitioning and cleanup, as `shardc compile "
      "--partition`, `shardc simulate` and the engine run them",
      [](OpPassManager &pm, const ShardingPipelineOptions &options) {
        buildPartitionPipeline(pm, options.explain);
      });
  PassPipelineRegistration<AutodiffPipelineOptions>(
      "shardc-autodiff-pipeline",
      "The backward pass of the global program, then sharding, as `shardc "
      "compile --autodiff` and the engine's training program run them",
      [](OpPassManager &pm, const AutodiffPipelineOptions &options) {
        ShardcAutodiffOptions autodiff;
        autodiff.wrt.assign(options.wrt.begin(), options.wrt.end());
        buildAutodiffPipeline(pm, autodiff, options.propagateFirst, options.then,
                              options.explain);
      });
  PassPipelineRegistration<TrainPipelineOptions>(
      "shardc-train-pipeline",
      "A whole training step (backward pass and optimizer update), then "
      "sharding, as `shardc compile --train-step` and the engine's trainStep "
      "run them",
      [](OpPassManager &pm, const TrainPipelineOptions &options) {
        ShardcTrainingStepOptions optimizer;
        optimizer.optimizer = options.optimizer;
        optimizer.beta1 = options.beta1;
        optimizer.beta2 = options.beta2;
        optimizer.epsilon = options.epsilon;
        optimizer.params.assign(options.params.begin(), options.params.end());
        optimizer.zeroAxes.assign(options.zeroAxes.begin(),
                                  options.zeroAxes.end());
        optimizer.precision = options.precision;
        optimizer.recompute = options.recompute;
        optimizer.layerInputs = options.layerInputs;
        buildTrainPipeline(pm, optimizer, options.propagateFirst, options.then,
                           options.explain);
      });
}

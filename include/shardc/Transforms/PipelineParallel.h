//===- PipelineParallel.h - a training step split into stages ---*- C++ -*-===//
//
// Pipeline parallelism (docs/pipeline.md). The global loss function's ops
// are assigned to p contiguous stages, p the size of the pipeline axis of
// the mesh; the batch is split into m micro-batches; and each stage gets one
// program, `@pipeline_stage<k>`, that runs its part of the training step:
// the forward and backward of every micro-batch in the order of the
// schedule (shardc/Analysis/PipelineSchedule.h), receiving activations from
// earlier stages and gradients from later ones with `shardc.recv` and
// handing them on with `shardc.send`, summing its parameters' gradients
// over the micro-batches, and ending with one optimizer step (SGD or Adam,
// the training-step pass's) of its parameters.
// Every device whose coordinate on the pipeline axis is k runs stage k's
// program; the other axes replicate it.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_TRANSFORMS_PIPELINEPARALLEL_H
#define SHARDC_TRANSFORMS_PIPELINEPARALLEL_H

#include "shardc/Analysis/PipelineSchedule.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace shardc {

struct PipelineOptions {
  /// The mesh axis whose coordinate is the stage.
  std::string axis = "pipe";
  /// Micro-batches per step; 0 means one per stage.
  int64_t microbatches = 0;
  PipelineScheduleKind schedule = PipelineScheduleKind::OneFOneB;
  /// The update after the micro-batches (--shardc-training-step's options:
  /// `optimizer` sgd or adam, its betas and epsilon).
  ShardcTrainingStepOptions optimizer = sgdOptions();
  static ShardcTrainingStepOptions sgdOptions() {
    ShardcTrainingStepOptions o;
    o.optimizer = "sgd";
    return o;
  }
};

/// Where each op of the loss function runs.
struct StageAssignment {
  /// The stage of every op of the function body but the return, in order.
  std::vector<int64_t> opStages;
  /// True when the ops said (`shardc.stage`), false when balanced by cost.
  bool explicitStages = false;
  /// Forward FLOPs (of the whole batch) per stage.
  std::vector<double> stageFlops;
};

/// Assigns the ops of `func` to `numStages` stages: the `shardc.stage` of
/// each op where any op has one (an op without one takes the latest stage
/// of its operands), else contiguous runs of ops balanced by their FLOPs
/// (CostOpInterface). Fails with a diagnostic at the op when an op uses a
/// value of a later stage, a stage is out of range or empty, the loss is not
/// computed by the last stage, or a parameter is used by two stages.
mlir::FailureOr<StageAssignment> assignStages(mlir::func::FuncOp func,
                                              int64_t numStages);

/// One stage's program and how to call it.
struct PipelineStage {
  mlir::func::FuncOp program;
  /// For each argument of `program`: the index of the loss function's
  /// argument it is, -1 for the learning rate, or -2 for optimizer state
  /// (Adam's moments, which start at the argument's
  /// `shardc.optimizer_state`).
  std::vector<int64_t> argumentSources;
  /// For each result: the index of the parameter whose value after the
  /// step it is, -1 for the loss (the last stage's first result), or -2
  /// for the optimizer state after the step.
  std::vector<int64_t> resultParams;
  /// FLOPs of one micro-batch's forward and backward on this stage.
  double forwardFlops = 0, backwardFlops = 0;
  /// Bytes one micro-batch's forward leaves for its backward (the
  /// activations a schedule keeps per micro-batch in flight).
  int64_t activationBytesPerMicrobatch = 0;
};

struct PipelineProgram {
  MeshOp mesh;
  std::string axis;
  int64_t numStages = 0, numMicrobatches = 0;
  PipelineScheduleKind schedule;
  StageAssignment assignment;
  std::vector<PipelineStage> stages;
  std::vector<std::vector<PipelineAction>> actions;
};

/// Builds the stage programs of the loss function `func` (decomposed: no
/// composite ops) into its module, after it, leaving `func` as it was.
/// `func`'s first result is the scalar loss, which must be a sum over the
/// batch's samples (a mean written as a sum times 1/N, N of the whole
/// batch): the step's loss and gradients are then the sums of the
/// micro-batches'. Its `shardc.param` arguments are trained; every other
/// argument is split into micro-batches along dim 0. Fails with a diagnostic
/// naming the place.
mlir::FailureOr<PipelineProgram>
buildPipelineProgram(mlir::func::FuncOp func, const PipelineOptions &options);

} // namespace shardc

#endif // SHARDC_TRANSFORMS_PIPELINEPARALLEL_H

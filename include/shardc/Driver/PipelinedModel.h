//===- PipelinedModel.h - a model trained pipelined -------------*- C++ -*-===//
//
// The whole pipelined training of a loaded model in one call, for front
// ends that hold a model and tensors rather than command-line flags
// (Python's `shardc.compile(..., pipeline_axis=)`, C++ embedders): its
// composites expanded, its inputs bound (given, or drawn from a seed as
// `shardc --seed` draws them), then shardc/Driver/PipelineTraining.h's
// plan, train and check, as `shardc pipeline` runs them.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DRIVER_PIPELINEDMODEL_H
#define SHARDC_DRIVER_PIPELINEDMODEL_H

#include "shardc/Driver/PipelineTraining.h"

#include <map>
#include <optional>
#include <string>

namespace shardc {

struct PipelinedModelTraining {
  PipelineTrainingPlan plan;
  PipelineTraining training;
  /// The loss and parameters after the last step, whole (on every rank
  /// under mpi).
  PipelineTrainedValues values;
};

/// Trains `module` (a global model whose entry function's first result is
/// a scalar loss summed over the batch) pipelined with `options`; the
/// arguments come from `given` by name, else from `seed`. Under mpi the
/// caller has started MPI and every rank calls this. Fails after a
/// diagnostic in `module`'s context.
mlir::FailureOr<PipelinedModelTraining> trainModelPipelined(
    mlir::ModuleOp module, const std::map<std::string, Tensor> &given,
    std::optional<uint64_t> seed, const PipelineTrainingOptions &options);

} // namespace shardc

#endif // SHARDC_DRIVER_PIPELINEDMODEL_H

//===- PipelineStep.h - one pipelined training step -------------*- C++ -*-===//
//
// `shardc pipeline` runs a pipelined training step (docs/pipeline.md);
// `shardc simulate` and `shardc explain` do the same when given
// --pipeline-axis, --microbatches or --schedule, which are registered for
// all three commands in PipelineCommand.cpp. The step lives here once;
// each command fills in the settings from its own flags.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_TOOLS_PIPELINESTEP_H
#define SHARDC_TOOLS_PIPELINESTEP_H

#include "shardc/Analysis/CostModel.h"

#include <optional>
#include <string>

namespace shardc {

struct PipelineStepSettings {
  std::string backend = "sim";
  /// The update after the micro-batches: "sgd" or "adam".
  std::string optimizer = "sgd";
  double learningRate = 0.01;
  /// Training steps, each from the parameters and state the last returned.
  int64_t steps = 1;
  /// "mlir": print the stage programs instead of running them.
  std::string emit;
  /// Print the stage assignment and per-stage time; with `explainOnly`,
  /// only that (`shardc explain`: no inputs needed, nothing run).
  bool explain = false, explainOnly = false;
  std::string reportJson, tracePath;
  /// Columns of the ASCII timeline (0: none).
  int64_t timeline = 0;
  MachineModel machine;
  /// Largest accepted max_rel_err; the pipeline's default when unset.
  std::optional<double> tolerance;
};

/// True when --pipeline-axis, --microbatches or --schedule was given to
/// `simulate` or `explain`.
bool pipelineRequested();

/// Runs one pipelined training step of the model named on the command line
/// with the shared pipeline flags and `settings`; returns the exit code.
int runPipelineStep(const PipelineStepSettings &settings);

} // namespace shardc

#endif // SHARDC_TOOLS_PIPELINESTEP_H

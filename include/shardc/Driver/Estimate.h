//===- Estimate.h - the `shardc estimate` workflow --------------*- C++ -*-===//
//
// Model in, report out: the training step is built and partitioned as
// `compile --train-step --partition` builds it, then priced on a machine
// without running it (shardc/Analysis/StepEstimate.h, docs/estimate.md).
// The CLI parses options into an EstimateRequest and calls this.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DRIVER_ESTIMATE_H
#define SHARDC_DRIVER_ESTIMATE_H

#include "shardc/Analysis/StepEstimate.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace shardc {

struct EstimateRequest {
  /// "sgd" or "adam": the training step priced.
  std::string optimizer = "adam";
  /// --zero-axes: the optimizer state split over these axes too.
  std::vector<std::string> zeroAxes;
  MachineModel machine;
  /// The file `machine` was read from, if any: the partitioner chooses the
  /// step's layouts on it too (empty: on the alpha-beta preset).
  std::string machinePath;
  EstimateOptions options;
};

/// estimateTraining's first half: rewrites `module` into its partitioned
/// training step and returns its entry function (the mesh is the module's
/// only one); `globalParameters` gets the model's parameter count. The
/// whole-plan search prices one partitioned step under several options.
mlir::FailureOr<mlir::func::FuncOp>
partitionTraining(mlir::ModuleOp module, const EstimateRequest &request,
                  double &globalParameters);

/// Runs the recompute pass (docs/recompute.md) on `module`, a partitioned
/// step from partitionTraining built without recompute, as
/// `options.recompute` and `options.layerInputs` say: the whole-plan search
/// partitions a step once and recomputes a copy of it per policy.
mlir::LogicalResult recomputeStep(mlir::ModuleOp module,
                                  const EstimateOptions &options);

/// Rewrites `module` (a global model whose first output is a scalar loss)
/// into its partitioned training step and estimates it. Fails after a
/// diagnostic.
mlir::FailureOr<StepEstimate> estimateTraining(mlir::ModuleOp module,
                                               const EstimateRequest &request);

/// The report (docs/estimate.md lists its keys).
llvm::json::Object estimateToJson(const StepEstimate &estimate,
                                  const EstimateRequest &request);

/// The report as lines of text.
void printEstimate(const StepEstimate &estimate, const EstimateRequest &request,
                   llvm::raw_ostream &os);

} // namespace shardc

#endif // SHARDC_DRIVER_ESTIMATE_H

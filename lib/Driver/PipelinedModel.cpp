//===- PipelinedModel.cpp - a model trained pipelined, for embedders ------===//

#include "shardc/Driver/PipelinedModel.h"

#include "shardc/Dialect/FunctionInterface.h"
#include "shardc/Driver/SeededInputs.h"
#include "shardc/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace shardc;

FailureOr<PipelinedModelTraining> shardc::trainModelPipelined(
    ModuleOp module, const std::map<std::string, Tensor> &given,
    std::optional<uint64_t> seed, const PipelineTrainingOptions &options) {
  func::FuncOp func = getEntryFunction(module);
  if (!func)
    return failure();
  if (func->hasAttr(ShardcDialect::getSpmdAttrName()))
    return func.emitError() << "pipelined training takes the global "
                               "program; this one is already partitioned";
  // The interpreter has no kernels for composite ops.
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  pm.addPass(createShardcDecompose());
  if (failed(pm.run(module)))
    return failure();
  FailureOr<SmallVector<Tensor>> inputs = bindInputs(func, given, seed);
  if (failed(inputs))
    return failure();
  PipelinedModelTraining result;
  FailureOr<PipelineTrainingPlan> plan = planPipelineTraining(func, options);
  if (failed(plan))
    return failure();
  result.plan = std::move(*plan);
  FailureOr<PipelineTraining> training =
      trainPipelined(result.plan, *inputs, options);
  if (failed(training))
    return failure();
  result.training = std::move(*training);
  FailureOr<PipelineTrainedValues> values =
      assembleTrainedValues(result.plan, result.training.run);
  if (failed(values))
    return failure();
  result.values = std::move(*values);
  return result;
}

//===- Estimate.cpp - the `shardc estimate` workflow ----------------------===//

#include "shardc/Driver/Estimate.h"

#include "shardc/Dialect/FunctionInterface.h"
#include "shardc/Dialect/MeshLookup.h"
#include "shardc/Transforms/Pipelines.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Regex.h"

using namespace mlir;
using namespace shardc;

static double countParameters(func::FuncOp func) {
  double n = 0;
  for (BlockArgument arg : func.getArguments())
    if (func.getArgAttr(arg.getArgNumber(), ShardcDialect::getParamAttrName()))
      if (auto t = dyn_cast<RankedTensorType>(arg.getType())) {
        double e = 1;
        for (int64_t d : t.getShape())
          e *= double(d);
        n += e;
      }
  return n;
}

FailureOr<func::FuncOp>
shardc::partitionTraining(ModuleOp module, const EstimateRequest &request,
                          double &globalParameters) {
  func::FuncOp entry = getEntryFunction(module);
  if (!entry)
    return emitError(module.getLoc(), "the model has no entry function");
  globalParameters = countParameters(entry);

  // Checked before the passes run, so a typo costs no compilation.
  size_t numMeshes = 0;
  MeshOp mesh = getOnlyMesh(module, &numMeshes);
  if (!mesh)
    return emitError(module.getLoc())
           << "estimate needs exactly one mesh, the model has " << numMeshes;
  const EstimateOptions &options = request.options;
  if (!options.pipelineAxis.empty() &&
      mesh.getAxisIndex(options.pipelineAxis) < 0)
    return emitError(mesh.getLoc())
           << "the pipeline axis \"" << options.pipelineAxis
           << "\" is not an axis of the mesh";

  llvm::Regex layerInputs(options.layerInputs);
  std::string why;
  if (!layerInputs.isValid(why))
    return emitError(module.getLoc())
           << "the layer-input pattern \"" << options.layerInputs
           << "\" is no regex: " << why;

  ShardcTrainingStepOptions optimizer;
  optimizer.optimizer = request.optimizer;
  // The step is recomputed as `train --recompute` runs it: the estimate
  // reads the pass's copies (docs/recompute.md).
  optimizer.recompute = recomputeName(options.recompute).str();
  optimizer.layerInputs = options.layerInputs;
  optimizer.zeroAxes.assign(request.zeroAxes.begin(), request.zeroAxes.end());
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  buildTrainPipeline(pm, optimizer, /*propagateFirst=*/true,
                     ShardingStage::Partition);
  // The layouts are chosen on the machine they are priced on.
  if (!request.machinePath.empty()) {
    std::string machineOption;
    llvm::raw_string_ostream(machineOption)
        << "machine=\"" << request.machinePath << "\"";
    for (Pass &pass : pm.getPasses())
      if (pass.getArgument() == "shardc-partition" &&
          failed(pass.initializeOptions(machineOption, [&](const Twine &m) {
            return emitError(module.getLoc()) << m;
          })))
        return failure();
  }
  // The step is verified once, after its last pass, rather than after
  // each: the verifier was a fifth of the whole-plan search, which runs
  // this pipeline on every candidate program. Invalid IR a pass makes is
  // still an error.
  pm.enableVerifier(false);
  if (failed(pm.run(module)) || failed(verify(module)))
    return failure();
  return getEntryFunction(module);
}

LogicalResult shardc::recomputeStep(ModuleOp module,
                                    const EstimateOptions &options) {
  if (options.recompute == Recompute::None)
    return success();
  ShardcRecomputeOptions recompute;
  recompute.mode = recomputeName(options.recompute).str();
  recompute.layerInputs = options.layerInputs;
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  pm.addNestedPass<func::FuncOp>(createShardcRecompute(recompute));
  // Verified once, after the pass, as partitionTraining verifies: the pass
  // manager would verify the function and then the module, and the
  // whole-plan search recomputes a copy of every program it prices.
  pm.enableVerifier(false);
  return failure(failed(pm.run(module)) || failed(verify(module)));
}

FailureOr<StepEstimate>
shardc::estimateTraining(ModuleOp module, const EstimateRequest &request) {
  EstimateOptions options = request.options;
  FailureOr<func::FuncOp> step =
      partitionTraining(module, request, options.globalParameters);
  if (failed(step))
    return failure();
  return estimateStep(*step, getOnlyMesh(module), request.machine, options);
}

llvm::json::Object shardc::estimateToJson(const StepEstimate &e,
                                          const EstimateRequest &request) {
  const EstimateOptions &o = request.options;
  return llvm::json::Object{
      {"machine", request.machine.name},
      {"devices", e.numDevices},
      {"parameters", e.globalParameters},
      {"train_step", request.optimizer},
      {"precision", precisionName(o.precision)},
      {"recompute", recomputeName(o.recompute)},
      {"pipeline_stages", e.pipelineStages},
      {"microbatches", e.microbatches},
      {"peak_bytes_per_device", e.peakBytes()},
      {"memory", llvm::json::Object{{"parameters", e.parameters},
                                    {"gradients", e.gradients},
                                    {"optimizer_state", e.optimizerState},
                                    {"activations", e.activations},
                                    {"temporaries", e.temporaries}}},
      {"saved_activations_per_microbatch", e.savedActivationsPerMicrobatch},
      {"step_time_s", e.stepSeconds()},
      {"compute_s", e.computeSeconds},
      {"exposed_communication_s", e.exposedCommunicationSeconds},
      {"bubble_s", e.bubbleSeconds},
      {"bubble_fraction", e.bubbleFraction()},
      {"communication_s",
       llvm::json::Object{
           {"critical", e.criticalCommunicationSeconds},
           {"prefetched", e.prefetchCommunicationSeconds},
           {"gradient_reduction", e.gradientCommunicationSeconds},
           {"pipeline_sends", e.pipelineSendSeconds}}},
      {"flops_per_device", e.flopsPerDevice},
      {"model_flops_per_device", e.modelFlopsPerDevice},
      {"recompute_flops_per_device", e.recomputeFlopsPerDevice},
      {"tflops_per_device", e.tflopsPerDevice()},
      {"mfu", e.mfu()},
      {"kernels_per_device", e.kernelsPerDevice},
      {"collectives_per_device", e.collectivesPerDevice},
      {"fits", request.machine.memoryBytes <= 0 ||
                   e.peakBytes() <= double(request.machine.memoryBytes)}};
}

static std::string gigabytes(double bytes) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%.3f GB", bytes / 1e9);
  return s;
}

void shardc::printEstimate(const StepEstimate &e,
                           const EstimateRequest &request,
                           llvm::raw_ostream &os) {
  const EstimateOptions &o = request.options;
  os << "estimate: " << llvm::format("%.4g", e.globalParameters)
     << " parameters on " << e.numDevices << " devices ("
     << request.machine.name << "), " << request.optimizer << ", "
     << precisionName(o.precision) << ", recompute "
     << recomputeName(o.recompute);
  if (e.pipelineStages > 1) {
    os << ", " << e.pipelineStages << " stages x " << e.microbatches
       << " micro-batches";
    if (o.schedule == PipelineScheduleKind::Interleaved)
      os << ", interleaved x " << o.virtualStages;
  }
  os << "\n";
  os << "memory/device: parameters " << gigabytes(e.parameters)
     << ", gradients " << gigabytes(e.gradients) << ", optimizer state "
     << gigabytes(e.optimizerState) << ", activations "
     << gigabytes(e.activations) << ", temporaries " << gigabytes(e.temporaries)
     << " = peak " << gigabytes(e.peakBytes());
  if (request.machine.memoryBytes > 0)
    os << (e.peakBytes() <= double(request.machine.memoryBytes)
               ? " (fits in "
               : " (does NOT fit in ")
       << gigabytes(double(request.machine.memoryBytes)) << ")";
  os << "\n";
  os << llvm::format("step: %.4g s = compute %.4g s + exposed communication "
                     "%.4g s + bubble %.4g s (%.1f%%)\n",
                     e.stepSeconds(), e.computeSeconds,
                     e.exposedCommunicationSeconds, e.bubbleSeconds,
                     100 * e.bubbleFraction());
  os << llvm::format("flops/device: %.4g (recompute %.4g), %.1f TFLOP/s, "
                     "MFU %.1f%%\n",
                     e.flopsPerDevice, e.recomputeFlopsPerDevice,
                     e.tflopsPerDevice(), 100 * e.mfu());
}

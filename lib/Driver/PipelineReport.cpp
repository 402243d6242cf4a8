//===- PipelineReport.cpp - what a pipelined training reports -------------===//
//
// The explanation (stage of every op, time per stage), the summary lines
// and the JSON report of a pipelined training
// (shardc/Driver/PipelineTraining.h, docs/pipeline.md).
//
//===----------------------------------------------------------------------===//

#include "shardc/Driver/PipelineTraining.h"

#include "shardc/Analysis/ReshardPlanner.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Support/NumericCheck.h"

#include "llvm/Support/Format.h"

using namespace mlir;
using namespace shardc;

std::pair<double, double>
shardc::stageCollectiveSeconds(func::FuncOp stage, const MeshTopology &topology,
                               const MachineModel &machine) {
  double forward = 0, backward = 0;
  for (Operation &op : stage.getBody().front()) {
    auto collective = dyn_cast<CollectiveOpInterface>(op);
    auto action = op.getAttrOfType<StringAttr>(
        ShardcDialect::getPipelineActionAttrName());
    std::optional<ReshardStep> desc = describeCollective(&op);
    if (!collective || !action || !desc)
      continue;
    auto type = cast<RankedTensorType>(op.getOperand(0).getType());
    int64_t n = topology.groupSize(desc->axes);
    int64_t localBytes =
        type.getNumElements() *
        std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
    double seconds = collective.getBytesSentPerDevice(n, localBytes)
                         ? machine.collectiveSeconds(
                               collective.getCollectiveKind(), n, localBytes)
                         : 0;
    if (action.getValue() == "F0")
      forward += seconds;
    else if (action.getValue() == "B0")
      backward += seconds;
  }
  return {forward, backward};
}

void shardc::printPipelineExplanation(const PipelineTrainingPlan &plan,
                                      const MachineModel &machine,
                                      raw_ostream &os) {
  const PipelineProgram &program = plan.program;
  func::FuncOp func = plan.func;
  FailureOr<MeshTopology> topology = getMeshTopology(program.mesh);
  os << "stage assignment ("
     << (program.assignment.explicitStages ? "from \"stage\" annotations"
                                           : "balanced by forward FLOPs")
     << "):\n";
  for (int64_t s = 0; s < program.numStages; ++s) {
    os << "  stage " << s << ":";
    for (auto [i, op] :
         llvm::enumerate(func.getBody().front().without_terminator()))
      if (program.assignment.opStages[i] == s && op.getNumOperands() != 0)
        os << " " << getSourceName(op.getResult(0));
    os << "\n";
  }
  os << "per-stage time per micro-batch (" << program.numMicrobatches
     << " micro-batches):\n";
  for (auto [s, stage] : llvm::enumerate(program.stages)) {
    os << llvm::format("  stage %zu: forward %.3g s, backward %.3g s, "
                       "activations %lld B",
                       s, stage.forwardFlops / machine.flopsPerSecond,
                       stage.backwardFlops / machine.flopsPerSecond,
                       (long long)stage.activationBytesPerMicrobatch);
    if (succeeded(topology)) {
      auto [forward, backward] =
          stageCollectiveSeconds(stage.program, *topology, machine);
      if (forward > 0 || backward > 0)
        os << llvm::format("; its collectives forward %.3g s, backward %.3g s",
                           forward, backward);
    }
    os << "\n";
  }
}

namespace {

/// The simulator's peak activation bytes of each stage (its devices'
/// largest); zeros on the other backends.
std::vector<int64_t> peakActivationsPerStage(const PipelineTrainingPlan &plan,
                                             const PipelineTrainingRun &run,
                                             BackendKind backend) {
  std::vector<int64_t> peaks(plan.program.numStages, 0);
  if (backend != BackendKind::Sim)
    return peaks;
  for (auto [d, stage] : llvm::enumerate(run.stageOf))
    peaks[stage] =
        std::max(peaks[stage], run.simulation.peakActivationBytesPerDevice[d]);
  return peaks;
}

/// The simulator's lines: step time, bubble, peak activations, timeline.
void printSimulatedStep(const PipelineTrainingPlan &plan,
                        const PipelineTrainingRun &run, int64_t timeline,
                        raw_ostream &os) {
  const PipelineProgram &program = plan.program;
  double ideal =
      idealBubbleFraction(program.numStages, program.numMicrobatches);
  os << llvm::format(
      "step %.4g s, bubble %.2f%% (ideal (p-1)/(m+p-1) = %.2f%%)\n",
      run.simulation.stepSeconds, 100 * run.simulation.bubbleFraction,
      100 * ideal);
  os << "peak activations per stage:";
  for (auto [s, bytes] :
       llvm::enumerate(peakActivationsPerStage(plan, run, BackendKind::Sim))) {
    int64_t perMicrobatch =
        std::max<int64_t>(1, program.stages[s].activationBytesPerMicrobatch);
    os << " " << bytes << " B ("
       << llvm::format("%.3g", double(bytes) / double(perMicrobatch))
       << " micro-batches)";
  }
  os << "\n";
  if (timeline > 0)
    os << drawPipelineTimeline(run.simulation, timeline);
}

} // namespace

void shardc::printPipelineSummary(const PipelineTrainingPlan &plan,
                                  const PipelineTraining &training,
                                  const PipelineTrainingOptions &options,
                                  int64_t timeline, raw_ostream &os) {
  const PipelineProgram &program = plan.program;
  const PipelineTrainingCheck &check = training.check;
  os << "pipeline: " << program.numStages << " stages over \"" << program.axis
     << "\", " << program.numMicrobatches << " micro-batches, "
     << stringifyPipelineSchedule(program.schedule) << ", "
     << training.run.stageOf.size() << " devices ("
     << stringifyBackendKind(options.backend) << ")\n";
  if (options.backend == BackendKind::Sim)
    printSimulatedStep(plan, training.run, timeline, os);
  if (options.backend == BackendKind::Threads)
    os << llvm::format("wall time of the step: %.4f s\n",
                       training.run.wallSeconds);
  if (!check.amplified.empty())
    os << "rounding amplified by the steps: " << check.amplified
       << llvm::format(" (%gx how far ", kSensitivityMargin)
       << "the unsharded steps move when their inputs or their sums "
          "change by one ulp)\n";
  const char *verdict = check.ok ? "OK" : "MISMATCH";
  if (options.steps == 1)
    os << llvm::format("parameters after the step vs the unsharded "
                       "full-batch step: max_rel_err=%.3g %s\n",
                       check.worstRelativeError, verdict);
  else
    os << llvm::format("parameters after %lld steps vs %lld unsharded "
                       "full-batch steps: max_rel_err=%.3g %s\n",
                       (long long)options.steps, (long long)options.steps,
                       check.worstRelativeError, verdict);
}

namespace {

/// The report's "pipeline" object: the stages' figures.
llvm::json::Object stagesToJson(const PipelineTrainingPlan &plan,
                                const PipelineTrainingRun &run,
                                const PipelineTrainingOptions &options) {
  const PipelineProgram &program = plan.program;
  const MachineModel &machine = options.machine;
  FailureOr<MeshTopology> topology = getMeshTopology(program.mesh);
  std::vector<int64_t> peakPerStage =
      peakActivationsPerStage(plan, run, options.backend);
  llvm::json::Array peaks, perMicrobatch, forward, backward, collectiveForward,
      collectiveBackward;
  for (auto [s, stage] : llvm::enumerate(program.stages)) {
    auto [cf, cb] =
        succeeded(topology)
            ? stageCollectiveSeconds(stage.program, *topology, machine)
            : std::pair<double, double>(0, 0);
    collectiveForward.push_back(cf);
    collectiveBackward.push_back(cb);
    peaks.push_back(peakPerStage[s]);
    perMicrobatch.push_back(stage.activationBytesPerMicrobatch);
    forward.push_back(stage.forwardFlops / machine.flopsPerSecond);
    backward.push_back(stage.backwardFlops / machine.flopsPerSecond);
  }
  return llvm::json::Object{
      {"stages", program.numStages},
      {"microbatches", program.numMicrobatches},
      {"schedule", stringifyPipelineSchedule(program.schedule)},
      {"bubble_fraction", run.simulation.bubbleFraction},
      {"ideal_bubble_fraction",
       idealBubbleFraction(program.numStages, program.numMicrobatches)},
      {"peak_activation_bytes_per_stage", std::move(peaks)},
      {"activation_bytes_per_microbatch", std::move(perMicrobatch)},
      {"stage_forward_s", std::move(forward)},
      {"stage_backward_s", std::move(backward)},
      {"stage_collective_forward_s", std::move(collectiveForward)},
      {"stage_collective_backward_s", std::move(collectiveBackward)},
      {"step_time_s", run.simulation.stepSeconds}};
}

} // namespace

llvm::json::Object
shardc::pipelineReportToJson(const PipelineTrainingPlan &plan,
                             const PipelineTraining &training,
                             const PipelineTrainingOptions &options) {
  const MachineModel &machine = options.machine;
  llvm::json::Array sent;
  for (int64_t bytes : training.run.simulation.sentBytesPerDevice)
    sent.push_back(bytes);
  return llvm::json::Object{
      {"devices", int64_t(training.run.stageOf.size())},
      {"backend", stringifyBackendKind(options.backend)},
      {"max_rel_err", training.check.worstRelativeError},
      {"pipeline", stagesToJson(plan, training.run, options)},
      {"sent_bytes_per_device", std::move(sent)},
      {"machine",
       llvm::json::Object{{"link_latency_s", machine.linkLatencySeconds},
                          {"link_bytes_per_s", machine.linkBytesPerSecond},
                          {"flops_per_s", machine.flopsPerSecond}}}};
}

//===- PipelineExecution.cpp - stage programs on threads and MPI ----------===//
//
// On the real backends each device interprets its stage's program with its
// communicator; send and recv are the communicator's buffered point-to-point
// calls, so stages overlap as the schedule lets them. The simulator is in
// PipelineSimulator.cpp.
//
//===----------------------------------------------------------------------===//

#include "shardc/Runtime/PipelineExecution.h"

#include "shardc/Interpreter/Interpreter.h"

#include "llvm/Support/JSON.h"

#include <cmath>
#include <mutex>

using namespace mlir;
using namespace shardc;

FailureOr<std::vector<int64_t>>
shardc::stagesOfDevices(const PipelinePrograms &pipeline) {
  FailureOr<MeshTopology> topology = getMeshTopology(pipeline.mesh);
  if (failed(topology))
    return failure();
  int64_t axis = topology->axisIndex(pipeline.axis);
  if (axis < 0)
    return pipeline.mesh.emitError()
           << "the pipeline axis \"" << pipeline.axis
           << "\" is not an axis of @" << pipeline.mesh.getSymName();
  if (topology->axisSizes()[axis] !=
      static_cast<int64_t>(pipeline.programs.size()))
    return pipeline.mesh.emitError()
           << "the pipeline axis \"" << pipeline.axis << "\" has size "
           << topology->axisSizes()[axis] << " but there are "
           << pipeline.programs.size() << " stage programs";
  std::vector<int64_t> stages;
  for (int64_t d = 0; d < topology->numDevices(); ++d)
    stages.push_back(topology->coordinates(d)[axis]);
  return stages;
}

FailureOr<std::vector<std::vector<Tensor>>>
shardc::runPipelineOnThreads(const PipelinePrograms &pipeline,
                             const std::vector<std::vector<Tensor>> &deviceArgs,
                             const ThreadsOptions &options) {
  FailureOr<std::vector<int64_t>> stages = stagesOfDevices(pipeline);
  if (failed(stages))
    return failure();
  int64_t n = static_cast<int64_t>(stages->size());
  std::vector<std::vector<Tensor>> results(n);
  MLIRContext &context = *pipeline.mesh.getContext();
  LogicalResult ran = runOnThreads(
      context, n,
      [&](Communicator &communicator) -> LogicalResult {
        int64_t d = communicator.deviceId();
        InterpreterOptions run;
        run.communicator = &communicator;
        run.maxTensorBytes = options.maxTensorBytes;
        FailureOr<SmallVector<Tensor>> out = interpretFunction(
            pipeline.programs[(*stages)[d]], deviceArgs[d], run);
        if (failed(out))
          return failure();
        // Each device writes only its own slot.
        results[d].assign(std::make_move_iterator(out->begin()),
                          std::make_move_iterator(out->end()));
        return success();
      },
      options);
  if (failed(ran))
    return failure();
  return results;
}

FailureOr<std::vector<Tensor>>
shardc::runPipelineOnRank(const PipelinePrograms &pipeline,
                          ArrayRef<Tensor> args, Communicator &communicator) {
  FailureOr<std::vector<int64_t>> stages = stagesOfDevices(pipeline);
  if (failed(stages))
    return failure();
  int64_t d = communicator.deviceId();
  if (d < 0 || d >= static_cast<int64_t>(stages->size()))
    return pipeline.mesh.emitError()
           << "device " << d << " is not a device of @"
           << pipeline.mesh.getSymName();
  InterpreterOptions run;
  run.communicator = &communicator;
  FailureOr<SmallVector<Tensor>> out =
      interpretFunction(pipeline.programs[(*stages)[d]], args, run);
  if (failed(out))
    return failure();
  return std::vector<Tensor>(std::make_move_iterator(out->begin()),
                             std::make_move_iterator(out->end()));
}

/// A send or a collective: drawn apart from the compute it overlaps or
/// interrupts.
static bool isCommunication(const PipelineSpan &span) {
  return span.category == "send" || span.category == "collective";
}

void shardc::writePipelineTrace(const PipelineSimulation &report,
                                llvm::raw_ostream &os) {
  llvm::json::Array events;
  // Track 2d: device d's forwards and backwards; 2d+1: its sends, which
  // overlap its compute, and its stage's collectives.
  for (int64_t d = 0; d < report.numDevices; ++d)
    for (int64_t track = 0; track < 2; ++track)
      events.push_back(llvm::json::Object{
          {"name", "thread_name"},
          {"ph", "M"},
          {"pid", 0},
          {"tid", 2 * d + track},
          {"args",
           llvm::json::Object{{"name", "device " + std::to_string(d) +
                                           (track ? " sends" : "")}}}});
  for (const PipelineSpan &span : report.trace)
    events.push_back(llvm::json::Object{
        {"name", span.name},
        {"cat", span.category},
        {"ph", "X"},
        {"pid", 0},
        {"tid", 2 * span.device + (isCommunication(span) ? 1 : 0)},
        {"ts", span.startSeconds * 1e6},
        {"dur", span.durationSeconds * 1e6}});
  llvm::json::Object root{{"traceEvents", std::move(events)},
                          {"displayTimeUnit", "ns"}};
  os << llvm::json::Value(std::move(root)) << "\n";
}

std::string shardc::drawPipelineTimeline(const PipelineSimulation &report,
                                         int64_t columns) {
  std::string out;
  if (report.stepSeconds <= 0 || columns < 1)
    return out;
  double unit = report.stepSeconds / double(columns);
  for (int64_t d = 0; d < report.numDevices; ++d) {
    std::string row(columns, '.');
    for (const PipelineSpan &span : report.trace) {
      if (span.device != d || isCommunication(span))
        continue;
      char c = 'u';
      if (span.category != "update") {
        int64_t j = std::stoll(span.name.substr(1));
        c = span.category == "forward" ? char('0' + j % 10)
                                       : char('a' + j % 26);
      }
      auto from = int64_t(std::lround(span.startSeconds / unit));
      auto to = int64_t(
          std::lround((span.startSeconds + span.durationSeconds) / unit));
      for (int64_t i = from; i < std::min(to, columns); ++i)
        row[i] = c;
    }
    out += "device " + std::to_string(d) + " |" + row + "|\n";
  }
  return out;
}

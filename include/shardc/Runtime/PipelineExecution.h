//===- PipelineExecution.h - running pipeline stage programs ----*- C++ -*-===//
//
// A pipelined training step is MPMD: every device runs the program of its
// stage (its coordinate on the pipeline axis), and the programs meet only
// at send/recv. This runs them on each backend:
//
//   sim      every device in this process, one op at a time, a device
//            advancing until it waits for a message that has not been sent;
//            deterministic, and timed by the cost model: each device has a
//            clock, an op advances it by FLOPs / rate, a message arrives
//            latency + bytes / bandwidth after its send (sends do not block).
//            It reports the step time, the bubble, the activations each
//            stage holds and a trace of every forward, backward and send.
//   threads  one worker thread per device, shared-memory send/receive.
//   mpi      this rank's device, Open MPI send/receive.
//
// docs/pipeline.md describes the programs and the report.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_PIPELINEEXECUTION_H
#define SHARDC_RUNTIME_PIPELINEEXECUTION_H

#include "shardc/Runtime/MpiBackend.h"
#include "shardc/Runtime/SimulatedMesh.h"
#include "shardc/Runtime/ThreadsBackend.h"

namespace shardc {

/// The stage programs and the axis that picks one per device.
struct PipelinePrograms {
  /// Mutable: an op handle's methods are not const, and the handle is a
  /// value.
  mutable MeshOp mesh;
  std::string axis;
  /// programs[k]: stage k's.
  std::vector<mlir::func::FuncOp> programs;
};

/// The stage of every device of the mesh: its coordinate on the axis.
/// Fails with a diagnostic at the mesh when the axis does not exist or its
/// size is not the number of programs.
mlir::FailureOr<std::vector<int64_t>>
stagesOfDevices(const PipelinePrograms &pipeline);

/// One forward or backward of a micro-batch on one device, or a send.
struct PipelineSpan {
  int64_t device;
  /// "F3", "B3", "update", "send F3 -> 2" or "all_reduce F3"
  std::string name;
  /// "forward", "backward", "update", "send" or "collective"
  std::string category;
  double startSeconds, durationSeconds;
};

struct PipelineSimulation {
  int64_t numDevices = 0;
  /// When the last device finished (the step's time).
  double stepSeconds = 0;
  /// Seconds each device computed.
  std::vector<double> busySecondsPerDevice;
  /// 1 - (time computed on all devices) / (devices * step time).
  double bubbleFraction = 0;
  /// Largest total of bytes a forward leaves for a backward that a device
  /// holds at once (the activations of the micro-batches in flight).
  std::vector<int64_t> peakActivationBytesPerDevice;
  /// Largest live bytes (arguments included) per device.
  std::vector<int64_t> peakBytesPerDevice;
  std::vector<int64_t> sentBytesPerDevice;
  std::vector<double> flopsPerDevice;
  std::vector<PipelineSpan> trace;
};

/// Runs the stage programs on every device of the mesh in this process.
/// `deviceArgs[d]` are device d's arguments for its stage's program.
/// Returns every device's results; fails with a diagnostic at the op that
/// failed, or at a recv no device will ever satisfy (a deadlock).
mlir::FailureOr<std::vector<std::vector<Tensor>>>
simulatePipeline(const PipelinePrograms &pipeline,
                 std::vector<std::vector<Tensor>> deviceArgs,
                 const SimulationOptions &options, PipelineSimulation &report);

/// Runs the stage programs on one worker thread per device.
mlir::FailureOr<std::vector<std::vector<Tensor>>>
runPipelineOnThreads(const PipelinePrograms &pipeline,
                     const std::vector<std::vector<Tensor>> &deviceArgs,
                     const ThreadsOptions &options = {});

/// Runs this rank's stage program with `args` over `communicator` (an MPI
/// job of one rank per mesh device). Returns this device's results.
mlir::FailureOr<std::vector<Tensor>>
runPipelineOnRank(const PipelinePrograms &pipeline, llvm::ArrayRef<Tensor> args,
                  Communicator &communicator);

/// Writes the simulation's spans as a Chrome trace: per device one track
/// of forwards and backwards and one of sends.
void writePipelineTrace(const PipelineSimulation &report,
                        llvm::raw_ostream &os);

/// The spans drawn as text, one row per device, `columns` characters for
/// the whole step: each forward cell shows its micro-batch's number (mod
/// 10), each backward cell a letter (a = 0, b = 1, ...), idle time '.'.
std::string drawPipelineTimeline(const PipelineSimulation &report,
                                 int64_t columns);

} // namespace shardc

#endif // SHARDC_RUNTIME_PIPELINEEXECUTION_H

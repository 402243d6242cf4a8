//===- SimulatedMesh.h - an SPMD program on every device --------*- C++ -*-===//
//
// Executes a partitioned (shardc.spmd) function for every device of its mesh
// in one process, deterministically: ops run in lockstep, each collective
// really exchanges the devices' buffers (in memory, combined in group-index
// order), and every step is measured: bytes each device sends per
// collective, each device's peak live bytes, and an estimated time from an
// alpha-beta link model and a FLOP rate (docs/cost-model.md).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_SIMULATEDMESH_H
#define SHARDC_RUNTIME_SIMULATEDMESH_H

#include "shardc/Analysis/CostModel.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Runtime/ChromeTrace.h"
#include "shardc/Support/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <vector>

namespace shardc {

/// One collective as executed.
struct CollectiveRecord {
  std::string kind;              ///< op mnemonic, e.g. "all_gather"
  std::vector<std::string> axes; ///< mesh axes of its groups
  int64_t dim = -1;              ///< gather/scatter/slice dim (-1: none)
  int64_t concatDim = -1;        ///< all_to_all only
  int64_t groupSize = 1;
  int64_t bytesPerDevice = 0; ///< bytes each device sends
  double seconds = 0;         ///< estimated duration
  std::string value;          ///< the value it moves ("h", ...)
};

/// What a training step keeps per device, in bytes, by role (ZeRO's
/// accounting): the arguments marked `shardc.param` and
/// `shardc.optimizer_state`, and the results marked `shardc.gradient_of`.
/// All zero for a program that is not a training step.
struct TrainingMemory {
  int64_t parameters = 0;
  int64_t gradients = 0;
  int64_t optimizerState = 0;
  int64_t total() const { return parameters + gradients + optimizerState; }
};

struct SimulationReport {
  int64_t numDevices = 0;
  std::vector<TrainingMemory> trainingBytesPerDevice;
  std::vector<CollectiveRecord> collectives;
  std::vector<int64_t> peakBytesPerDevice;
  std::vector<int64_t> commBytesPerDevice;
  std::vector<double> flopsPerDevice;
  /// Every op one after the other: compute plus communication
  /// (docs/cost-model.md#time); what the auto-sharder minimizes.
  double estimatedSeconds = 0;
  /// The step with asynchronous collectives: each device computes on one
  /// track and communicates on another, every op starting when its operands
  /// are ready and its track is free, so a collective whose result nothing
  /// needs yet (a gradient's reduction) overlaps the compute after it.
  /// `stepSeconds = computeSeconds + exposedCommunicationSeconds`.
  double stepSeconds = 0;
  double computeSeconds = 0;
  /// Every collective's time, overlapped or not.
  double communicationSeconds = 0;
  double exposedCommunicationSeconds = 0;
  /// The overlapped schedule's spans (stepSeconds long).
  std::vector<TraceSpan> trace;
};

struct SimulationOptions {
  MachineModel machine;
  uint64_t maxTensorBytes = defaultMaxTensorBytes();
  /// Count the arguments as live for the whole run, as they are when their
  /// owner keeps them (the engine's parameters and optimizer state); by
  /// default an argument is freed after its last use, like a temporary.
  bool argumentsStayLive = false;
};

/// Runs `spmd` on every device of `mesh`. `deviceArgs[d]` holds device d's
/// local arguments. Returns `results[d]` for every device; fails with a
/// diagnostic at the failing op.
mlir::FailureOr<std::vector<std::vector<Tensor>>>
simulateOnMesh(mlir::func::FuncOp spmd, MeshOp mesh,
               std::vector<std::vector<Tensor>> deviceArgs,
               const SimulationOptions &options, SimulationReport &report);

/// Runs collective `op` within one group: `inputs[g]` is the operand of
/// the member with group index g. Returns every member's result in the
/// same order. The lockstep simulator and the pipeline simulator (whose
/// stages run their collectives at different times) share it.
mlir::FailureOr<std::vector<Tensor>>
combineCollectiveGroup(mlir::Operation *op,
                       llvm::ArrayRef<const Tensor *> inputs,
                       uint64_t maxTensorBytes);

/// Writes `report.trace` as a Chrome trace event file (one process per
/// device with a compute and a communication track; Perfetto and
/// chrome://tracing open it).
void writeChromeTrace(const SimulationReport &report, llvm::raw_ostream &os);

} // namespace shardc

#endif // SHARDC_RUNTIME_SIMULATEDMESH_H

//===- PipelineTraining.h - pipelined training steps ------------*- C++ -*-===//
//
// The pipelined training workflow (docs/pipeline.md), for every front end:
// split a loss function into stages over a mesh axis and its batch into
// micro-batches, build each stage's program for a schedule, run the steps
// on a backend (each fed the parameters and optimizer state the previous
// one returned), and check the parameters and loss after the last step
// against as many unsharded full-batch steps. `shardc pipeline`, Python's
// `compile(..., pipeline_axis=)` and C++ embedders call these functions
// with their parsed options.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DRIVER_PIPELINETRAINING_H
#define SHARDC_DRIVER_PIPELINETRAINING_H

#include "shardc/Analysis/CostModel.h"
#include "shardc/Runtime/MeshBackend.h"
#include "shardc/Runtime/PipelineExecution.h"
#include "shardc/Transforms/PipelineParallel.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/JSON.h"

#include <map>
#include <string>
#include <vector>

namespace shardc {

struct PipelineTrainingOptions {
  /// The stage axis, micro-batches, schedule and optimizer ("sgd" or
  /// "adam" in `pipeline.optimizer.optimizer`).
  PipelineOptions pipeline;
  /// Under mpi, the caller has started MPI (one rank per device).
  BackendKind backend = BackendKind::Sim;
  double learningRate = 0.01;
  /// Training steps, each from the parameters and state the last returned.
  int64_t steps = 1;
  /// The simulator's machine, also the one the explanation prices with.
  MachineModel machine;
  /// Largest accepted max_rel_err of a parameter (or the loss) after the
  /// last step.
  double tolerance = 1e-4;
};

/// The stage programs of a loss function, with two untouched copies of the
/// module it came from: the reference steps run on one, and on the other
/// when the reference's own sensitivity to rounding is needed.
struct PipelineTrainingPlan {
  mlir::func::FuncOp func;
  PipelineProgram program;
  mlir::OwningOpRef<mlir::ModuleOp> referenceModule, perturbedModule;
};

/// Checks `options` and builds the stage programs of `func` (decomposed,
/// its first result the scalar loss) into its module. Fails after a
/// diagnostic naming the place.
mlir::FailureOr<PipelineTrainingPlan>
planPipelineTraining(mlir::func::FuncOp func,
                     const PipelineTrainingOptions &options);

/// The unsharded full-batch steps: the last step's loss, and each
/// parameter's value after the last step by argument index of `func`.
struct PipelineReference {
  Tensor loss;
  llvm::DenseMap<int64_t, Tensor> next;
};

/// What the stage programs returned after the last step.
struct PipelineTrainingRun {
  PipelinePrograms pipeline;
  /// The stage of every device.
  std::vector<int64_t> stageOf;
  /// The devices whose results this process holds: all of them, under the
  /// mpi backend only its rank.
  std::vector<int64_t> localDevices;
  /// Each local device's results (its stage program's) by device.
  std::vector<std::vector<Tensor>> results;
  /// The simulator's report of the last step (sim backend only).
  PipelineSimulation simulation;
  /// The last step's wall time (threads backend only).
  double wallSeconds = 0;
  /// Under mpi: this rank's backend, which gathers the other ranks' blocks.
  std::shared_ptr<MpiBackend> mpiBackend;
};

/// The run against the reference, judged on the parameters' family scale
/// (shardc/Support/NumericCheck.h) as `shardc train` judges.
struct PipelineTrainingCheck {
  bool ok = true;
  double worstRelativeError = 0;
  /// "w.next within 0.002, ...": the parameters that passed only within
  /// the rounding the steps amplify (Adam moves one whose gradient is noise
  /// by the learning rate).
  std::string amplified;
  /// One line per mismatch, naming the device and the value.
  std::string verdicts;
};

/// Everything one pipelined training produced.
struct PipelineTraining {
  PipelineReference reference;
  PipelineTrainingRun run;
  PipelineTrainingCheck check;
};

/// Runs the reference steps, then the pipelined steps on the backend, then
/// checks them; `beforeRun`, when given, is called between the reference
/// and the pipelined run (`shardc pipeline` explains there, and starts
/// MPI), and its failure ends the training. Under mpi the check covers
/// every rank (a collective call). Fails after a diagnostic.
mlir::FailureOr<PipelineTraining>
trainPipelined(PipelineTrainingPlan &plan, llvm::ArrayRef<Tensor> inputs,
               const PipelineTrainingOptions &options,
               llvm::function_ref<mlir::LogicalResult()> beforeRun = {});

/// `numSteps` unsharded full-batch steps of `reference`'s entry function on
/// `inputs` with `optimizer` (sgd or adam, from its initial state). A
/// nonzero `sumRoundingProbe` rounds every sum otherwise
/// (InterpreterOptions::sumRoundingProbe).
mlir::FailureOr<PipelineReference>
runPipelineReference(mlir::ModuleOp reference, llvm::ArrayRef<Tensor> inputs,
                     const PipelineTrainingOptions &options,
                     unsigned sumRoundingProbe = 0);

/// The pipelined steps on `options.backend`.
mlir::FailureOr<PipelineTrainingRun>
runPipelineSteps(const PipelineTrainingPlan &plan,
                 llvm::ArrayRef<Tensor> inputs,
                 const PipelineTrainingOptions &options);

/// Every local device's results against `reference`. A value beyond the
/// tolerance passes within kSensitivityMargin times how far the reference
/// moves when its inputs change by one ulp (one more reference run on the
/// perturbed module, only when needed, only for Adam).
mlir::FailureOr<PipelineTrainingCheck> checkPipelineTraining(
    PipelineTrainingPlan &plan, const PipelineTrainingRun &run,
    const PipelineReference &reference, llvm::ArrayRef<Tensor> inputs,
    const PipelineTrainingOptions &options);

/// Under mpi: every rank's check combined (collective); the verdicts are
/// every rank's in rank order.
mlir::FailureOr<PipelineTrainingCheck>
gatherCheckFromEveryRank(const PipelineTrainingCheck &check);

/// Device `device`'s block of `global` under `sharding` of a stage program
/// (the whole tensor where it has none: the stage is not sharded).
mlir::FailureOr<Tensor> stageBlockOf(const PipelineProgram &program,
                                     int64_t device, const Tensor &global,
                                     ShardingAttr sharding);

/// The argument `arg` of `fn`, an optimizer state, at its initial value;
/// a diagnostic when it is none.
mlir::FailureOr<Tensor> initialStateOf(mlir::func::FuncOp fn, unsigned arg);

/// Feeds a step's results back as the next step's arguments: each result
/// with `shardc.next = "<name>"` replaces `fn`'s argument named <name>.
void feedResultsBack(mlir::func::FuncOp fn, std::vector<Tensor> &args,
                     std::vector<Tensor> &results);

/// The values after the last step, whole.
struct PipelineTrainedValues {
  Tensor loss;
  /// By argument name of the loss function.
  std::map<std::string, Tensor> parameters;
};

/// Assembles the loss and every parameter from the devices' blocks; under
/// mpi every rank gets them all (a collective call). Fails after a
/// diagnostic.
mlir::FailureOr<PipelineTrainedValues>
assembleTrainedValues(const PipelineTrainingPlan &plan,
                      const PipelineTrainingRun &run);

//===----------------------------------------------------------------------===//
// Reports
//===----------------------------------------------------------------------===//

/// The stage of every op and each stage's time per micro-batch.
void printPipelineExplanation(const PipelineTrainingPlan &plan,
                              const MachineModel &machine,
                              llvm::raw_ostream &os);

/// The summary lines: stages and backend; on the simulator the step time,
/// the bubble and the peak activations (and a `timelineColumns`-wide
/// timeline when positive); the wall time on threads; the verdict.
void printPipelineSummary(const PipelineTrainingPlan &plan,
                          const PipelineTraining &training,
                          const PipelineTrainingOptions &options,
                          int64_t timelineColumns, llvm::raw_ostream &os);

/// The report docs/pipeline.md lists the keys of.
llvm::json::Object pipelineReportToJson(const PipelineTrainingPlan &plan,
                                        const PipelineTraining &training,
                                        const PipelineTrainingOptions &options);

/// The seconds of a stage's collectives in one micro-batch's forward and
/// backward (its actions F0 and B0) under the cost model.
std::pair<double, double> stageCollectiveSeconds(mlir::func::FuncOp stage,
                                                 const MeshTopology &topology,
                                                 const MachineModel &machine);

} // namespace shardc

#endif // SHARDC_DRIVER_PIPELINETRAINING_H

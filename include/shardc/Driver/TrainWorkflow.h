//===- TrainWorkflow.h - training a model on a backend ----------*- C++ -*-===//
//
// The training workflow (`shardc train`), for every front end: a model
// whose first output is a scalar loss is compiled once into a
// ShardedEngine (training step, precision, recompute, auto-sharding,
// partitioning), then trained one step at a time on the backend, on a
// fixed batch or the mini-batches of a data file. The same steps then run
// unsharded on the reference interpreter with the same optimizer, and the
// final parameters must agree, allowing for the rounding that training
// amplifies (shardc/Support/NumericCheck.h). The front end parses its
// options into TrainWorkflowOptions, loads the model and gathers its
// inputs; this workflow does the rest and reports on `os`.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DRIVER_TRAINWORKFLOW_H
#define SHARDC_DRIVER_TRAINWORKFLOW_H

#include "shardc/Driver/TrainingData.h"
#include "shardc/Engine/ShardedEngine.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <functional>
#include <map>
#include <string>

namespace shardc {

struct TrainWorkflowOptions {
  /// The backend, the parameters and the auto-sharding request; the
  /// workflow makes `optimizer` the step the auto-sharder plans.
  EngineOptions engine;
  OptimizerOptions optimizer;
  unsigned steps = 50;
  /// Repeat the steps unsharded and compare the final parameters.
  bool check = true;
  /// Largest accepted max_rel_err of a final parameter, unless the
  /// unsharded run itself moves that far under a one-ulp change.
  double tolerance = 1e-4;
  /// Write each final parameter as <name>.npy here ("": not).
  std::string outDir;
  /// Write the final parameters to this checkpoint ("": not).
  std::string savePath;
  /// Write the last step's timeline here as a Chrome trace ("": not):
  /// every device's compute and communication tracks (ChromeTrace.h). On
  /// mpi each rank writes its own device's, rank R to `<path>.rank<R>`
  /// (rank 0 to `path`).
  std::string tracePath;
  /// Mini-batches of a data file; null: the fixed batch of the inputs.
  const TrainingData *data = nullptr;
  /// Whether an input's value came from a file (kept as given); the others
  /// were generated, and a generated parameter is scaled by 1/sqrt(fan_in).
  std::function<bool(llvm::StringRef)> givenByFile;
  /// Whether this process reports each step (one rank of an mpirun job),
  /// and whether as a bar redrawn in place (stdout is a terminal) rather
  /// than one line per step.
  bool reportsProgress = true;
  bool progressBar = false;
  /// Called between compiling the engine and its first step (the front
  /// end's test hooks).
  std::function<void(ShardedEngine &)> beforeSteps;
};

/// Fails after a diagnostic unless `func`'s first result is a scalar loss.
mlir::LogicalResult checkLossFunction(mlir::func::FuncOp func);

/// Trains the entry function of `module` (decomposed; `args` its inputs by
/// argument index) and reports on `os` in the process holding device 0.
/// Returns whether the final parameters agree with the unsharded run
/// (true without the check); fails after a diagnostic.
mlir::FailureOr<bool> runTrainWorkflow(mlir::OwningOpRef<mlir::ModuleOp> module,
                                       llvm::ArrayRef<Tensor> args,
                                       const TrainWorkflowOptions &options,
                                       llvm::raw_ostream &os);

/// The same steps on the unsharded program `global`: the training step on
/// the reference interpreter from the parameters `initial` (the other
/// arguments from `args`, by the names `argNames`), its state fed back.
/// Returns the final parameters in the shapes checkpoints hold them in,
/// and appends each step's loss to `losses`. A nonzero `sumRoundingProbe`
/// rounds every sum otherwise (InterpreterOptions::sumRoundingProbe).
mlir::FailureOr<std::map<std::string, Tensor>>
trainUnsharded(mlir::ModuleOp global, llvm::ArrayRef<std::string> paramNames,
               const std::map<std::string, Tensor> &initial,
               llvm::ArrayRef<std::string> argNames,
               llvm::ArrayRef<Tensor> args, const OptimizerOptions &optimizer,
               unsigned numSteps, const TrainingData *data,
               std::vector<float> &losses, unsigned sumRoundingProbe = 0);

} // namespace shardc

#endif // SHARDC_DRIVER_TRAINWORKFLOW_H

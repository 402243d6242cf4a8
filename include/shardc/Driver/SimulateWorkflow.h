//===- SimulateWorkflow.h - a program on a simulated mesh -------*- C++ -*-===//
//
// The simulation workflow (`shardc simulate`), for every front end: the
// global program is run unsharded on the reference interpreter, then
// propagated (or auto-sharded), partitioned and run as an SPMD program on
// a simulated mesh, and every output is checked against the reference.
// This is how every partitioning result is proven correct. It reports the
// collectives, the memory and time the simulator measured, and the
// verdict, as text, a JSON report and a Chrome trace. The front end loads
// the global program (differentiated or made a training step as asked)
// and gathers its inputs; this workflow does the rest.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DRIVER_SIMULATEWORKFLOW_H
#define SHARDC_DRIVER_SIMULATEWORKFLOW_H

#include "shardc/Analysis/CostModel.h"
#include "shardc/Support/Tensor.h"
#include "shardc/Transforms/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"

#include <functional>
#include <optional>
#include <string>

namespace shardc {

struct SimulateWorkflowOptions {
  /// The machine the simulator prices on, the one the partitioner chose
  /// its layouts with.
  MachineModel machine;
  /// Plan the whole program with the auto-sharder before partitioning.
  std::optional<ShardcAutoShardOptions> autoShard;
  /// Called on the partition pipeline before it runs (the front end sets
  /// the machine it names on the partition pass); may fail after a
  /// message.
  std::function<mlir::LogicalResult(mlir::OpPassManager &)> configurePartition;
  /// Largest accepted max_rel_err per output, unless the reference itself
  /// moves that far under a one-ulp change of its inputs.
  double tolerance = 1e-5;
  /// Where to write the report JSON, the Chrome trace, the partitioned
  /// program, and each global output as <name>.npy ("": not).
  std::string reportJson, tracePath, spmdPath, outDir;
  /// Print only the summary lines, not each collective.
  bool quiet = false;
  /// Whether the program was differentiated on request: then its
  /// parameters' training memory is reported even without optimizer
  /// state.
  bool differentiated = false;
  /// Testing only: remove the Nth all_reduce (from 0) of the partitioned
  /// program, a wrong plan the check must catch; negative: none.
  int dropAllReduce = -1;
  /// Called after the summary with the reference's function, the inputs
  /// and the sharded run's global outputs (the front end's --save).
  std::function<mlir::LogicalResult(mlir::func::FuncOp, llvm::ArrayRef<Tensor>,
                                    llvm::ArrayRef<Tensor>)>
      afterRun;
};

/// Simulates the entry function of `module` on `inputs` and reports on
/// `os`. Returns whether every output agrees with the reference; fails
/// after a diagnostic.
mlir::FailureOr<bool> runSimulateWorkflow(
    mlir::OwningOpRef<mlir::ModuleOp> module, llvm::ArrayRef<Tensor> inputs,
    const SimulateWorkflowOptions &options, llvm::raw_ostream &os);

} // namespace shardc

#endif // SHARDC_DRIVER_SIMULATEWORKFLOW_H

//===- ShardedExecution.h - an SPMD program on global data ------*- C++ -*-===//
//
// The round trip every check of a partitioning makes: lay the global inputs
// out on the mesh by the argument shardings, run the SPMD program on every
// device, and reassemble the global outputs by the result shardings
// (checking that replicas agree). `shardc simulate`, the checks against the
// unsharded program, explain's verdicts and the differential tester all go
// through it.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_SHARDEDEXECUTION_H
#define SHARDC_RUNTIME_SHARDEDEXECUTION_H

#include "shardc/Runtime/SimulatedMesh.h"
#include "shardc/Support/NumericCheck.h"

namespace shardc {

struct ShardedRun {
  /// Global outputs, one per function result.
  std::vector<Tensor> outputs;
  SimulationReport report;
};

/// Runs the partitioned function `spmd` (of `mesh`) on global `inputs` on
/// the simulated mesh. Fails with a diagnostic at the function.
mlir::FailureOr<ShardedRun>
runOnSimulatedMesh(mlir::func::FuncOp spmd, MeshOp mesh,
                   llvm::ArrayRef<Tensor> inputs,
                   const SimulationOptions &options = {});

} // namespace shardc

#endif // SHARDC_RUNTIME_SHARDEDEXECUTION_H

//===- ShardedExecution.h - a partitioned program on global data -*- C++
//-*-===//
//
// The round trip every check of a partitioning makes: lay the global inputs
// out on the mesh by the argument shardings, run the SPMD program on every
// device, and reassemble the global outputs by the result shardings
// (checking that replicas agree). `shardc simulate`, the differential tester
// and, later, the engine's forward all go through it.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_SHARDEDEXECUTION_H
#define SHARDC_RUNTIME_SHARDEDEXECUTION_H

#include "shardc/Runtime/SimulatedMesh.h"

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

/// Where `got` and `want` disagree on which elements are NaN, +inf or -inf.
struct NonFiniteMismatch {
  int64_t count = 0;
  /// The first such element (row-major index) and its two values.
  int64_t firstIndex = -1;
  float got = 0, want = 0;
};

/// Normwise relative error `max |got - want| / max |want|` over the finite
/// elements of `want` (the absolute error when they are all zero), and the
/// absolute one. A non-finite element matches one of its class (NaN, +inf,
/// -inf): the same NaN or overflow in both programs is no error of the
/// sharding. Any other pair with a non-finite value makes both errors
/// infinite, and is counted in `mismatch` when given.
std::pair<double, double>
compareToReference(const Tensor &got, const Tensor &want,
                   NonFiniteMismatch *mismatch = nullptr);

} // namespace shardc

#endif // SHARDC_RUNTIME_SHARDEDEXECUTION_H

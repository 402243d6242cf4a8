//===- ShardedExecution.cpp - a partitioned program on global data --------===//

#include "shardc/Runtime/ShardedExecution.h"

#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Runtime/DeviceLayout.h"

#include <cmath>

using namespace mlir;
using namespace shardc;

FailureOr<ShardedRun>
shardc::runOnSimulatedMesh(func::FuncOp spmd, MeshOp mesh,
                           ArrayRef<Tensor> inputs,
                           const SimulationOptions &options) {
  FailureOr<DeviceTensors> deviceArgs = layOutArguments(spmd, mesh, inputs);
  if (failed(deviceArgs))
    return failure();
  ShardedRun run;
  FailureOr<DeviceTensors> results =
      simulateOnMesh(spmd, mesh, std::move(*deviceArgs), options, run.report);
  if (failed(results))
    return failure();
  FailureOr<std::vector<Tensor>> outputs =
      assembleResults(spmd, mesh, *results);
  if (failed(outputs))
    return failure();
  run.outputs = std::move(*outputs);
  return run;
}

std::pair<double, double>
shardc::compareToReference(const Tensor &got, const Tensor &want,
                           NonFiniteMismatch *mismatch) {
  double maxAbs = 0, maxRef = 0;
  if (got.dtype() != want.dtype() || got.numElements() != want.numElements())
    return {INFINITY, INFINITY};
  if (want.dtype() != DType::F32) {
    // Integers are exact: any difference counts at its size.
    for (int64_t i = 0; i < want.numElements(); ++i) {
      double g = got.elementAsDouble(i), w = want.elementAsDouble(i);
      maxAbs = std::max(maxAbs, std::fabs(g - w));
      maxRef = std::max(maxRef, std::fabs(w));
    }
    return {maxRef > 0 ? maxAbs / maxRef : maxAbs, maxAbs};
  }
  for (int64_t i = 0; i < want.numElements(); ++i) {
    float g = got.data()[i], w = want.data()[i];
    if (std::isfinite(g) && std::isfinite(w)) {
      maxAbs = std::max(maxAbs, std::fabs(double(g) - double(w)));
      maxRef = std::max(maxRef, std::fabs(double(w)));
      continue;
    }
    // Equal infinities compare equal; NaN equals nothing, not even NaN.
    if (g == w || (std::isnan(g) && std::isnan(w)))
      continue;
    maxAbs = INFINITY;
    if (mismatch && mismatch->count++ == 0) {
      mismatch->firstIndex = i;
      mismatch->got = g;
      mismatch->want = w;
    }
  }
  return {maxRef > 0 ? maxAbs / maxRef : maxAbs, maxAbs};
}

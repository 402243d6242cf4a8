//===- ShardedExecution.cpp - a partitioned program on global data --------===//

#include "shardc/Runtime/ShardedExecution.h"

#include "shardc/Interpreter/BlasThreads.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Runtime/DeviceLayout.h"

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
  ScopedBlasThreads blas(kDeviceBlasThreads); // the bits of every backend
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

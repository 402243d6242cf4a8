//===- ShardedExecution.cpp - a partitioned program on global data --------===//

#include "shardc/Runtime/ShardedExecution.h"

#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Runtime/TensorBlocks.h"

#include <cmath>

using namespace mlir;
using namespace shardc;

FailureOr<ShardedRun>
shardc::runOnSimulatedMesh(func::FuncOp spmd, MeshOp mesh,
                           ArrayRef<Tensor> inputs,
                           const SimulationOptions &options) {
  FailureOr<MeshTopology> topology = getMeshTopology(mesh);
  if (failed(topology))
    return failure();
  if (inputs.size() != spmd.getNumArguments())
    return spmd.emitError() << "expected " << spmd.getNumArguments()
                            << " inputs, got " << inputs.size();
  int64_t numDevices = topology->numDevices();
  std::vector<std::vector<Tensor>> deviceArgs(numDevices);
  for (auto [i, input] : llvm::enumerate(inputs)) {
    auto sharding = spmd.getArgAttrOfType<ShardingAttr>(
        i, ShardcDialect::getShardingAttrName());
    if (!sharding)
      return spmd.emitError() << "argument #" << i << " has no sharding";
    for (int64_t d = 0; d < numDevices; ++d) {
      llvm::Expected<Tensor> block =
          extractDeviceBlock(input, sharding, mesh, *topology, d);
      if (!block)
        return spmd.emitError() << "argument #" << i << ": "
                                << llvm::toString(block.takeError());
      deviceArgs[d].push_back(std::move(*block));
    }
  }

  ShardedRun run;
  auto results =
      simulateOnMesh(spmd, mesh, std::move(deviceArgs), options, run.report);
  if (failed(results))
    return failure();

  for (unsigned i = 0; i < spmd.getNumResults(); ++i) {
    auto sharding = spmd.getResultAttrOfType<ShardingAttr>(
        i, ShardcDialect::getShardingAttrName());
    if (!sharding)
      return spmd.emitError() << "result #" << i << " has no sharding";
    SmallVector<const Tensor *> blocks;
    for (int64_t d = 0; d < numDevices; ++d)
      blocks.push_back(&(*results)[d][i]);
    // The global shape: the local one scaled back by the result's axes.
    SmallVector<int64_t> shape(blocks.front()->shape());
    for (size_t dim = 0; dim < shape.size(); ++dim)
      for (StringRef a : sharding.getDimAxes(dim))
        shape[dim] *= mesh.getAxisSize(a);
    std::string why;
    FailureOr<Tensor> global =
        assembleGlobal(blocks, sharding, mesh, *topology, shape, why);
    if (failed(global))
      return spmd.emitError() << "result #" << i << ": " << why;
    run.outputs.push_back(std::move(*global));
  }
  return run;
}

std::pair<double, double> shardc::compareToReference(const Tensor &got,
                                                     const Tensor &want) {
  double maxAbs = 0, maxRef = 0;
  for (int64_t i = 0; i < want.numElements(); ++i) {
    double d = std::fabs(double(got.data()[i]) - double(want.data()[i]));
    if (std::isnan(d))
      d = INFINITY;
    maxAbs = std::max(maxAbs, d);
    maxRef = std::max(maxRef, std::fabs(double(want.data()[i])));
  }
  return {maxRef > 0 ? maxAbs / maxRef : maxAbs, maxAbs};
}

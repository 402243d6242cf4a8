//===- DeviceLayout.cpp - global tensors to device blocks and back --------===//

#include "shardc/Runtime/DeviceLayout.h"

#include "shardc/Dialect/UnevenDims.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Runtime/TensorBlocks.h"

using namespace mlir;
using namespace shardc;

FailureOr<DeviceTensors> shardc::layOutArguments(func::FuncOp spmd, MeshOp mesh,
                                                 ArrayRef<Tensor> inputs) {
  FailureOr<MeshTopology> topology = getMeshTopology(mesh);
  if (failed(topology))
    return failure();
  if (inputs.size() != spmd.getNumArguments())
    return spmd.emitError() << "expected " << spmd.getNumArguments()
                            << " inputs, got " << inputs.size();
  int64_t numDevices = topology->numDevices();
  DeviceTensors deviceArgs(numDevices);
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
  return deviceArgs;
}

FailureOr<std::vector<Tensor>>
shardc::assembleResults(func::FuncOp spmd, MeshOp mesh,
                        const DeviceTensors &results) {
  FailureOr<MeshTopology> topology = getMeshTopology(mesh);
  if (failed(topology))
    return failure();
  int64_t numDevices = topology->numDevices();
  if (static_cast<int64_t>(results.size()) != numDevices)
    return spmd.emitError() << "expected results of " << numDevices
                            << " devices, got " << results.size();
  std::vector<Tensor> outputs;
  for (unsigned i = 0; i < spmd.getNumResults(); ++i) {
    auto sharding = spmd.getResultAttrOfType<ShardingAttr>(
        i, ShardcDialect::getShardingAttrName());
    if (!sharding)
      return spmd.emitError() << "result #" << i << " has no sharding";
    SmallVector<const Tensor *> blocks;
    for (int64_t d = 0; d < numDevices; ++d) {
      if (results[d].size() != spmd.getNumResults())
        return spmd.emitError() << "device " << d << " returned "
                                << results[d].size() << " results";
      blocks.push_back(&results[d][i]);
    }
    // The global shape: the partitioner's record where a dim is uneven
    // (padded), else the local one scaled back by the result's axes.
    SmallVector<int64_t> shape(blocks.front()->shape());
    if (auto global = spmd.getResultAttrOfType<DenseI64ArrayAttr>(
            i, getGlobalShapeAttrName()))
      shape.assign(global.asArrayRef().begin(), global.asArrayRef().end());
    else
      for (size_t dim = 0; dim < shape.size() && dim < sharding.getRank();
           ++dim)
        for (StringRef a : sharding.getDimAxes(dim))
          shape[dim] *= mesh.getAxisSize(a);
    std::string why;
    FailureOr<Tensor> global =
        assembleGlobal(blocks, sharding, mesh, *topology, shape, why);
    if (failed(global))
      return spmd.emitError() << "result #" << i << ": " << why;
    outputs.push_back(std::move(*global));
  }
  return outputs;
}

FailureOr<std::vector<Tensor>>
shardc::runGlobalOnBackend(MeshBackend &backend, func::FuncOp spmd, MeshOp mesh,
                           ArrayRef<Tensor> inputs) {
  if (static_cast<int64_t>(backend.localDevices().size()) !=
      backend.numDevices())
    return spmd.emitError("runGlobalOnBackend needs every device local; "
                          "use gatherBlocks with a distributed backend");
  FailureOr<DeviceTensors> args = layOutArguments(spmd, mesh, inputs);
  if (failed(args))
    return failure();
  FailureOr<DeviceTensors> results = backend.run(spmd, *args);
  if (failed(results))
    return failure();
  return assembleResults(spmd, mesh, *results);
}

//===- SimBackend.cpp - the simulated mesh as a MeshBackend ---------------===//
//
// The simulator consumes its arguments, while a backend's caller keeps them
// (parameters live across steps), so run() hands it copies. That costs a
// copy per step, which the instrumented backend can afford; the threads and
// mpi backends read the caller's tensors in place.
//
//===----------------------------------------------------------------------===//

#include "shardc/Runtime/SimBackend.h"

#include "shardc/Runtime/RetainFreedMemory.h"

#include "shardc/Interpreter/BlasThreads.h"
#include "shardc/Interpreter/Interpreter.h"

#include <numeric>

using namespace mlir;
using namespace shardc;

SimBackend::SimBackend(MeshOp mesh, const SimulationOptions &options,
                       int64_t numDevices)
    : mesh(mesh), options(options), devices(numDevices) {
  std::iota(devices.begin(), devices.end(), 0);
  // Whatever the caller holds stays resident between and during runs.
  this->options.argumentsStayLive = true;
}

FailureOr<std::unique_ptr<SimBackend>>
SimBackend::create(MeshOp mesh, const SimulationOptions &options) {
  FailureOr<MeshTopology> topology = getMeshTopology(mesh);
  if (failed(topology))
    return failure();
  // A step's tensors come from the previous step's freed buffers, as on
  // the threads and mpi backends, instead of fresh pages every step.
  retainFreedMemory();
  return std::unique_ptr<SimBackend>(
      new SimBackend(mesh, options, topology->numDevices()));
}

FailureOr<DeviceTensors> SimBackend::run(func::FuncOp spmd,
                                         const DeviceTensors &args) {
  if (static_cast<int64_t>(args.size()) != numDevices())
    return spmd.emitError() << "the sim backend needs arguments for "
                            << numDevices() << " devices, got " << args.size();
  DeviceTensors copies(args.size());
  for (auto [device, deviceArgs] : llvm::enumerate(args)) {
    if (deviceArgs.size() != spmd.getNumArguments())
      return spmd.emitError()
             << "device " << device << " has " << deviceArgs.size()
             << " arguments for a function of " << spmd.getNumArguments();
    for (const Tensor &t : deviceArgs)
      copies[device].push_back(t.clone());
  }
  SimulationReport fresh;
  ScopedBlasThreads blas(kDeviceBlasThreads); // the bits of every backend
  FailureOr<DeviceTensors> results =
      simulateOnMesh(spmd, mesh, std::move(copies), options, fresh);
  if (failed(results))
    return failure();
  report = std::move(fresh);
  return results;
}

FailureOr<std::vector<Tensor>>
SimBackend::gatherBlocks(std::vector<Tensor> localBlocks) {
  // Every device is local: the blocks are already all here.
  return localBlocks;
}

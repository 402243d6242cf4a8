//===- EngineBackends.cpp - the backend an engine runs on -----------------===//

#include "EngineBackends.h"

#include "shardc/Runtime/MpiBackend.h"
#include "shardc/Runtime/SimBackend.h"
#include "shardc/Runtime/ThreadsBackend.h"

using namespace mlir;
using namespace shardc;

FailureOr<std::unique_ptr<MeshBackend>>
shardc::createEngineBackend(MeshOp mesh, const EngineOptions &options) {
  switch (options.backend) {
  case BackendKind::Sim: {
    FailureOr<std::unique_ptr<SimBackend>> sim =
        SimBackend::create(mesh, options.simulation);
    if (failed(sim))
      return failure();
    return std::unique_ptr<MeshBackend>(std::move(*sim));
  }
  case BackendKind::Mpi: {
    FailureOr<std::unique_ptr<MpiBackend>> mpi = createMpiBackend(mesh, options.mpi);
    if (failed(mpi))
      return failure();
    return std::unique_ptr<MeshBackend>(std::move(*mpi));
  }
  case BackendKind::Threads: {
    ThreadsOptions threads;
    threads.blasThreadsPerDevice = options.blasThreadsPerDevice;
    std::unique_ptr<MeshBackend> backend = createThreadsBackend(mesh, threads);
    if (!backend)
      return failure();
    return backend;
  }
  }
  return mesh.emitError() << "unknown backend";
}

//===- EngineSession.cpp - what `exec` and `train` share ------------------===//

#include "EngineSession.h"

namespace cl = llvm::cl;
using namespace shardc;

BackendOptions::BackendOptions(cl::SubCommand &sub)
    : backend("backend",
              cl::desc("Where the devices run: sim (simulated, in lockstep), "
                       "threads (one thread per device) or mpi (one process "
                       "per device, under mpirun)"),
              cl::init("sim"), cl::sub(sub)),
      blasThreads("blas-threads",
                  cl::desc("BLAS threads per device (threads backend; 0: "
                           "cores / devices)"),
                  cl::init(0), cl::sub(sub)) {}

mlir::LogicalResult BackendOptions::apply(EngineOptions &options,
                                          std::optional<MpiEnvironment> &mpi,
                                          mlir::MLIRContext &context) const {
  std::optional<BackendKind> kind = parseBackendKind(backend);
  if (!kind) {
    llvm::errs() << "shardc: error: unknown --backend '" << backend
                 << "' (expected sim, threads or mpi)\n";
    return mlir::failure();
  }
  if (blasThreads < 0) {
    llvm::errs() << "shardc: error: --blas-threads must be >= 0\n";
    return mlir::failure();
  }
  options.backend = *kind;
  options.blasThreadsPerDevice = blasThreads;
  // Device threads read the IR and may build types or attributes while
  // reporting an error, which a single-threaded context does not guard.
  if (*kind == BackendKind::Threads)
    context.enableMultithreading();
  if (*kind == BackendKind::Mpi) {
    // mpirun passes what MPI needs in the environment; the command line
    // was parsed already.
    int argc = 0;
    char **argv = nullptr;
    llvm::Expected<MpiEnvironment> env = initializeMpi(argc, argv);
    if (!env) {
      llvm::errs() << "shardc: error: " << llvm::toString(env.takeError())
                   << "\n";
      return mlir::failure();
    }
    mpi.emplace(std::move(*env));
  }
  return mlir::success();
}

bool shardc::isPrintingProcess(ShardedEngine &engine) {
  return !engine.localDevices().empty() && engine.localDevices().front() == 0;
}

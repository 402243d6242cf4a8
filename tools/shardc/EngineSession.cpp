//===- EngineSession.cpp - what `exec` and `train` share ------------------===//

#include "EngineSession.h"
#include "JobDiagnostics.h"

#include "shardc/Dialect/MeshLookup.h"

#include "llvm/ADT/StringExtras.h"

#include <csignal>
#include <cstdlib>

namespace cl = llvm::cl;
using namespace shardc;

/// Names the environment variable that sets --mpi-timeout's default, for
/// jobs whose command line a launcher writes.
static constexpr const char *kMpiTimeoutVariable = "SHARDC_MPI_TIMEOUT";

BackendOptions::BackendOptions(cl::SubCommand &sub)
    : backend("backend",
              cl::desc("Where the devices run: sim (simulated, in lockstep), "
                       "threads (one thread per device) or mpi (one process "
                       "per device, under mpirun)"),
              cl::init("sim"), cl::sub(sub)),
      blasThreads("blas-threads",
                  cl::desc("BLAS threads per device (threads backend; 0: "
                           "1, as on every backend, for the same bits; more "
                           "may be faster but change the last bits)"),
                  cl::init(0), cl::sub(sub)),
      mpiTimeout(
          "mpi-timeout",
          cl::desc("mpi backend: end the job when a rank waits longer than "
                   "this for the others (seconds; 0: wait forever; default "
                   "$SHARDC_MPI_TIMEOUT, else 300)"),
          cl::value_desc("seconds"),
          cl::init(MpiCommunicatorOptions::kDefaultTimeoutSeconds),
          cl::sub(sub)),
      mpiOverlap("mpi-overlap",
                 cl::desc("mpi backend: all_reduce and reduce_scatter "
                          "travel while the next ops compute and complete "
                          "where their result is first used (default off)"),
                 cl::init(false), cl::sub(sub)),
      mpiTestFault("mpi-test-fault",
                   cl::desc("Testing only: stop:R or kill:R makes rank R "
                            "stop or die before the first run"),
                   cl::Hidden, cl::init(""), cl::sub(sub)) {}

mlir::LogicalResult BackendOptions::apply(EngineOptions &options,
                                          std::optional<MpiEnvironment> &mpi,
                                          mlir::MLIRContext &context,
                                          mlir::func::FuncOp entry) const {
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
  double timeout = mpiTimeout;
  std::string timeoutSource = "--mpi-timeout";
  if (!mpiTimeout.getNumOccurrences())
    if (const char *text = std::getenv(kMpiTimeoutVariable)) {
      timeoutSource = kMpiTimeoutVariable;
      if (!llvm::to_float(text, timeout))
        timeout = -1; // reported below
    }
  if (!(timeout >= 0)) {
    llvm::errs() << "shardc: error: " << timeoutSource
                 << " must be a number of seconds >= 0 (0 waits forever)";
    if (timeoutSource == kMpiTimeoutVariable)
      llvm::errs() << ", got '" << std::getenv(kMpiTimeoutVariable) << "'";
    llvm::errs() << "\n";
    return mlir::failure();
  }
  options.backend = *kind;
  options.blasThreadsPerDevice = blasThreads;
  options.mpi.timeoutSeconds = timeout;
  options.mpi.overlapReductions = mpiOverlap;
  // Device threads read the IR and may build types or attributes while
  // reporting an error, which a single-threaded context does not guard.
  if (*kind == BackendKind::Threads)
    context.enableMultithreading();
  if (*kind == BackendKind::Mpi) {
    if (!startMpiForCommand(mpi))
      return mlir::failure();
    // Before any rank communicates: every rank finds a job of the wrong
    // size alike, and the meeting prints that once.
    bool fits = true;
    if (mlir::FailureOr<MeshOp> mesh = getFunctionMesh(entry); succeeded(mesh))
      fits = succeeded(checkMpiJobFitsMesh(*mesh));
    if (!meetRanks(!fits) || !fits)
      return mlir::failure();
  }
  return mlir::success();
}

bool shardc::isPrintingProcess(ShardedEngine &engine) {
  return !engine.localDevices().empty() && engine.localDevices().front() == 0;
}

void BackendOptions::injectTestFault(ShardedEngine &engine) const {
  auto [action, rankText] = llvm::StringRef(mpiTestFault).split(':');
  int64_t rank = -1;
  if (engine.backend().kind() != BackendKind::Mpi || action.empty() ||
      rankText.getAsInteger(10, rank) ||
      !llvm::is_contained(engine.localDevices(), rank))
    return;
  llvm::errs().flush();
  if (action == "stop")
    std::raise(SIGSTOP);
  else if (action == "kill")
    std::raise(SIGKILL);
}

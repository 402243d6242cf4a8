//===- EngineSession.h - what `exec` and `train` share ----------*- C++ -*-===//
//
// Both commands build a ShardedEngine from the model on the command line
// and check what it computes against the reference interpreter on the
// unsharded program. Under `--backend mpi` every rank runs the same command;
// only the process that holds device 0 prints.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_TOOLS_ENGINESESSION_H
#define SHARDC_TOOLS_ENGINESESSION_H

#include "shardc/Engine/ShardedEngine.h"
#include "shardc/Runtime/MpiBackend.h"

#include "llvm/Support/CommandLine.h"

namespace shardc {

/// Registers --backend, --blas-threads and --mpi-timeout on `sub`; call
/// once per subcommand at static-initialization time.
class BackendOptions {
public:
  explicit BackendOptions(llvm::cl::SubCommand &sub);
  /// Fills `options` from the command line; reports an unknown backend.
  /// For `mpi`, also joins the MPI job: `mpi` then holds it, and must
  /// outlive every engine (MPI is finalized when it is destroyed); the ranks
  /// meet (JobDiagnostics.h) after checking that the job fits `entry`'s
  /// mesh, so that errors found alike by every rank print once. For
  /// `threads`, lets `context` be used from the device threads.
  mlir::LogicalResult apply(EngineOptions &options,
                            std::optional<MpiEnvironment> &mpi,
                            mlir::MLIRContext &context,
                            mlir::func::FuncOp entry) const;

  /// Test hook (hidden --mpi-test-fault=stop:R or kill:R): rank R stops
  /// itself (SIGSTOP, like `kill -STOP`) or dies (SIGKILL) here, so that a
  /// test can watch how the other ranks cope. Call it between building the
  /// engine and its first collective.
  void injectTestFault(ShardedEngine &engine) const;

private:
  llvm::cl::opt<std::string> backend;
  llvm::cl::opt<int> blasThreads;
  llvm::cl::opt<double> mpiTimeout;
  llvm::cl::opt<bool> mpiOverlap;
  llvm::cl::opt<std::string> mpiTestFault;
};

/// True in the process that should print (the one holding device 0).
bool isPrintingProcess(ShardedEngine &engine);

} // namespace shardc

#endif // SHARDC_TOOLS_ENGINESESSION_H

//===- MpiBackend.h - one process per device over Open MPI ------*- C++ -*-===//
//
// The `mpi` MeshBackend: the job has one MPI rank per mesh device (world
// rank = device id) and this process drives only its own. run() interprets
// the SPMD function on this rank, its collectives going through an
// MpiCommunicator; gatherBlocks() gives every rank every device's block.
//
// A tool that offers the backend calls initializeMpi() first thing in main
// (it consumes the arguments mpirun adds) and keeps the returned guard alive
// until it returns, which finalizes MPI. docs/mpi.md shows how to launch.
//
// Failure policy (see MpiCommunicator.h): a failure on a rank is reported
// with the rank's number and then ends the job with MPI_Abort(..., 1), so
// no rank is left waiting in a collective; mpirun exits 1.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_MPIBACKEND_H
#define SHARDC_RUNTIME_MPIBACKEND_H

#include "shardc/Runtime/MeshBackend.h"
#include "shardc/Runtime/MpiCommunicator.h"

#include <memory>
#include <string>
#include <vector>

namespace shardc {

/// Keeps MPI initialized while alive; finalizes it (if it initialized it)
/// when destroyed. Move-only.
class MpiEnvironment {
public:
  MpiEnvironment(MpiEnvironment &&other) noexcept;
  MpiEnvironment &operator=(MpiEnvironment &&) = delete;
  MpiEnvironment(const MpiEnvironment &) = delete;
  ~MpiEnvironment();

  /// This process's rank in MPI_COMM_WORLD and the world's size.
  int rank() const { return worldRank; }
  int size() const { return worldSize; }

private:
  friend llvm::Expected<MpiEnvironment> initializeMpi(int &argc, char **&argv);
  MpiEnvironment(bool owns, int rank, int size)
      : owns(owns), worldRank(rank), worldSize(size) {}
  bool owns;
  int worldRank, worldSize;
};

/// Initializes MPI (MPI_Init_thread, serialized calls) unless it already
/// is, and sets MPI_ERRORS_RETURN on MPI_COMM_WORLD. Works without mpirun
/// too: a lone process is a job of one rank.
llvm::Expected<MpiEnvironment> initializeMpi(int &argc, char **&argv);

/// True between MPI_Init and MPI_Finalize.
bool isMpiInitialized();

/// Every rank's `text`, indexed by rank (MPI_Allgather of the lengths, then
/// MPI_Allgatherv of the bytes). Collective over MPI_COMM_WORLD; MPI must
/// be initialized. For the few messages a tool exchanges before its ranks
/// start working, not for tensors.
llvm::Expected<std::vector<std::string>>
gatherTextFromEveryRank(llvm::StringRef text);

class MpiBackend : public MeshBackend {
public:
  BackendKind kind() const override { return BackendKind::Mpi; }
  int64_t numDevices() const override;
  /// {this rank}.
  llvm::ArrayRef<int64_t> localDevices() const override { return local; }

  /// Interprets `spmd` on this rank with args[0]. On failure, reports
  /// which device failed and aborts the job (the other ranks may be waiting
  /// in a collective); with abortOnFailure off it returns failure instead.
  mlir::FailureOr<DeviceTensors> run(mlir::func::FuncOp spmd,
                                     const DeviceTensors &args) override;

  /// localBlocks holds this rank's block; every rank gets every block,
  /// indexed by device id (MPI_Allgather of the shapes, then
  /// MPI_Allgatherv of the data). Collective.
  mlir::FailureOr<std::vector<Tensor>>
  gatherBlocks(std::vector<Tensor> localBlocks) override;

  /// The communicator run() uses, for hand-written SPMD code.
  MpiCommunicator &getCommunicator() { return *communicator; }

  /// This rank's device's spans (each rank records its own).
  std::vector<TraceSpan> lastTrace() const override { return trace; }

private:
  friend mlir::FailureOr<std::unique_ptr<MpiBackend>>
  createMpiBackend(MeshOp mesh, MpiCommunicatorOptions options);
  MpiBackend(std::unique_ptr<MpiCommunicator> communicator, bool abort);

  std::unique_ptr<MpiCommunicator> communicator;
  llvm::SmallVector<int64_t, 1> local;
  bool abortOnFailure;
  std::vector<TraceSpan> trace;
};

/// Fails with a diagnostic at `mesh` unless MPI is initialized and the job
/// has one rank per device of `mesh`. Local: no communication.
mlir::LogicalResult checkMpiJobFitsMesh(MeshOp mesh);

/// The mpi backend for `mesh`. Collective: every rank of the job calls it.
/// Fails with a diagnostic at the mesh (on every rank alike, so nobody
/// hangs) if MPI is not initialized or the job's rank count differs from
/// the mesh's device count.
mlir::FailureOr<std::unique_ptr<MpiBackend>>
createMpiBackend(MeshOp mesh, MpiCommunicatorOptions options = {});

} // namespace shardc

#endif // SHARDC_RUNTIME_MPIBACKEND_H

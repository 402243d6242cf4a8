//===- MpiCommunicator.h - the Communicator over Open MPI -------*- C++ -*-===//
//
// One process per device: device id = rank in MPI_COMM_WORLD. Each distinct
// group gets its own MPI communicator whose ranks are the group's devices in
// group-index order, so an MPI collective on it concatenates blocks in the
// order shardc's collectives define. mpi.h stays out of this header (the
// state lives behind a pointer), so tools that only create a backend do not
// need MPI's include paths.
//
// Failure policy: every MPI call runs under MPI_ERRORS_RETURN and has its
// return code checked. Any failure (an MPI error, a bad argument, a failed
// allocation) is reported as a diagnostic naming the rank and, by default,
// then ends the whole job with MPI_Abort(MPI_COMM_WORLD, 1): the other ranks
// may already wait in a collective this rank will never join, and MPI has
// no portable way to wake them. This is the policy mpirun users know (the
// job exits 1 and mpirun names the rank that aborted).
//
// Liveness: no wait for other ranks blocks in MPI. Every operation is
// started nonblocking and polled with MPI_Testall, sleeping between tests
// (a waiting rank uses next to no CPU), for at most `timeoutSeconds`. A
// rank that waits longer asks every rank, over a communicator of its own,
// which operation it is in; ranks waiting in a poll loop answer at once, a
// stopped, killed or hung one does not. The lowest rank still answering
// reports the ranks that do not answer and what the others wait in, and
// ends the job. Creating the communicator (MPI_Comm_dup, MPI_Comm_split)
// still blocks: MPI has no nonblocking split.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_MPICOMMUNICATOR_H
#define SHARDC_RUNTIME_MPICOMMUNICATOR_H

#include "shardc/Interpreter/Communicator.h"
#include "shardc/Support/MeshTopology.h"

#include <memory>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace shardc {

/// Prints `message` on stderr, then ends every rank of the job with
/// MPI_Abort(MPI_COMM_WORLD, 1) (or exits 1 if MPI is not running).
[[noreturn]] void abortMpiJob(const llvm::Twine &message);

struct MpiCommunicatorOptions {
  static constexpr double kDefaultTimeoutSeconds = 300;
  /// Sum and max reductions exchange blocks (MPI_Alltoallv) and combine
  /// them locally in group order with reduceTensors, then share the result
  /// (MPI_Allgatherv): the same bandwidth as a ring all-reduce, and results
  /// bit-identical to the simulator's on every rank. When false, they map
  /// straight to MPI_Allreduce / MPI_Reduce_scatter_block, whose summation
  /// order is Open MPI's (agreeing with the simulator to ~1e-6 relative).
  bool deterministicReductions = true; // always for bf16, f16: MPI can't sum
  /// After reporting a failure, end the job with MPI_Abort (see above).
  /// Only tests that fail on every rank alike may turn this off.
  bool abortOnFailure = true;
  /// Bound on every wait for other ranks, in seconds; 0 waits forever (the
  /// name and meaning of ThreadsOptions::timeoutSeconds). Generous by
  /// default, since a rank legitimately waits while another computes. A
  /// timeout always ends the job, whatever abortOnFailure says: the timed-out
  /// operation is still pending in MPI, which may yet write into its
  /// buffers, so this rank can neither release them nor go on.
  double timeoutSeconds = kDefaultTimeoutSeconds;
  /// createMpiBackend keeps freed tensor buffers in the rank's heap for
  /// the next step instead of returning them to the system (what
  /// ThreadsOptions::retainFreedMemory does, process-wide): without it,
  /// every step page-faults its large activations, gradients and
  /// collective buffers in afresh.
  bool retainFreedMemory = true;
  /// all_reduce and reduce_scatter started by the interpreter run as MPI's
  /// nonblocking collectives that progress between ops and complete where
  /// their result is first needed (startAllReduce), so gradient reductions
  /// overlap the backward pass. Off (the default: on two busy cores it
  /// measured slower, bench/README.md): each completes before the next op.
  bool overlapReductions = false;
};

class MpiCommunicator : public Communicator {
public:
  /// A communicator over every rank of MPI_COMM_WORLD. Collective: every
  /// rank must call it. MPI must be initialized (initializeMpi). Errors are
  /// reported through `context`'s diagnostic engine, or on stderr if null.
  static mlir::FailureOr<std::unique_ptr<MpiCommunicator>>
  create(mlir::MLIRContext *context, MpiCommunicatorOptions options = {});
  ~MpiCommunicator() override;

  /// Creates the communicators of every group over every subset of
  /// `topology`'s axes (in mesh order) up front, with MPI_Comm_split over the
  /// world. Collective: every rank must call it. Groups met later that are
  /// not prepared (other axis orders, hand-picked groups) are created on
  /// first use with MPI_Comm_create_group, which only their members join.
  mlir::LogicalResult prepareGroups(const MeshTopology &topology);

  int64_t deviceId() const override;
  int64_t numDevices() const override;

  mlir::LogicalResult barrier() override;
  mlir::LogicalResult send(int64_t dest, const Tensor &tensor) override;
  mlir::FailureOr<Tensor> receive(int64_t src) override;
  /// MPI_Isend; the future completes (polling, within the timeout) on the
  /// thread that waits for it. The communicator keeps the tensor alive until then, and waits
  /// for sends nobody waited for in barrier() and on destruction.
  std::future<mlir::LogicalResult> sendAsync(int64_t dest,
                                             Tensor tensor) override;

  using Communicator::allGather;
  using Communicator::allReduce;
  using Communicator::allToAll;
  using Communicator::reduceScatter;
  mlir::FailureOr<Tensor> allGather(const Tensor &local,
                                    llvm::ArrayRef<int64_t> group,
                                    int64_t dim) override;
  mlir::FailureOr<Tensor> allReduce(const Tensor &local,
                                    llvm::ArrayRef<int64_t> group,
                                    Reduction kind) override;
  mlir::FailureOr<Tensor> reduceScatter(const Tensor &local,
                                        llvm::ArrayRef<int64_t> group,
                                        int64_t dim,
                                        Reduction kind) override;
  mlir::FailureOr<Tensor> allToAll(const Tensor &local,
                                   llvm::ArrayRef<int64_t> group,
                                   int64_t splitDim,
                                   int64_t concatDim) override;
  /// The reductions above as MPI nonblocking collectives that complete in
  /// PendingCollective::wait (MpiPendingReduction.cpp), with the blocking
  /// calls' bits, liveness answers and timeout; the blocking calls when
  /// MpiCommunicatorOptions::overlapReductions is off.
  mlir::FailureOr<std::unique_ptr<PendingCollective>>
  startAllReduce(Tensor local, llvm::ArrayRef<int64_t> group,
                 Reduction kind) override;
  mlir::FailureOr<std::unique_ptr<PendingCollective>>
  startReduceScatter(Tensor local, llvm::ArrayRef<int64_t> group, int64_t dim,
                     Reduction kind) override;
  mlir::FailureOr<Tensor>
  collectivePermute(const Tensor &local, llvm::ArrayRef<int64_t> group,
                    llvm::ArrayRef<std::pair<int64_t, int64_t>> pairs) override;

  /// Every rank's `local` (any shape, any rank count), indexed by rank:
  /// sizes are exchanged first (MPI_Allgather), then the data
  /// (MPI_Allgatherv). `local` is moved into its own slot. Collective.
  mlir::FailureOr<std::vector<Tensor>> gatherFromEveryRank(Tensor local);

  /// Reports `message` as a failure of this rank, and aborts the job if the
  /// options say so. Returns failure() for the caller to propagate.
  mlir::LogicalResult fail(const llvm::Twine &message);

  struct Impl;

private:
  explicit MpiCommunicator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace shardc

#endif // SHARDC_RUNTIME_MPICOMMUNICATOR_H

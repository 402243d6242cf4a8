//===- MpiCommunicatorImpl.h - MpiCommunicator's state ----------*- C++ -*-===//
//
// Private to lib/Runtime: the state behind MpiCommunicator, shared by its
// set-up and point-to-point half (MpiCommunicator.cpp) and its collectives
// (MpiCollectives.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_RUNTIME_MPICOMMUNICATORIMPL_H
#define SHARDC_LIB_RUNTIME_MPICOMMUNICATORIMPL_H

#include "shardc/Runtime/MpiCommunicator.h"

#include "MpiLiveness.h"
#include "MpiSupport.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Twine.h"

#include <climits>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace shardc::detail {

/// Point-to-point messages and collective_permute use fixed tags; they
/// travel on communicators of their own, so they never meet each other.
constexpr int kSendTag = 1;
constexpr int kPermuteTag = 2;
/// Tensors sent point to point carry a header [dtype, rank, dims...].
constexpr int64_t kMaxSentRank = 32;
constexpr int kHeaderLength = 2 + kMaxSentRank;

/// An MPI_Isend in flight: the tensor and header stay alive until both
/// requests complete.
struct PendingSend {
  int64_t dest = 0;
  Tensor tensor;
  int64_t header[kHeaderLength] = {};
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
};

/// Whether a collective moving `bytes` from this member first meets its
/// group (Impl::meet): below this a transfer takes about as long as the
/// usual spin anyway, and a barrier's latency would show.
inline bool meetsFirst(int64_t bytes) { return bytes >= (256 << 10); }
/// How long to poll the transfer of `bytes` without pause once the group
/// has met: shared memory moves several GB/s, so a spin this long means a
/// member stopped mid-transfer, which the sleeping wait then times out on.
inline double transferSpinSeconds(int64_t bytes) {
  constexpr double kSlowestBytesPerSecond = 200e6;
  return kSpinSeconds + double(bytes) / kSlowestBytesPerSecond;
}

inline const char *reductionName(Reduction kind) {
  return kind == Reduction::Sum ? "sum" : "max";
}

/// "devices [0, 1, 2, 3]"; long groups are cut short.
inline std::string describeGroup(llvm::ArrayRef<int64_t> group) {
  constexpr size_t kShown = 16;
  std::string out = "devices [";
  for (size_t i = 0; i < group.size() && i < kShown; ++i)
    out += (i ? ", " : "") + std::to_string(group[i]);
  if (group.size() > kShown)
    out += ", ... (" + std::to_string(group.size()) + " in all)";
  return out + "]";
}

/// How a reduction's errors and waits name it: "all_reduce (sum) over
/// devices [0, 1]", "reduce_scatter (sum, dim 0) over devices [0, 1]".
inline std::string describeAllReduce(Reduction kind,
                                     llvm::ArrayRef<int64_t> group) {
  return std::string("all_reduce (") + reductionName(kind) + ") over " +
         describeGroup(group);
}
inline std::string describeReduceScatter(Reduction kind, int64_t dim,
                                         llvm::ArrayRef<int64_t> group) {
  return "reduce_scatter (" + std::string(reductionName(kind)) + ", dim " +
         std::to_string(dim) + ") over " + describeGroup(group);
}

} // namespace shardc::detail

namespace shardc {

struct MpiCommunicator::Impl {
  mlir::MLIRContext *context = nullptr;
  MpiCommunicatorOptions options;
  int rank = 0, size = 1;
  /// Collectives over the whole world in rank order, and barrier.
  MPI_Comm world = MPI_COMM_NULL;
  /// send / receive / sendAsync.
  MPI_Comm pointToPoint = MPI_COMM_NULL;
  /// Every wait for other ranks goes through it.
  detail::MpiLiveness liveness;
  /// One communicator per group (members in group-index order).
  std::map<std::vector<int64_t>, MPI_Comm> groups;
  std::vector<std::shared_ptr<detail::PendingSend>> pending;
  /// Bytes of the started reductions not yet waited for
  /// (MpiPendingReduction.cpp): MPI moves them all at once, so the wait for
  /// one spins long enough for all of them.
  int64_t reductionBytesInFlight = 0;
  /// Staging buffers of the collectives (packed blocks, received chunks),
  /// kept between calls so a step's collectives reuse them: a collective
  /// uses slot 0 and, if it needs two at once, slot 1.
  std::vector<unsigned char> staging[2];
  unsigned char *stage(unsigned slot, size_t bytes) {
    if (staging[slot].size() < bytes)
      staging[slot].resize(bytes);
    return staging[slot].data();
  }

  mlir::LogicalResult fail(const llvm::Twine &message);
  /// fail() with MPI's error string unless `code` is MPI_SUCCESS.
  mlir::LogicalResult check(int code, const char *call) {
    if (code == MPI_SUCCESS)
      return mlir::success();
    return fail(llvm::Twine(call) + " failed: " + detail::mpiErrorString(code));
  }
  /// `n` as an MPI count (int), or failure.
  mlir::FailureOr<int> count(int64_t n, const char *what) {
    if (n < 0 || n > INT_MAX) {
      (void)fail(llvm::Twine(what) + " has " + llvm::Twine(n) +
                 " elements, more than one MPI message can carry (" +
                 llvm::Twine(INT_MAX) + ")");
      return mlir::failure();
    }
    return static_cast<int>(n);
  }
  /// A tensor for a collective's result: zero-filled only if the
  /// collective leaves some of it unwritten (`zero`), since zeroing a
  /// gradient-sized buffer costs a pass over it.
  mlir::FailureOr<Tensor> allocate(llvm::ArrayRef<int64_t> shape, DType dtype,
                                   bool zero = true) {
    llvm::Expected<Tensor> t =
        zero ? Tensor::allocate(shape, dtype)
             : Tensor::allocateUninitialized(shape, dtype);
    if (!t) {
      (void)fail(llvm::toString(t.takeError()));
      return mlir::failure();
    }
    return std::move(*t);
  }
  /// The communicator of `group` and this rank's index in it.
  mlir::FailureOr<MPI_Comm> commFor(llvm::ArrayRef<int64_t> group, int64_t &index);
  mlir::LogicalResult checkDim(const Tensor &t, int64_t dim, int64_t parts,
                         const char *what);

  /// What a reduce_scatter of `local` over `group` along `dim` starts
  /// from, whether it completes now (MpiCollectives.cpp) or later
  /// (MpiPendingReduction.cpp).
  struct ReduceScatterSetup {
    MPI_Comm comm;
    /// This member's block of the result, uninitialized: the collective
    /// writes all of it.
    Tensor out;
    /// Elements per block, as an MPI count.
    int count;
    /// `local` with block j of `dim` contiguous for member j: `local`
    /// itself when `dim` has nothing before it, else a packed copy in
    /// memory from `stage`.
    const unsigned char *send;
  };
  mlir::FailureOr<ReduceScatterSetup>
  setUpReduceScatter(const Tensor &local, llvm::ArrayRef<int64_t> group,
                     int64_t dim,
                     llvm::function_ref<unsigned char *(size_t)> stage);
  /// Completes the sends whose requests are done; keeps the others.
  mlir::LogicalResult reapSends(bool waitForAll);
  void freeAll();

  /// Waits for `requests`, the parts of the operation `what()` describes
  /// (MpiLiveness::wait). After options.timeoutSeconds it reports which
  /// ranks do not answer and ends the job. `call` names the MPI call in an
  /// error.
  /// `spinSeconds`: how long to test without pausing (pollForSeconds).
  mlir::LogicalResult wait(llvm::MutableArrayRef<MPI_Request> requests,
                           const char *call,
                           llvm::function_ref<std::string()> what,
                           MPI_Status *statuses = MPI_STATUSES_IGNORE,
                           double spinSeconds = detail::kSpinSeconds);
  /// check(startCode) for a nonblocking call that started `request`, then
  /// wait() for it.
  mlir::LogicalResult complete(int startCode, MPI_Request &request,
                               const char *call,
                               llvm::function_ref<std::string()> what,
                               MPI_Status *status = MPI_STATUS_IGNORE,
                               double spinSeconds = detail::kSpinSeconds) {
    if (failed(check(startCode, call)))
      return mlir::failure();
    return wait(request, call, what, status, spinSeconds);
  }
  /// Before a collective over `comm` that moves `bytes` from this member:
  /// if that is large, waits (sleeping between tests, as every wait does)
  /// until every member has reached the collective, so that the transfer
  /// itself may be polled without pause; returns how long to spin on it
  /// (pollForSeconds' spinSeconds): long enough for the bytes at the
  /// slowest transport expected, beyond which a member that stopped
  /// mid-transfer gets the usual sleeping wait and timeout.
  mlir::FailureOr<double> meet(MPI_Comm comm, int64_t bytes,
                               llvm::function_ref<std::string()> what);
};

} // namespace shardc

#endif // SHARDC_LIB_RUNTIME_MPICOMMUNICATORIMPL_H

//===- Communicator.h - how one device talks to the others ------*- C++ -*-===//
//
// The primitives of the engine API (docs/engine.md: device_id, num_devices,
// barrier, send, receive, send_async, all_gather, all_reduce, all_to_all)
// plus reduce_scatter and collective_permute, as one interface. The interpreter
// runs a partitioned program's collectives through it; hand-written SPMD code
// (examples/engine/) calls it directly. The backends of lib/Runtime implement
// it: shared memory between threads, or Open MPI between processes.
//
// Names follow this codebase's C++ style; docs/engine.md maps each to the
// engine API's Python names (device_id -> deviceId, ...).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_INTERPRETER_COMMUNICATOR_H
#define SHARDC_INTERPRETER_COMMUNICATOR_H

#include "shardc/Support/Tensor.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <future>
#include <memory>
#include <type_traits>
#include <utility>

namespace shardc {

/// How allReduce and reduceScatter combine the group's elements. The
/// transport has its own enum so that backends need no dialect: the
/// interpreter converts a collective op's reduction (toCommunicatorReduction
/// in Interpreter.h).
enum class Reduction : uint8_t { Sum, Max };

/// "sum" or "max".
llvm::StringRef stringifyReduction(Reduction reduction);

/// acc[i] = acc[i] (+ or max) x[i], the one arithmetic of every backend's
/// reductions, so that they agree bit for bit. Integers are exact (sums wrap
/// modulo 2^32 or 2^64, computed unsigned); for i1 (uint8_t 0/1) both sum
/// and max are `or` (the verifier rejects a sum of i1, so only max reaches
/// here from a program).
template <typename T>
void reduceElements(T *acc, const T *x, int64_t n, Reduction kind) {
  if constexpr (std::is_same_v<T, uint8_t>) {
    for (int64_t i = 0; i < n; ++i)
      acc[i] = acc[i] | x[i];
  } else if (kind == Reduction::Sum) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      for (int64_t i = 0; i < n; ++i)
        acc[i] = static_cast<T>(static_cast<U>(acc[i]) + static_cast<U>(x[i]));
    } else {
      for (int64_t i = 0; i < n; ++i)
        acc[i] += x[i];
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    // NaN wins, whichever side it is on, as in reduce_max's kernel: the max
    // of device blocks is the max of the whole (std::max(acc, NaN) would
    // keep acc, and a NaN on any device but the first would be lost).
    for (int64_t i = 0; i < n; ++i)
      if (x[i] > acc[i] || x[i] != x[i])
        acc[i] = x[i];
  } else {
    for (int64_t i = 0; i < n; ++i)
      acc[i] = std::max(acc[i], x[i]);
  }
}

/// A reduction started by Communicator::startAllReduce or
/// startReduceScatter and not yet waited for: the device computes on while
/// the transport moves its data, and waits only where the result is first
/// needed (gradient reductions overlapped with the backward pass).
class PendingCollective {
public:
  virtual ~PendingCollective();
  /// Lets the transport move data without waiting; the interpreter calls it
  /// between ops. Errors are kept for wait().
  virtual void progress() {}
  /// Whether the result is here, so that wait() returns at once (a trace
  /// ends the collective's span there). The default, false, lets the span
  /// run until wait().
  virtual bool isComplete() const { return false; }
  /// The collective's result, once every member has joined it; the same
  /// failures (and timeouts) as the blocking call.
  virtual mlir::FailureOr<Tensor> wait() = 0;
};

/// Collectives take a `group`: device ids in group-index order, containing
/// this device (the group-index order is the order blocks are concatenated
/// in). Every member of a group must make the same call with the same
/// arguments. Implementations return a tensor of the collective's local
/// result shape, or fail after emitting a diagnostic that names the device;
/// a failure on one device must make the others' pending calls fail too,
/// never hang.
class Communicator {
public:
  virtual ~Communicator();

  //===--- identity (seed: device_id, num_devices) ------------------------===//
  virtual int64_t deviceId() const = 0;
  virtual int64_t numDevices() const = 0;

  //===--- synchronization and point to point -----------------------------===//
  /// Returns when every device has called barrier() (seed: barrier).
  virtual mlir::LogicalResult barrier() = 0;
  /// Hands `tensor` to device `dest`; messages between a pair of devices
  /// arrive in the order they were sent (seed: send).
  virtual mlir::LogicalResult send(int64_t dest, const Tensor &tensor) = 0;
  /// The next tensor device `src` sent to this device (seed: receive).
  virtual mlir::FailureOr<Tensor> receive(int64_t src) = 0;
  /// send() that returns at once; the future is ready when `tensor` has been
  /// handed over (seed: send_async). The default sends synchronously.
  virtual std::future<mlir::LogicalResult> sendAsync(int64_t dest,
                                                     Tensor tensor);

  //===--- collectives over a group ---------------------------------------===//
  /// Concatenates the group's tensors along `dim`.
  virtual mlir::FailureOr<Tensor> allGather(const Tensor &local,
                                            llvm::ArrayRef<int64_t> group,
                                            int64_t dim) = 0;
  /// Elementwise reduction of the group's tensors, on every member.
  virtual mlir::FailureOr<Tensor> allReduce(const Tensor &local,
                                            llvm::ArrayRef<int64_t> group,
                                            Reduction kind) = 0;
  /// allReduce, then this member's block of `dim`.
  virtual mlir::FailureOr<Tensor> reduceScatter(const Tensor &local,
                                                llvm::ArrayRef<int64_t> group,
                                                int64_t dim,
                                                Reduction kind) = 0;
  /// Splits `splitDim` into one block per member, sends block i to member i
  /// and concatenates what arrives along `concatDim`.
  virtual mlir::FailureOr<Tensor> allToAll(const Tensor &local,
                                           llvm::ArrayRef<int64_t> group,
                                           int64_t splitDim,
                                           int64_t concatDim) = 0;
  /// Each (source, target) pair of group indices moves source's tensor to
  /// target; a member that is no target gets zeros.
  virtual mlir::FailureOr<Tensor>
  collectivePermute(const Tensor &local, llvm::ArrayRef<int64_t> group,
                    llvm::ArrayRef<std::pair<int64_t, int64_t>> pairs) = 0;

  //===--- reductions that complete later --------------------------------===//
  /// allReduce / reduceScatter started now and finished by the returned
  /// object's wait(); the pending call owns `local` until then. Members
  /// start the same calls in the same order, as with the blocking ones, and
  /// may start others (of any kind) before waiting. The result is the
  /// blocking call's, bit for bit. The default runs the blocking call at
  /// once: a backend without its own overlap is still correct.
  virtual mlir::FailureOr<std::unique_ptr<PendingCollective>>
  startAllReduce(Tensor local, llvm::ArrayRef<int64_t> group, Reduction kind);
  virtual mlir::FailureOr<std::unique_ptr<PendingCollective>>
  startReduceScatter(Tensor local, llvm::ArrayRef<int64_t> group, int64_t dim,
                     Reduction kind);

  //===--- The engine API's signatures: collectives over every device -----===//
  mlir::FailureOr<Tensor> allGather(const Tensor &local, int64_t dim = 0);
  mlir::FailureOr<Tensor> allReduce(const Tensor &local,
                                    Reduction kind = Reduction::Sum);
  mlir::FailureOr<Tensor>
  reduceScatter(const Tensor &local, int64_t dim = 0,
                Reduction kind = Reduction::Sum);
  mlir::FailureOr<Tensor> allToAll(const Tensor &local, int64_t dim = 0);

  /// Device ids 0 .. numDevices()-1.
  llvm::SmallVector<int64_t> everyDevice() const;
};

} // namespace shardc

#endif // SHARDC_INTERPRETER_COMMUNICATOR_H

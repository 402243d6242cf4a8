//===- SharedMemoryCommunicator.h - devices as threads ----------*- C++ -*-===//
//
// Private to lib/Runtime. The state the device threads of one run share
// (rendezvous per collective group, the barrier, a FIFO queue per ordered
// pair of devices, the abort state) and the Communicator each device talks
// through. One SharedMemoryWorld lives for one run: after an abort its
// half-finished rendezvous are simply dropped with it.
//
// Collectives are two-phase: members post a pointer to their tensor and wait
// until the whole group has posted; each then computes its own result from
// the others' buffers (read-only, combined in group-index order), and waits
// until every member has finished reading before it returns, so no buffer is
// freed while another thread reads it. Where the devices outnumber the
// cores, that second wait would cost each member a sleep and a wake-up, so
// members post copies of their tensors instead, into the sequenced slots
// started reductions use, and return once they have their result.
//
// A reduction may also be *started* (Communicator::startAllReduce): the
// member hands its tensor over to a slot of the group and computes on; the
// k-th reduction each member starts on a group meets the others' k-th, in
// slots apart from the blocking rendezvous, so the blocking collectives of
// the ops after it run meanwhile. The slot owns the tensors, so a member
// that has its result goes on without waiting for the others to read
// (SharedMemoryStartedReduction.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_RUNTIME_SHAREDMEMORYCOMMUNICATOR_H
#define SHARDC_LIB_RUNTIME_SHAREDMEMORYCOMMUNICATOR_H

#include "shardc/Interpreter/Communicator.h"
#include "shardc/Runtime/ThreadsBackend.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace shardc::detail {

/// Member `index`'s block of the reduction of `inputs` (group order) over
/// `dim` in `parts` blocks: the same elements added in the same order as
/// reducing everything and slicing (the simulator's reduce_scatter).
llvm::Expected<Tensor> reduceScatterBlock(llvm::ArrayRef<const Tensor *> inputs,
                                          int64_t dim, int64_t parts,
                                          int64_t index, Reduction kind);

/// What a collective call is, compared across the members of a group: they
/// must all make the same call.
struct CollectiveCall {
  std::string kind; // "all_gather", ...
  std::vector<int64_t> group;
  int64_t dim = -1, concatDim = -1;
  int reduction = -1;
  std::vector<std::pair<int64_t, int64_t>> pairs;
  std::vector<int64_t> shape;
  /// Members must agree on the dtype too: a reduction reads every member's
  /// elements as this one's type.
  DType dtype = DType::F32;

  bool operator==(const CollectiveCall &o) const {
    return kind == o.kind && group == o.group && dim == o.dim &&
           concatDim == o.concatDim && reduction == o.reduction &&
           pairs == o.pairs && shape == o.shape &&
           dtype == o.dtype;
  }
  /// "all_reduce over devices [0, 1] of [4, 8]".
  std::string describe() const;
};

class SharedMemoryWorld {
public:
  SharedMemoryWorld(mlir::MLIRContext *context, int64_t numDevices,
                    const ThreadsOptions &options);

  int64_t numDevices() const { return deviceCount; }
  mlir::MLIRContext *getContext() const { return context; }
  uint64_t maxTensorBytes() const { return options.maxTensorBytes; }
  bool overlapsReductions() const { return options.overlapReductions; }

  /// Device `device`'s program has returned; if it `failed`, the run aborts
  /// (the first failing device is remembered). Wakes every waiter.
  void finish(int64_t device, bool failed);
  /// The device that failed first, if any did.
  std::optional<int64_t> firstFailure();

  /// The shared-memory operations; each fails with a reason (and aborts
  /// the run, blaming `device` unless another device failed first).
  mlir::LogicalResult barrier(int64_t device, std::string &why);
  mlir::LogicalResult send(int64_t device, int64_t dest, Tensor tensor,
                           std::string &why);
  mlir::FailureOr<Tensor> receive(int64_t device, int64_t src,
                                  std::string &why);
  /// Runs one collective: posts `local`, waits for the group, lets
  /// `compute(inputs)` build this device's result from the group's tensors
  /// (in group-index order), waits until the group is done reading. Where
  /// the devices time-share the cores (copiesCollectives()), `local` is
  /// posted as a copy the group owns instead, and nobody waits for the
  /// others to read.
  bool copiesCollectives() const { return copyCollectives; }
  mlir::FailureOr<Tensor> collective(
      int64_t device, const CollectiveCall &call, const Tensor &local,
      llvm::function_ref<llvm::Expected<Tensor>(llvm::ArrayRef<const Tensor *>,
                                                int64_t groupIndex)>
          compute,
      std::string &why);

  /// Aborts the run on behalf of `device` (if nobody failed before).
  void abort(int64_t device);

  /// A started reduction as its member holds it: the sequence number on
  /// its group, and how many members have started it — read without the
  /// lock, as the interpreter asks between every two ops (the slot stays
  /// until this member has finished the reduction).
  struct StartedTicket {
    uint64_t seq;
    const std::atomic<int64_t> *arrived;
  };
  /// Hands `local` over as `device`'s part of its next started reduction
  /// on `call.group`. Fails if another member started a different call
  /// there.
  mlir::FailureOr<StartedTicket> startReduction(int64_t device,
                                                const CollectiveCall &call,
                                                Tensor local, std::string &why);
  /// Waits until every member has started reduction `seq` of `call.group`,
  /// then lets `compute` build this device's result from the members'
  /// tensors (group order). Waits as the blocking collectives do (abort,
  /// deadlock, timeout).
  mlir::FailureOr<Tensor> finishReduction(
      int64_t device, const CollectiveCall &call, uint64_t seq,
      llvm::function_ref<llvm::Expected<Tensor>(llvm::ArrayRef<const Tensor *>,
                                                int64_t groupIndex)>
          compute,
      std::string &why);

private:
  using Lock = std::unique_lock<std::mutex>;

  /// One rendezvous point per group (keyed by its sorted device set).
  struct Rendezvous {
    std::optional<CollectiveCall> call;
    std::vector<const Tensor *> inputs;
    int64_t arrived = 0, done = 0;
    uint64_t generation = 0;
  };
  /// One started reduction: the call and the tensors its members handed
  /// over (owned here until every member has computed its result).
  struct StartedSlot {
    CollectiveCall call;
    std::vector<Tensor> inputs;
    std::vector<bool> posted;
    /// Written under the lock; StartedTicket reads it without.
    std::atomic<int64_t> arrived{0};
    int64_t done = 0;
  };
  /// A group's started reductions (or copied collectives) not yet finished
  /// by every member, oldest first; slot k is sequence number firstSeq + k.
  struct StartedReductions {
    std::deque<StartedSlot> slots;
    uint64_t firstSeq = 0;
    std::map<int64_t, uint64_t> nextSeq; ///< per member
  };
  using SlotsByGroup = std::map<std::vector<int64_t>, StartedReductions>;
  /// The slot of `seq` on the group of `key`, or null if finished.
  static StartedSlot *findSlot(SlotsByGroup &groups,
                               const std::vector<int64_t> &key, uint64_t seq);
  /// Under the lock: hands `local` over to `device`'s next slot of
  /// `call.group` in `groups`; `complete` says whether it was the last
  /// member to. `verb` ("starts", "calls") words a mismatch.
  mlir::FailureOr<uint64_t> postToSlot(SlotsByGroup &groups, int64_t device,
                                       const CollectiveCall &call, Tensor local,
                                       llvm::StringRef verb, bool &complete,
                                       std::string &why);
  /// Under `lock`: waits until every member has posted to slot `seq`, then
  /// computes this device's result without the lock, and drops the slots
  /// every member is done with.
  mlir::FailureOr<Tensor> collectFromSlot(
      Lock &lock, SlotsByGroup &groups, int64_t device,
      const CollectiveCall &call, uint64_t seq,
      llvm::function_ref<llvm::Expected<Tensor>(llvm::ArrayRef<const Tensor *>,
                                                int64_t groupIndex)>
          compute,
      std::string &why);
  /// A blocking collective where devices time-share the cores: a copy of
  /// `local` goes into the group's next copied slot, so this device returns
  /// as soon as it has its result. There, the wait for the others to finish
  /// reading would cost a sleep and a wake-up of its own per collective,
  /// more than the copy (a memcpy of the tensor the collective reads anyway).
  mlir::FailureOr<Tensor> copiedCollective(
      int64_t device, const CollectiveCall &call, const Tensor &local,
      llvm::function_ref<llvm::Expected<Tensor>(llvm::ArrayRef<const Tensor *>,
                                                int64_t groupIndex)>
          compute,
      std::string &why);
  /// A blocked device: what it waits for and whether that has happened.
  struct Waiter {
    std::string what;
    std::function<bool()> ready;
  };

  void abortLocked(int64_t device);
  /// Blocks `device` until `ready()`; fails with a reason when the run is
  /// aborted, `broken()` names a reason the wait can never end, the
  /// timeout passes, or every device still running waits (a deadlock).
  mlir::LogicalResult waitFor(Lock &lock, int64_t device,
                              const std::string &what,
                              const std::function<bool()> &ready,
                              llvm::function_ref<std::string()> broken,
                              std::string &why);
  /// A reason the run can no longer progress: every unfinished device is
  /// blocked on something that has not happened. Empty if it can.
  std::string findDeadlock();
  std::string abortReason() const;
  /// "stopped in <what>: device N failed".
  std::string stopped(const std::string &what) const;
  std::string describeFinished(llvm::ArrayRef<int64_t> devices) const;

  mlir::MLIRContext *context;
  int64_t deviceCount;
  ThreadsOptions options;
  /// More devices than the cores this process may run on.
  bool copyCollectives;

  /// Wakes `devices` (a collective's group, a receiver): each blocked
  /// device sleeps on a condition variable of its own, so a rendezvous
  /// completing wakes its members only, not every waiting device (which,
  /// where devices time-share the cores, would each take a core just to
  /// find that nothing it waits for changed). Callable with or without the
  /// mutex held; without is cheaper (the woken device does not then block
  /// on the mutex at once).
  void wake(llvm::ArrayRef<int64_t> devices);
  /// Wakes every device: an abort, a device finishing (the others' waits
  /// may have become deadlocks), a barrier.
  void wakeAll();

  std::mutex mutex;
  std::unique_ptr<std::condition_variable[]> wakeups; ///< one per device
  bool aborted = false;
  std::optional<int64_t> failedFirst;
  std::vector<bool> finished;
  std::vector<std::optional<Waiter>> waiting;
  int64_t barrierArrived = 0;
  uint64_t barrierGeneration = 0;
  std::vector<std::deque<Tensor>> queues; // [src * n + dest]
  std::map<std::vector<int64_t>, Rendezvous> rendezvous;
  SlotsByGroup started;
  SlotsByGroup copied; ///< copiesCollectives()' slots
};

/// One device's view of a SharedMemoryWorld.
class SharedMemoryCommunicator : public Communicator {
public:
  SharedMemoryCommunicator(SharedMemoryWorld &world, int64_t device)
      : world(&world), device(device) {}

  int64_t deviceId() const override { return device; }
  int64_t numDevices() const override { return world->numDevices(); }

  mlir::LogicalResult barrier() override;
  mlir::LogicalResult send(int64_t dest, const Tensor &tensor) override;
  mlir::FailureOr<Tensor> receive(int64_t src) override;
  std::future<mlir::LogicalResult> sendAsync(int64_t dest,
                                             Tensor tensor) override;

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
  mlir::FailureOr<Tensor>
  collectivePermute(const Tensor &local, llvm::ArrayRef<int64_t> group,
                    llvm::ArrayRef<std::pair<int64_t, int64_t>> pairs) override;
  /// Started reductions complete where the interpreter first needs them
  /// (or earlier, between ops, once every member has started them), when
  /// ThreadsOptions::overlapReductions; otherwise at once.
  mlir::FailureOr<std::unique_ptr<PendingCollective>>
  startAllReduce(Tensor local, llvm::ArrayRef<int64_t> group,
                 Reduction kind) override;
  mlir::FailureOr<std::unique_ptr<PendingCollective>>
  startReduceScatter(Tensor local, llvm::ArrayRef<int64_t> group, int64_t dim,
                     Reduction kind) override;
  using Communicator::allGather;
  using Communicator::allReduce;
  using Communicator::allToAll;
  using Communicator::reduceScatter;

  /// Emits `message` as an error and aborts the run.
  mlir::LogicalResult fail(const llvm::Twine &message);

private:
  /// Starts `call` with `local`; `compute` (copied: it runs later) builds
  /// this member's result.
  mlir::FailureOr<std::unique_ptr<PendingCollective>>
  start(const CollectiveCall &call, Tensor local,
        std::function<llvm::Expected<Tensor>(llvm::ArrayRef<const Tensor *>,
                                             int64_t)>
            compute);
  /// Checks `group` (this device in it, ids in range, no repeats) and
  /// `dim`s of `local`; fills `call`.
  mlir::LogicalResult prepare(llvm::StringRef kind, const Tensor &local,
                              llvm::ArrayRef<int64_t> group,
                              CollectiveCall &call);
  mlir::LogicalResult checkDim(const CollectiveCall &call, llvm::StringRef what,
                               int64_t dim, int64_t rank, int64_t size,
                               int64_t parts);
  mlir::FailureOr<Tensor>
  run(const CollectiveCall &call, const Tensor &local,
      llvm::function_ref<llvm::Expected<Tensor>(llvm::ArrayRef<const Tensor *>,
                                                int64_t)>
          compute);

  SharedMemoryWorld *world;
  int64_t device;
};

} // namespace shardc::detail

#endif // SHARDC_LIB_RUNTIME_SHAREDMEMORYCOMMUNICATOR_H

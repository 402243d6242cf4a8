//===- SharedMemoryStartedReduction.cpp - reductions that complete later --===//
//
// The threads backend's Communicator::startAllReduce / startReduceScatter.
// A device that starts a reduction hands its tensor over to the group's
// next slot and computes on; the reduction completes on this device where
// the interpreter first needs the result, or earlier, between two ops,
// once every member has handed its tensor over (progress()). Either way
// the device folds the members' tensors in group order with the blocking
// path's arithmetic (reduceTensors, reduceScatterBlock), so the bits are
// the same. What it buys: a gradient's reduction no longer stops every
// device at a rendezvous in the middle of the backward pass, and it runs
// on the communication track of the trace beside the compute after it.
//
//===----------------------------------------------------------------------===//

#include "SharedMemoryCommunicator.h"

#include "shardc/Runtime/TensorBlocks.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;
using llvm::ArrayRef;

//===----------------------------------------------------------------------===//
// SharedMemoryWorld: the slots
//===----------------------------------------------------------------------===//

SharedMemoryWorld::StartedSlot *
SharedMemoryWorld::startedSlot(const std::vector<int64_t> &key, uint64_t seq) {
  auto it = started.find(key);
  if (it == started.end() || seq < it->second.firstSeq ||
      seq - it->second.firstSeq >= it->second.slots.size())
    return nullptr;
  return &it->second.slots[seq - it->second.firstSeq];
}

FailureOr<uint64_t>
SharedMemoryWorld::startReduction(int64_t device, const CollectiveCall &call,
                                  Tensor local, std::string &why) {
  Lock lock(mutex);
  std::string what = call.describe();
  if (aborted) {
    why = stopped(what);
    return failure();
  }
  std::vector<int64_t> key = call.group;
  llvm::sort(key);
  StartedReductions &group = started[key];
  uint64_t seq = group.nextSeq[device]++;
  int64_t n = static_cast<int64_t>(call.group.size());
  // Slots are made by the first member to start them, in sequence order,
  // and dropped only once every member has finished them: a member's next
  // sequence number is at most one past the last slot.
  if (seq - group.firstSeq == group.slots.size()) {
    StartedSlot &slot = group.slots.emplace_back();
    slot.call = call;
    slot.inputs.resize(n);
    slot.posted.assign(n, false);
  }
  StartedSlot &slot = group.slots[seq - group.firstSeq];
  if (!(slot.call == call)) {
    why = "mismatched collectives: this device starts " + what +
          " while another member of the group starts " + slot.call.describe();
    abortLocked(device);
    return failure();
  }
  int64_t index = llvm::find(call.group, device) - call.group.begin();
  slot.inputs[index] = std::move(local);
  slot.posted[index] = true;
  if (++slot.arrived == n) {
    lock.unlock();
    wake(call.group);
  }
  return seq;
}

bool SharedMemoryWorld::startedByAll(ArrayRef<int64_t> group, uint64_t seq) {
  std::vector<int64_t> key(group.begin(), group.end());
  llvm::sort(key);
  Lock lock(mutex);
  StartedSlot *slot = startedSlot(key, seq);
  return slot && slot->arrived == static_cast<int64_t>(slot->inputs.size());
}

FailureOr<Tensor> SharedMemoryWorld::finishReduction(
    int64_t device, const CollectiveCall &call, uint64_t seq,
    llvm::function_ref<llvm::Expected<Tensor>(ArrayRef<const Tensor *>,
                                              int64_t)>
        compute,
    std::string &why) {
  Lock lock(mutex);
  std::string what = call.describe();
  std::vector<int64_t> key = call.group;
  llvm::sort(key);
  int64_t n = static_cast<int64_t>(call.group.size());
  // The slot stays until this member is done with it: the lookup cannot
  // fail, and deque slots keep their address as others are appended.
  StartedSlot *slot = startedSlot(key, seq);
  if (!slot) {
    why = what + ": the reduction was not started on this device";
    abortLocked(device);
    return failure();
  }
  if (failed(waitFor(
          lock, device, what, [&] { return slot->arrived == n; },
          [&] { return describeFinished(call.group); }, why)))
    return failure();

  // The members' tensors are the slot's: read them without the lock.
  std::vector<const Tensor *> inputs;
  for (const Tensor &t : slot->inputs)
    inputs.push_back(&t);
  int64_t index = llvm::find(call.group, device) - call.group.begin();
  lock.unlock();
  llvm::Expected<Tensor> result = compute(inputs, index);
  lock.lock();
  ++slot->done;
  StartedReductions &group = started[key];
  while (!group.slots.empty() && group.slots.front().done == n) {
    group.slots.pop_front();
    ++group.firstSeq;
  }
  if (!result) {
    why = what + ": " + llvm::toString(result.takeError());
    abortLocked(device);
    return failure();
  }
  return std::move(*result);
}

//===----------------------------------------------------------------------===//
// SharedMemoryCommunicator: the pending object
//===----------------------------------------------------------------------===//

namespace {
class StartedReduction : public PendingCollective {
public:
  using Compute =
      std::function<llvm::Expected<Tensor>(ArrayRef<const Tensor *>, int64_t)>;
  StartedReduction(SharedMemoryWorld &world, SharedMemoryCommunicator &self,
                   CollectiveCall call, uint64_t seq, Compute compute)
      : world(world), self(self), call(std::move(call)), seq(seq),
        compute(std::move(compute)) {}

  void progress() override {
    if (!result && world.startedByAll(call.group, seq))
      result = finish();
  }
  FailureOr<Tensor> wait() override {
    if (!result)
      result = finish();
    return std::move(*result);
  }
  bool isComplete() const override { return result.has_value(); }

private:
  FailureOr<Tensor> finish() {
    std::string why;
    FailureOr<Tensor> out =
        world.finishReduction(self.deviceId(), call, seq, compute, why);
    if (failed(out)) {
      (void)self.fail(why);
      return failure();
    }
    return out;
  }

  SharedMemoryWorld &world;
  SharedMemoryCommunicator &self;
  CollectiveCall call;
  uint64_t seq;
  Compute compute;
  std::optional<FailureOr<Tensor>> result;
};
} // namespace

FailureOr<std::unique_ptr<PendingCollective>> SharedMemoryCommunicator::start(
    const CollectiveCall &call, Tensor local,
    std::function<llvm::Expected<Tensor>(ArrayRef<const Tensor *>, int64_t)>
        compute) {
  std::string why;
  FailureOr<uint64_t> seq =
      world->startReduction(device, call, std::move(local), why);
  if (failed(seq))
    return fail(why);
  return std::unique_ptr<PendingCollective>(std::make_unique<StartedReduction>(
      *world, *this, call, *seq, std::move(compute)));
}

FailureOr<std::unique_ptr<PendingCollective>>
SharedMemoryCommunicator::startAllReduce(Tensor local, ArrayRef<int64_t> group,
                                         Reduction kind) {
  if (!world->overlapsReductions())
    return Communicator::startAllReduce(std::move(local), group, kind);
  CollectiveCall call;
  call.reduction = static_cast<int>(kind);
  if (failed(prepare("all_reduce", local, group, call)))
    return failure();
  return start(
      call, std::move(local),
      [kind](ArrayRef<const Tensor *> in, int64_t) -> llvm::Expected<Tensor> {
        return reduceTensors(in, kind);
      });
}

FailureOr<std::unique_ptr<PendingCollective>>
SharedMemoryCommunicator::startReduceScatter(Tensor local,
                                             ArrayRef<int64_t> group,
                                             int64_t dim, Reduction kind) {
  if (!world->overlapsReductions())
    return Communicator::startReduceScatter(std::move(local), group, dim, kind);
  CollectiveCall call;
  call.dim = dim;
  call.reduction = static_cast<int>(kind);
  int64_t n = static_cast<int64_t>(group.size());
  if (failed(prepare("reduce_scatter", local, group, call)) ||
      failed(checkDim(call, "dim", dim, local.rank(),
                      dim >= 0 && dim < local.rank() ? local.dim(dim) : 0, n)))
    return failure();
  return start(call, std::move(local),
               [dim, n, kind](ArrayRef<const Tensor *> in, int64_t index) {
                 return reduceScatterBlock(in, dim, n, index, kind);
               });
}

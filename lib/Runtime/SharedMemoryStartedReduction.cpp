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
// The slots serve the blocking collectives' copies too, where devices
// outnumber the cores (SharedMemoryWorld::copiedCollective).
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
SharedMemoryWorld::findSlot(SlotsByGroup &groups,
                            const std::vector<int64_t> &key, uint64_t seq) {
  auto it = groups.find(key);
  if (it == groups.end() || seq < it->second.firstSeq ||
      seq - it->second.firstSeq >= it->second.slots.size())
    return nullptr;
  return &it->second.slots[seq - it->second.firstSeq];
}

FailureOr<uint64_t> SharedMemoryWorld::postToSlot(
    SlotsByGroup &groups, int64_t device, const CollectiveCall &call,
    Tensor local, StringRef verb, bool &complete, std::string &why) {
  std::vector<int64_t> key = call.group;
  llvm::sort(key);
  StartedReductions &group = groups[key];
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
    why = "mismatched collectives: this device " + verb.str() + " " +
          call.describe() + " while another member of the group " + verb.str() +
          " " + slot.call.describe();
    abortLocked(device);
    return failure();
  }
  int64_t index = llvm::find(call.group, device) - call.group.begin();
  slot.inputs[index] = std::move(local);
  slot.posted[index] = true;
  complete = ++slot.arrived == n;
  return seq;
}

FailureOr<Tensor> SharedMemoryWorld::collectFromSlot(
    Lock &lock, SlotsByGroup &groups, int64_t device,
    const CollectiveCall &call, uint64_t seq,
    llvm::function_ref<llvm::Expected<Tensor>(ArrayRef<const Tensor *>,
                                              int64_t)>
        compute,
    std::string &why) {
  std::string what = call.describe();
  std::vector<int64_t> key = call.group;
  llvm::sort(key);
  int64_t n = static_cast<int64_t>(call.group.size());
  // The slot stays until this member is done with it: the lookup cannot
  // fail, and deque slots keep their address as others are appended.
  StartedSlot *slot = findSlot(groups, key, seq);
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
  StartedReductions &group = groups[key];
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

FailureOr<SharedMemoryWorld::StartedTicket>
SharedMemoryWorld::startReduction(int64_t device, const CollectiveCall &call,
                                  Tensor local, std::string &why) {
  Lock lock(mutex);
  if (aborted) {
    why = stopped(call.describe());
    return failure();
  }
  bool complete = false;
  FailureOr<uint64_t> seq = postToSlot(started, device, call, std::move(local),
                                       "starts", complete, why);
  if (failed(seq))
    return failure();
  std::vector<int64_t> key = call.group;
  llvm::sort(key);
  StartedTicket ticket{*seq, &findSlot(started, key, *seq)->arrived};
  if (complete) {
    lock.unlock();
    wake(call.group);
  }
  return ticket;
}

FailureOr<Tensor> SharedMemoryWorld::finishReduction(
    int64_t device, const CollectiveCall &call, uint64_t seq,
    llvm::function_ref<llvm::Expected<Tensor>(ArrayRef<const Tensor *>,
                                              int64_t)>
        compute,
    std::string &why) {
  Lock lock(mutex);
  return collectFromSlot(lock, started, device, call, seq, compute, why);
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
                   CollectiveCall call, SharedMemoryWorld::StartedTicket ticket,
                   Compute compute)
      : world(world), self(self), call(std::move(call)), ticket(ticket),
        compute(std::move(compute)) {}

  void progress() override {
    // Asked between every two ops of the device's program, so without the
    // world's lock: taking it here would make every device contend for it
    // all through the backward pass.
    if (!result && ticket.arrived->load(std::memory_order_acquire) ==
                       static_cast<int64_t>(call.group.size()))
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
        world.finishReduction(self.deviceId(), call, ticket.seq, compute, why);
    if (failed(out)) {
      (void)self.fail(why);
      return failure();
    }
    return out;
  }

  SharedMemoryWorld &world;
  SharedMemoryCommunicator &self;
  CollectiveCall call;
  SharedMemoryWorld::StartedTicket ticket;
  Compute compute;
  std::optional<FailureOr<Tensor>> result;
};
} // namespace

FailureOr<std::unique_ptr<PendingCollective>> SharedMemoryCommunicator::start(
    const CollectiveCall &call, Tensor local,
    std::function<llvm::Expected<Tensor>(ArrayRef<const Tensor *>, int64_t)>
        compute) {
  std::string why;
  FailureOr<SharedMemoryWorld::StartedTicket> ticket =
      world->startReduction(device, call, std::move(local), why);
  if (failed(ticket))
    return fail(why);
  return std::unique_ptr<PendingCollective>(std::make_unique<StartedReduction>(
      *world, *this, call, *ticket, std::move(compute)));
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

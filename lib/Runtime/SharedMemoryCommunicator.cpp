//===- SharedMemoryCommunicator.cpp - devices as threads of a process -----===//
//
// One mutex guards the whole world: collectives are a handful per step
// against GEMMs of milliseconds, so a finer scheme would buy nothing and
// make the abort and deadlock checks (which look at every device) harder
// to get right. Each device sleeps on a condition variable of its own, and
// whoever completes what devices wait for wakes those devices only.
//
//===----------------------------------------------------------------------===//

#include "SharedMemoryCommunicator.h"

#include "shardc/Runtime/TensorBlocks.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include <sched.h>

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;
using llvm::ArrayRef;

static std::string formatList(ArrayRef<int64_t> values) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "[";
  llvm::interleaveComma(values, os);
  os << "]";
  return out;
}

std::string CollectiveCall::describe() const {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << kind << " over devices " << formatList(group) << " of "
     << formatShape(shape);
  if (dtype != DType::F32)
    os << " " << dtypeName(dtype);
  if (dim >= 0)
    os << (concatDim >= 0 ? " split_dim=" : " dim=") << dim;
  if (concatDim >= 0)
    os << " concat_dim=" << concatDim;
  if (reduction >= 0)
    os << " " << stringifyReduction(static_cast<Reduction>(reduction));
  if (!pairs.empty()) {
    os << " pairs=[";
    llvm::interleaveComma(pairs, os, [&](auto p) {
      os << "[" << p.first << ", " << p.second << "]";
    });
    os << "]";
  }
  return out;
}

//===----------------------------------------------------------------------===//
// SharedMemoryWorld
//===----------------------------------------------------------------------===//

/// The cores this process may run on (taskset narrows them).
static int64_t availableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    return std::max(CPU_COUNT(&set), 1);
  return std::max<int64_t>(std::thread::hardware_concurrency(), 1);
}

SharedMemoryWorld::SharedMemoryWorld(MLIRContext *context, int64_t numDevices,
                                     const ThreadsOptions &options)
    : context(context), deviceCount(numDevices), options(options),
      copyCollectives(numDevices > availableCores()),
      wakeups(std::make_unique<std::condition_variable[]>(numDevices)),
      finished(numDevices, false), waiting(numDevices),
      queues(numDevices * numDevices) {}

void SharedMemoryWorld::wake(ArrayRef<int64_t> devices) {
  // Only the device itself ever waits on its condition variable.
  for (int64_t d : devices)
    wakeups[d].notify_one();
}

void SharedMemoryWorld::wakeAll() {
  for (int64_t d = 0; d < deviceCount; ++d)
    wakeups[d].notify_one();
}

void SharedMemoryWorld::abortLocked(int64_t device) {
  if (!failedFirst)
    failedFirst = device;
  aborted = true;
  wakeAll();
}

void SharedMemoryWorld::abort(int64_t device) {
  Lock lock(mutex);
  abortLocked(device);
}

void SharedMemoryWorld::finish(int64_t device, bool failed) {
  Lock lock(mutex);
  finished[device] = true;
  if (failed)
    abortLocked(device);
  // Waiters re-check: a device they wait for may be the one that finished.
  wakeAll();
}

std::optional<int64_t> SharedMemoryWorld::firstFailure() {
  Lock lock(mutex);
  return failedFirst;
}

std::string SharedMemoryWorld::abortReason() const {
  if (failedFirst)
    return "device " + std::to_string(*failedFirst) + " failed";
  return "the run was aborted";
}

std::string SharedMemoryWorld::stopped(const std::string &what) const {
  // The same words whether the abort came before or during the wait, so
  // the report does not depend on scheduling.
  return "stopped in " + what + ": " + abortReason();
}

std::string SharedMemoryWorld::findDeadlock() {
  for (int64_t d = 0; d < deviceCount; ++d)
    if (!finished[d] && (!waiting[d] || waiting[d]->ready()))
      return ""; // d is running, or about to: it can still unblock others
  std::string out = "deadlock: every device still running waits:";
  for (int64_t d = 0; d < deviceCount; ++d)
    if (waiting[d])
      out += " device " + std::to_string(d) + " in " + waiting[d]->what + ";";
  out.pop_back();
  return out;
}

LogicalResult
SharedMemoryWorld::waitFor(Lock &lock, int64_t device, const std::string &what,
                           const std::function<bool()> &ready,
                           llvm::function_ref<std::string()> broken,
                           std::string &why) {
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (options.timeoutSeconds > 0)
    deadline = std::chrono::steady_clock::now() +
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(options.timeoutSeconds));
  waiting[device] = Waiter{what, ready};
  auto giveUp = [&](std::string reason, bool blameMe) {
    waiting[device].reset();
    why = std::move(reason);
    if (blameMe)
      abortLocked(device);
    return failure();
  };
  while (true) {
    // Readiness first: once a collective's group is complete, every member
    // must go on to read the others' buffers, abort or not.
    if (ready()) {
      waiting[device].reset();
      return success();
    }
    if (aborted)
      return giveUp(stopped(what), false);
    std::string reason = broken();
    if (reason.empty())
      reason = findDeadlock();
    if (!reason.empty())
      return giveUp(what + ": " + reason, true);
    if (!deadline) {
      wakeups[device].wait(lock);
      continue;
    }
    if (wakeups[device].wait_until(lock, *deadline) ==
            std::cv_status::timeout &&
        !ready()) {
      std::string seconds;
      llvm::raw_string_ostream(seconds)
          << llvm::format("%g", options.timeoutSeconds);
      return giveUp("timed out after " + seconds + " s waiting in " + what,
                    true);
    }
  }
}

std::string
SharedMemoryWorld::describeFinished(ArrayRef<int64_t> devices) const {
  for (int64_t d : devices)
    if (finished[d])
      return "device " + std::to_string(d) + " finished without joining";
  return "";
}

LogicalResult SharedMemoryWorld::barrier(int64_t device, std::string &why) {
  Lock lock(mutex);
  if (aborted) {
    why = stopped("barrier");
    return failure();
  }
  uint64_t generation = barrierGeneration;
  if (++barrierArrived == deviceCount) {
    barrierArrived = 0;
    ++barrierGeneration;
    wakeAll();
    return success();
  }
  SmallVector<int64_t> all =
      llvm::to_vector(llvm::seq<int64_t>(0, deviceCount));
  if (succeeded(waitFor(
          lock, device, "barrier",
          [&] { return barrierGeneration != generation; },
          [&] { return describeFinished(all); }, why)))
    return success();
  --barrierArrived;
  return failure();
}

LogicalResult SharedMemoryWorld::send(int64_t device, int64_t dest,
                                      Tensor tensor, std::string &why) {
  Lock lock(mutex);
  if (aborted) {
    why = stopped("send to device " + std::to_string(dest));
    return failure();
  }
  queues[device * deviceCount + dest].push_back(std::move(tensor));
  lock.unlock();
  wake(dest);
  return success();
}

FailureOr<Tensor> SharedMemoryWorld::receive(int64_t device, int64_t src,
                                             std::string &why) {
  Lock lock(mutex);
  std::string what = "receive from device " + std::to_string(src);
  if (aborted) {
    why = stopped(what);
    return failure();
  }
  std::deque<Tensor> &queue = queues[src * deviceCount + device];
  if (failed(waitFor(
          lock, device, what, [&] { return !queue.empty(); },
          [&]() -> std::string {
            if (!finished[src])
              return "";
            return "device " + std::to_string(src) +
                   " finished without sending";
          },
          why)))
    return failure();
  Tensor out = std::move(queue.front());
  queue.pop_front();
  return out;
}

FailureOr<Tensor> SharedMemoryWorld::collective(
    int64_t device, const CollectiveCall &call, const Tensor &local,
    llvm::function_ref<llvm::Expected<Tensor>(ArrayRef<const Tensor *>,
                                              int64_t)>
        compute,
    std::string &why) {
  if (copyCollectives)
    return copiedCollective(device, call, local, compute, why);
  Lock lock(mutex);
  std::string what = call.describe();
  if (aborted) {
    why = stopped(what);
    return failure();
  }
  std::vector<int64_t> key = call.group;
  llvm::sort(key);
  Rendezvous &r = rendezvous[key]; // std::map: references stay valid
  int64_t n = static_cast<int64_t>(call.group.size());
  int64_t index = llvm::find(call.group, device) - call.group.begin();
  if (r.arrived == 0) {
    r.call = call;
    r.inputs.assign(n, nullptr);
  } else if (!(*r.call == call)) {
    why = "mismatched collectives: this device calls " + what +
          " while another member of the group calls " + r.call->describe();
    abortLocked(device);
    return failure();
  }
  r.inputs[index] = &local;
  uint64_t generation = r.generation;
  // The last member to arrive wakes the others once it has let go of the
  // lock (below); the others wait.
  bool last = ++r.arrived == n;
  if (!last && failed(waitFor(
                   lock, device, what,
                   [&] { return r.generation == generation && r.arrived == n; },
                   [&] { return describeFinished(call.group); }, why))) {
    // Withdraw, so that nobody reads this buffer later.
    r.inputs[index] = nullptr;
    --r.arrived;
    return failure();
  }

  // Phase 2: read the others' buffers without the lock (they are const and
  // their owners wait below), then wait until everybody has read.
  std::vector<const Tensor *> inputs = r.inputs;
  lock.unlock();
  if (last)
    wake(call.group);
  llvm::Expected<Tensor> result = compute(inputs, index);
  lock.lock();
  if (++r.done == n) {
    r.arrived = 0;
    r.done = 0;
    r.call.reset();
    ++r.generation;
    lock.unlock();
    wake(call.group);
    lock.lock();
  } else {
    // No abort or timeout here: the others only compute, they will come.
    wakeups[device].wait(lock, [&] { return r.generation != generation; });
  }
  if (!result) {
    why = what + ": " + llvm::toString(result.takeError());
    abortLocked(device);
    return failure();
  }
  return std::move(*result);
}

FailureOr<Tensor> SharedMemoryWorld::copiedCollective(
    int64_t device, const CollectiveCall &call, const Tensor &local,
    llvm::function_ref<llvm::Expected<Tensor>(ArrayRef<const Tensor *>,
                                              int64_t)>
        compute,
    std::string &why) {
  // The copy is made before taking the lock; it fits wherever `local` did.
  llvm::Expected<Tensor> copy = Tensor::allocateUninitialized(
      local.shape(), local.dtype(), std::max(local.byteSize(), uint64_t(1)));
  if (!copy) {
    why = call.describe() + ": " + llvm::toString(copy.takeError());
    abort(device);
    return failure();
  }
  if (local.byteSize())
    std::memcpy(copy->rawData(), local.rawData(), local.byteSize());
  Lock lock(mutex);
  if (aborted) {
    why = stopped(call.describe());
    return failure();
  }
  bool complete = false;
  FailureOr<uint64_t> seq = postToSlot(copied, device, call, std::move(*copy),
                                       "calls", complete, why);
  if (failed(seq))
    return failure();
  if (complete) {
    lock.unlock();
    wake(call.group);
    lock.lock();
  }
  return collectFromSlot(lock, copied, device, call, *seq, compute, why);
}

//===----------------------------------------------------------------------===//
// SharedMemoryCommunicator
//===----------------------------------------------------------------------===//

LogicalResult SharedMemoryCommunicator::fail(const llvm::Twine &message) {
  world->abort(device);
  emitError(UnknownLoc::get(world->getContext())) << message;
  return failure();
}

LogicalResult SharedMemoryCommunicator::barrier() {
  std::string why;
  if (failed(world->barrier(device, why)))
    return fail(why);
  return success();
}

LogicalResult SharedMemoryCommunicator::send(int64_t dest,
                                             const Tensor &tensor) {
  return sendAsync(dest, tensor.clone()).get();
}

std::future<LogicalResult> SharedMemoryCommunicator::sendAsync(int64_t dest,
                                                               Tensor tensor) {
  // Queues are unbounded, so handing the tensor over never waits: the
  // future is ready on return.
  std::promise<LogicalResult> done;
  std::string why;
  if (dest < 0 || dest >= numDevices())
    done.set_value(fail("send to device " + std::to_string(dest) +
                        ", which is not among the " +
                        std::to_string(numDevices()) + " devices"));
  else if (failed(world->send(device, dest, std::move(tensor), why)))
    done.set_value(fail(why));
  else
    done.set_value(success());
  return done.get_future();
}

FailureOr<Tensor> SharedMemoryCommunicator::receive(int64_t src) {
  if (src < 0 || src >= numDevices())
    return fail("receive from device " + std::to_string(src) +
                ", which is not among the " + std::to_string(numDevices()) +
                " devices");
  std::string why;
  FailureOr<Tensor> t = world->receive(device, src, why);
  if (failed(t))
    return fail(why);
  return t;
}

LogicalResult SharedMemoryCommunicator::prepare(StringRef kind,
                                                const Tensor &local,
                                                ArrayRef<int64_t> group,
                                                CollectiveCall &call) {
  call.kind = kind.str();
  call.group.assign(group.begin(), group.end());
  call.shape.assign(local.shape().begin(), local.shape().end());
  call.dtype = local.dtype();
  std::vector<int64_t> sorted = call.group;
  llvm::sort(sorted);
  if (!llvm::is_contained(group, device) ||
      std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end() ||
      (!sorted.empty() &&
       (sorted.front() < 0 || sorted.back() >= numDevices())))
    return fail(kind + " over devices " + formatList(group) +
                ": the group must list distinct devices among the " +
                std::to_string(numDevices()) + " and include this one (" +
                std::to_string(device) + ")");
  return success();
}

LogicalResult SharedMemoryCommunicator::checkDim(const CollectiveCall &call,
                                                 StringRef what, int64_t dim,
                                                 int64_t rank, int64_t size,
                                                 int64_t parts) {
  if (dim < 0 || dim >= rank)
    return fail(call.describe() + ": " + what + " " + std::to_string(dim) +
                " is out of range");
  if (parts > 0 && size % parts != 0)
    return fail(call.describe() + ": dim " + std::to_string(dim) + " of size " +
                std::to_string(size) + " does not split into " +
                std::to_string(parts) + " blocks");
  return success();
}

FailureOr<Tensor> SharedMemoryCommunicator::run(
    const CollectiveCall &call, const Tensor &local,
    llvm::function_ref<llvm::Expected<Tensor>(ArrayRef<const Tensor *>,
                                              int64_t)>
        compute) {
  std::string why;
  FailureOr<Tensor> result =
      world->collective(device, call, local, compute, why);
  if (failed(result))
    return fail(why);
  return result;
}

FailureOr<Tensor> SharedMemoryCommunicator::allGather(const Tensor &local,
                                                      ArrayRef<int64_t> group,
                                                      int64_t dim) {
  CollectiveCall call;
  call.dim = dim;
  if (failed(prepare("all_gather", local, group, call)) ||
      failed(checkDim(call, "dim", dim, local.rank(), 0, 0)))
    return failure();
  uint64_t maxBytes = world->maxTensorBytes();
  return run(call, local, [&](ArrayRef<const Tensor *> in, int64_t) {
    return tryConcatenate(in, dim, maxBytes);
  });
}

FailureOr<Tensor> SharedMemoryCommunicator::allReduce(const Tensor &local,
                                                      ArrayRef<int64_t> group,
                                                      Reduction kind) {
  CollectiveCall call;
  call.reduction = static_cast<int>(kind);
  if (failed(prepare("all_reduce", local, group, call)))
    return failure();
  // reduceTensors adds in group-index order, as the simulator does.
  return run(
      call, local,
      [&](ArrayRef<const Tensor *> in, int64_t) -> llvm::Expected<Tensor> {
        return reduceTensors(in, kind);
      });
}

FailureOr<Tensor>
SharedMemoryCommunicator::reduceScatter(const Tensor &local,
                                        ArrayRef<int64_t> group, int64_t dim,
                                        Reduction kind) {
  CollectiveCall call;
  call.dim = dim;
  call.reduction = static_cast<int>(kind);
  int64_t n = static_cast<int64_t>(group.size());
  if (failed(prepare("reduce_scatter", local, group, call)) ||
      failed(checkDim(call, "dim", dim, local.rank(),
                      dim >= 0 && dim < local.rank() ? local.dim(dim) : 0, n)))
    return failure();
  return run(call, local, [&](ArrayRef<const Tensor *> in, int64_t index) {
    return reduceScatterBlock(in, dim, n, index, kind);
  });
}

llvm::Expected<Tensor>
shardc::detail::reduceScatterBlock(ArrayRef<const Tensor *> inputs, int64_t dim,
                                   int64_t parts, int64_t index,
                                   Reduction kind) {
  // Reducing this member's block of every input adds the same elements in
  // the same order as reducing everything and slicing (the simulator).
  std::vector<Tensor> blocks;
  SmallVector<const Tensor *> refs;
  for (const Tensor *t : inputs) {
    llvm::Expected<Tensor> b = trySliceBlock(*t, dim, parts, index);
    if (!b)
      return b.takeError();
    blocks.push_back(std::move(*b));
  }
  for (const Tensor &b : blocks)
    refs.push_back(&b);
  return reduceTensors(refs, kind);
}

FailureOr<Tensor> SharedMemoryCommunicator::allToAll(const Tensor &local,
                                                     ArrayRef<int64_t> group,
                                                     int64_t splitDim,
                                                     int64_t concatDim) {
  CollectiveCall call;
  call.dim = splitDim;
  call.concatDim = concatDim;
  int64_t n = static_cast<int64_t>(group.size());
  if (failed(prepare("all_to_all", local, group, call)) ||
      failed(checkDim(
          call, "split_dim", splitDim, local.rank(),
          splitDim >= 0 && splitDim < local.rank() ? local.dim(splitDim) : 0,
          n)) ||
      failed(checkDim(call, "concat_dim", concatDim, local.rank(), 0, 0)))
    return failure();
  uint64_t maxBytes = world->maxTensorBytes();
  // Block `index` of every member, concatenated in group order; a shared
  // split and concat dim is MPI_Alltoall.
  return run(call, local,
             [&](ArrayRef<const Tensor *> in,
                 int64_t index) -> llvm::Expected<Tensor> {
               std::vector<Tensor> pieces;
               SmallVector<const Tensor *> refs;
               for (const Tensor *t : in) {
                 llvm::Expected<Tensor> b =
                     trySliceBlock(*t, splitDim, n, index);
                 if (!b)
                   return b.takeError();
                 pieces.push_back(std::move(*b));
               }
               for (const Tensor &p : pieces)
                 refs.push_back(&p);
               return tryConcatenate(refs, concatDim, maxBytes);
             });
}

FailureOr<Tensor> SharedMemoryCommunicator::collectivePermute(
    const Tensor &local, ArrayRef<int64_t> group,
    ArrayRef<std::pair<int64_t, int64_t>> pairs) {
  CollectiveCall call;
  call.pairs.assign(pairs.begin(), pairs.end());
  if (failed(prepare("collective_permute", local, group, call)))
    return failure();
  int64_t n = static_cast<int64_t>(group.size());
  std::vector<bool> isSource(n, false), isTarget(n, false);
  for (auto [s, t] : pairs) {
    if (s < 0 || s >= n || t < 0 || t >= n || isSource[s] || isTarget[t])
      return fail(call.describe() + ": pair [" + std::to_string(s) + ", " +
                  std::to_string(t) +
                  "] is out of range or repeats a member of the group");
    isSource[s] = isTarget[t] = true;
  }
  return run(call, local,
             [&](ArrayRef<const Tensor *> in,
                 int64_t index) -> llvm::Expected<Tensor> {
               for (auto [s, t] : pairs)
                 if (t == index)
                   return in[s]->clone();
               // Not a target: zeros (allocate zero-fills).
               return Tensor::allocate(local.shape(), local.dtype(),
                                       ~uint64_t(0));
             });
}

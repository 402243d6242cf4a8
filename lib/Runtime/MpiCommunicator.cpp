//===- MpiCommunicator.cpp - the Communicator over Open MPI ---------------===//
//
// The set-up, the state's upkeep and point to point; the collectives are in
// MpiCollectives.cpp. Each collective maps to the nonblocking MPI collective
// of the group's
// communicator (ranks = group members in group-index order): all_gather ->
// MPI_Iallgather, all_to_all -> MPI_Ialltoall, collective_permute ->
// MPI_Isend/MPI_Irecv, reductions -> MPI_Ialltoallv + a local fold +
// MPI_Iallgatherv (the default, bit-identical to the simulator) or
// MPI_Iallreduce / MPI_Ireduce_scatter_block. MPI moves contiguous buffers,
// so a collective along a dim other than 0 packs its blocks contiguous first
// (or interleaves the received ones afterwards).
//
// Nothing waits inside MPI: Impl::wait polls every operation it started
// (MpiLiveness), answering other ranks' liveness queries meanwhile, until
// it completes or the timeout passes (see the header).
//
//===----------------------------------------------------------------------===//

#include "shardc/Runtime/MpiCommunicator.h"

#include "MpiCommunicatorImpl.h"
#include "MpiLiveness.h"
#include "MpiPacking.h"
#include "MpiSupport.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

using namespace mlir;
using namespace shardc;
using llvm::ArrayRef;
using llvm::SmallVector;
using namespace shardc::detail;

//===----------------------------------------------------------------------===//
// State and error handling (the state: MpiCommunicatorImpl.h)
//===----------------------------------------------------------------------===//

/// Reports a failure of `rank` and applies the abort policy. Free of the
/// communicator's state, so a send's future can report after it is gone.
static LogicalResult reportFailure(MLIRContext *context, bool abort, int rank,
                                   int size, const llvm::Twine &message) {
  std::string text = ("rank " + llvm::Twine(rank) + " of " + llvm::Twine(size) +
                      ": " + message)
                         .str();
  // Straight to stderr when aborting: a diagnostic handler might only
  // collect the message, and this process is about to end.
  if (abort)
    abortMpiJob(text);
  if (context)
    emitError(UnknownLoc::get(context)) << text;
  else
    llvm::errs() << ("shardc: error: " + text + "\n");
  return failure();
}

LogicalResult MpiCommunicator::Impl::fail(const llvm::Twine &message) {
  return reportFailure(context, options.abortOnFailure, rank, size, message);
}

void shardc::abortMpiJob(const llvm::Twine &message) {
  int rank = detail::worldRank();
  // One write: stderr is unbuffered, and mpirun's own report of the abort
  // (or another rank's) would otherwise land between the pieces of a line.
  std::string text = ("shardc: error: " + message + "\n" +
                      "shardc: error: rank " + llvm::Twine(rank) +
                      " is ending the MPI job (MPI_Abort with exit code 1) "
                      "so that no rank waits for it forever\n")
                         .str();
  llvm::errs() << text;
  llvm::errs().flush();
  if (rank >= 0)
    MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

LogicalResult
MpiCommunicator::Impl::wait(llvm::MutableArrayRef<MPI_Request> requests,
                            const char *call,
                            llvm::function_ref<std::string()> what,
                            MPI_Status *statuses, double spinSeconds) {
  detail::PollResult result = liveness.wait(
      requests, statuses, options.timeoutSeconds, what, spinSeconds);
  if (!result.timedOut)
    return check(result.code, call);
  // Whatever abortOnFailure says: the operation is still pending, and MPI
  // may yet write into buffers this rank cannot keep forever.
  bool speak = true;
  std::string report =
      liveness.diagnoseTimeout(what(), options.timeoutSeconds, speak);
  if (!speak)
    liveness.waitForLowerRankToReport(options.timeoutSeconds);
  abortMpiJob("rank " + llvm::Twine(rank) + " of " + llvm::Twine(size) + ": " +
              report);
}

FailureOr<double>
MpiCommunicator::Impl::meet(MPI_Comm comm, int64_t bytes,
                            llvm::function_ref<std::string()> what) {
  if (!detail::meetsFirst(bytes))
    return detail::kSpinSeconds;
  MPI_Request request;
  if (failed(complete(MPI_Ibarrier(comm, &request), request, "MPI_Ibarrier",
                      what)))
    return failure();
  return detail::transferSpinSeconds(bytes);
}

void MpiCommunicator::Impl::freeAll() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    return;
  // Errors here are reported by reapSends; freeing a communicator this
  // process created cannot fail in a way anyone could act on.
  (void)reapSends(/*waitForAll=*/true);
  for (auto &entry : groups)
    MPI_Comm_free(&entry.second);
  groups.clear();
  if (world != MPI_COMM_NULL)
    MPI_Comm_free(&world);
  if (pointToPoint != MPI_COMM_NULL)
    MPI_Comm_free(&pointToPoint);
  liveness.free();
}

LogicalResult MpiCommunicator::Impl::checkDim(const Tensor &t, int64_t dim,
                                              int64_t parts, const char *what) {
  if (dim < 0 || dim >= t.rank())
    return fail(llvm::Twine(what) + " dim " + llvm::Twine(dim) +
                " is out of range for " + t.describe());
  if (parts > 0 && t.dim(dim) % parts != 0)
    return fail(llvm::Twine(what) + " dim " + llvm::Twine(dim) + " of " +
                t.describe() + " is not divisible by the group size " +
                llvm::Twine(parts));
  return success();
}

FailureOr<MPI_Comm> MpiCommunicator::Impl::commFor(ArrayRef<int64_t> group,
                                                   int64_t &index) {
  auto bad = [&](const llvm::Twine &why) -> FailureOr<MPI_Comm> {
    (void)fail("invalid group: " + why);
    return failure();
  };
  if (group.empty())
    return bad("it is empty");
  SmallVector<int64_t> sorted(group);
  llvm::sort(sorted);
  if (sorted.front() < 0 || sorted.back() >= size)
    return bad(
        "device " +
        llvm::Twine(sorted.front() < 0 ? sorted.front() : sorted.back()) +
        " is not a rank of the job of " + llvm::Twine(size));
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    return bad("it lists a device twice");
  const int64_t *me = llvm::find(group, rank);
  if (me == group.end())
    return bad("it does not contain this device");
  index = me - group.begin();

  if (group.size() == 1)
    return MPI_COMM_SELF;
  bool isWorld = static_cast<int64_t>(group.size()) == size;
  for (size_t i = 0; isWorld && i < group.size(); ++i)
    isWorld = group[i] == static_cast<int64_t>(i);
  if (isWorld)
    return world;
  std::vector<int64_t> key(group.begin(), group.end());
  auto it = groups.find(key);
  if (it != groups.end())
    return it->second;

  // Not prepared: only the members create it. They all meet it first in
  // the same call (every member makes every call on its group), so a tag
  // derived from the group itself is the same on each of them.
  std::vector<int> ranks(group.begin(), group.end());
  uint64_t hash = 1469598103934665603ull;
  for (int r : ranks)
    hash = (hash ^ static_cast<uint64_t>(r)) * 1099511628211ull;
  int tag = static_cast<int>(hash % 30000) + 100;
  MPI_Group worldGroup, subGroup;
  MPI_Comm comm = MPI_COMM_NULL;
  if (failed(check(MPI_Comm_group(world, &worldGroup), "MPI_Comm_group")))
    return failure();
  int rc = MPI_Group_incl(worldGroup, static_cast<int>(ranks.size()),
                          ranks.data(), &subGroup);
  // Freeing a group handle cannot fail on a valid handle; the result of
  // the call that matters is checked.
  MPI_Group_free(&worldGroup);
  if (failed(check(rc, "MPI_Group_incl")))
    return failure();
  rc = MPI_Comm_create_group(world, subGroup, tag, &comm);
  MPI_Group_free(&subGroup);
  if (failed(check(rc, "MPI_Comm_create_group")) ||
      failed(check(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN),
                   "MPI_Comm_set_errhandler")))
    return failure();
  groups.emplace(std::move(key), comm);
  return comm;
}

LogicalResult MpiCommunicator::Impl::reapSends(bool waitForAll) {
  LogicalResult result = success();
  std::vector<std::shared_ptr<PendingSend>> keep;
  for (std::shared_ptr<PendingSend> &p : pending) {
    if (waitForAll) {
      int64_t dest = p->dest;
      if (failed(wait(p->requests, "MPI_Waitall (send)", [&] {
            return "send to device " + std::to_string(dest) +
                   " (waiting for device " + std::to_string(dest) +
                   " to receive it)";
          })))
        result = failure();
      continue;
    }
    int done = 0;
    if (failed(check(MPI_Testall(2, p->requests, &done, MPI_STATUSES_IGNORE),
                     "MPI_Testall (send)")))
      result = failure();
    else if (!done)
      keep.push_back(std::move(p));
  }
  pending = std::move(keep);
  return result;
}

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

MpiCommunicator::MpiCommunicator(std::unique_ptr<Impl> impl)
    : impl(std::move(impl)) {}

MpiCommunicator::~MpiCommunicator() { impl->freeAll(); }

LogicalResult MpiCommunicator::fail(const llvm::Twine &message) {
  return impl->fail(message);
}

FailureOr<std::unique_ptr<MpiCommunicator>>
MpiCommunicator::create(MLIRContext *context, MpiCommunicatorOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->context = context;
  impl->options = options;
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    // No rank to name and nothing to abort: this is a setup error.
    impl->options.abortOnFailure = false;
    (void)impl->fail("MPI is not initialized (the tool must call "
                     "initializeMpi before creating an mpi backend)");
    return failure();
  }
  if (failed(impl->check(MPI_Comm_rank(MPI_COMM_WORLD, &impl->rank),
                         "MPI_Comm_rank")) ||
      failed(impl->check(MPI_Comm_size(MPI_COMM_WORLD, &impl->size),
                         "MPI_Comm_size")))
    return failure();
  if (!(options.timeoutSeconds >= 0)) {
    // The same options on every rank: all fail here alike.
    impl->options.abortOnFailure = false;
    (void)impl->fail("the MPI timeout must be a number of seconds >= 0 (0 "
                     "waits forever), got " +
                     detail::formatSeconds(options.timeoutSeconds));
    return failure();
  }
  // Duplicates keep shardc's traffic apart from any other MPI user of the
  // process; errors on them are returned, never fatal inside MPI.
  for (MPI_Comm *comm : {&impl->world, &impl->pointToPoint}) {
    if (failed(
            impl->check(MPI_Comm_dup(MPI_COMM_WORLD, comm), "MPI_Comm_dup")) ||
        failed(impl->check(MPI_Comm_set_errhandler(*comm, MPI_ERRORS_RETURN),
                           "MPI_Comm_set_errhandler")))
      return failure();
  }
  if (failed(
          impl->check(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN),
                      "MPI_Comm_set_errhandler")) ||
      failed(impl->check(impl->liveness.create(), "MPI_Comm_dup (liveness)")))
    return failure();
  return std::unique_ptr<MpiCommunicator>(new MpiCommunicator(std::move(impl)));
}

LogicalResult MpiCommunicator::prepareGroups(const MeshTopology &topology) {
  if (topology.numDevices() != impl->size)
    return impl->fail("the mesh has " + llvm::Twine(topology.numDevices()) +
                      " devices but the MPI job has " +
                      llvm::Twine(impl->size) + " ranks");
  // Every subset of axes in mesh order: 2^k - 1 splits. Meshes with more
  // axes than this prepare none and create groups on first use.
  int64_t k = topology.numAxes();
  if (k > 10)
    return success();
  for (uint64_t mask = 1; mask < (uint64_t(1) << k); ++mask) {
    SmallVector<llvm::StringRef> axes;
    for (int64_t a = 0; a < k; ++a)
      if (mask & (uint64_t(1) << a))
        axes.push_back(topology.axisNames()[a]);
    // Same on every rank, so every rank skips the same splits.
    if (topology.groupSize(axes) <= 1)
      continue;
    SmallVector<int64_t> group = topology.groupOf(impl->rank, axes);
    int color = static_cast<int>(*llvm::min_element(group));
    int key = static_cast<int>(topology.groupIndex(impl->rank, axes));
    MPI_Comm comm = MPI_COMM_NULL;
    if (failed(impl->check(MPI_Comm_split(impl->world, color, key, &comm),
                           "MPI_Comm_split")))
      return failure();
    std::vector<int64_t> groupKey(group.begin(), group.end());
    bool isWorld = static_cast<int64_t>(group.size()) == impl->size;
    for (size_t i = 0; isWorld && i < group.size(); ++i)
      isWorld = group[i] == static_cast<int64_t>(i);
    if (isWorld || impl->groups.count(groupKey)) {
      MPI_Comm_free(&comm);
      continue;
    }
    if (failed(impl->check(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN),
                           "MPI_Comm_set_errhandler")))
      return failure();
    impl->groups.emplace(std::move(groupKey), comm);
  }
  return success();
}

int64_t MpiCommunicator::deviceId() const { return impl->rank; }
int64_t MpiCommunicator::numDevices() const { return impl->size; }

//===----------------------------------------------------------------------===//
// Synchronization and point to point
//===----------------------------------------------------------------------===//

LogicalResult MpiCommunicator::barrier() {
  if (failed(impl->reapSends(/*waitForAll=*/false)))
    return failure();
  MPI_Request request;
  return impl->complete(MPI_Ibarrier(impl->world, &request), request,
                        "MPI_Ibarrier", [] { return std::string("barrier"); });
}

std::future<LogicalResult> MpiCommunicator::sendAsync(int64_t dest,
                                                      Tensor tensor) {
  auto failedFuture = [] {
    std::promise<LogicalResult> p;
    p.set_value(failure());
    return p.get_future();
  };
  if (dest < 0 || dest >= impl->size) {
    (void)impl->fail("cannot send to device " + llvm::Twine(dest) +
                     ": the job has " + llvm::Twine(impl->size) + " ranks");
    return failedFuture();
  }
  if (tensor.rank() > kMaxSentRank) {
    (void)impl->fail("cannot send a tensor of rank " +
                     llvm::Twine(tensor.rank()) + " (at most " +
                     llvm::Twine(kMaxSentRank) + ")");
    return failedFuture();
  }
  FailureOr<int> n = impl->count(tensor.numElements(), "the sent tensor");
  if (failed(n) || failed(impl->reapSends(/*waitForAll=*/false)))
    return failedFuture();

  auto p = std::make_shared<PendingSend>();
  p->dest = dest;
  p->tensor = std::move(tensor);
  p->header[0] = static_cast<int64_t>(p->tensor.dtype());
  p->header[1] = p->tensor.rank();
  for (int64_t d = 0; d < p->tensor.rank(); ++d)
    p->header[2 + d] = p->tensor.dim(d);
  // Header and data go to the same (rank, tag), so MPI's non-overtaking
  // rule delivers them, and successive tensors, in the order sent.
  int rc = MPI_Isend(p->header, static_cast<int>(2 + p->tensor.rank()),
                     MPI_INT64_T, static_cast<int>(dest), kSendTag,
                     impl->pointToPoint, &p->requests[0]);
  if (rc == MPI_SUCCESS)
    rc = MPI_Isend(p->tensor.rawData(), *n, mpiDatatype(p->tensor.dtype()), static_cast<int>(dest),
                   kSendTag, impl->pointToPoint, &p->requests[1]);
  if (failed(impl->check(rc, "MPI_Isend")))
    return failedFuture();
  impl->pending.push_back(p);
  // The future may outlive the communicator: it keeps what it reports with.
  MLIRContext *context = impl->context;
  bool abort = impl->options.abortOnFailure;
  int rank = impl->rank, size = impl->size;
  double timeout = impl->options.timeoutSeconds;
  return std::async(std::launch::deferred, [=]() -> LogicalResult {
    // Polled like every wait, but without answering liveness queries: the
    // communicator may be gone by now.
    detail::PollResult result = detail::pollForSeconds(
        p->requests, MPI_STATUSES_IGNORE, timeout, [] {});
    if (result.timedOut)
      return reportFailure(context, /*abort=*/true, rank, size,
                           "timed out after " + detail::formatSeconds(timeout) +
                               " s waiting for device " + llvm::Twine(p->dest) +
                               " to receive the tensor sent to it");
    if (result.code == MPI_SUCCESS)
      return success();
    return reportFailure(context, abort, rank, size,
                         "MPI_Waitall (send) failed: " +
                             detail::mpiErrorString(result.code));
  });
}

LogicalResult MpiCommunicator::send(int64_t dest, const Tensor &tensor) {
  // Buffered like a mailbox: the copy is in flight once this returns, so
  // two devices may send to each other before either receives.
  std::future<LogicalResult> started = sendAsync(dest, tensor.clone());
  if (started.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
    return started.get(); // only an early failure is ready at once
  return success();
}

FailureOr<Tensor> MpiCommunicator::receive(int64_t src) {
  if (src < 0 || src >= impl->size) {
    (void)impl->fail("cannot receive from device " + llvm::Twine(src) +
                     ": the job has " + llvm::Twine(impl->size) + " ranks");
    return failure();
  }
  auto what = [&] { return "receive from device " + std::to_string(src); };
  int64_t header[kHeaderLength];
  MPI_Status status;
  MPI_Request request;
  if (failed(impl->complete(MPI_Irecv(header, kHeaderLength, MPI_INT64_T,
                                      static_cast<int>(src), kSendTag,
                                      impl->pointToPoint, &request),
                            request, "MPI_Irecv (header)", what, &status)))
    return failure();
  int got = 0;
  if (failed(impl->check(MPI_Get_count(&status, MPI_INT64_T, &got),
                         "MPI_Get_count")))
    return failure();
  if (got < 2 || header[1] != got - 2 || header[0] < 0 ||
      header[0] > static_cast<int64_t>(DType::I64)) {
    (void)impl->fail("malformed tensor header from device " + llvm::Twine(src));
    return failure();
  }
  FailureOr<Tensor> out = impl->allocate(
      ArrayRef<int64_t>(header + 2, header[1]), static_cast<DType>(header[0]));
  if (failed(out))
    return failure();
  FailureOr<int> n = impl->count(out->numElements(), "the received tensor");
  if (failed(n) ||
      failed(impl->complete(MPI_Irecv(out->rawData(), *n, mpiDatatype(out->dtype()),
                                      static_cast<int>(src), kSendTag,
                                      impl->pointToPoint, &request),
                            request, "MPI_Irecv (data)", what)))
    return failure();
  return out;
}

FailureOr<std::vector<Tensor>>
MpiCommunicator::gatherFromEveryRank(Tensor local) {
  if (local.rank() > kMaxSentRank) {
    (void)impl->fail("cannot gather a tensor of rank " +
                     llvm::Twine(local.rank()));
    return failure();
  }
  int n = impl->size;
  int64_t header[kHeaderLength] = {};
  header[0] = static_cast<int64_t>(local.dtype());
  header[1] = local.rank();
  for (int64_t d = 0; d < local.rank(); ++d)
    header[2 + d] = local.dim(d);
  std::vector<int64_t> headers(int64_t(n) * kHeaderLength);
  auto what = [] {
    return std::string("gatherBlocks (every device's block to every rank)");
  };
  MPI_Request request;
  if (failed(impl->complete(MPI_Iallgather(header, kHeaderLength, MPI_INT64_T,
                                           headers.data(), kHeaderLength,
                                           MPI_INT64_T, impl->world, &request),
                            request, "MPI_Iallgather (shapes)", what)))
    return failure();
  std::vector<Tensor> out(n);
  std::vector<int> counts(n), starts(n);
  int64_t total = 0;
  for (int r = 0; r < n; ++r) {
    const int64_t *h = headers.data() + int64_t(r) * kHeaderLength;
    if (h[1] < 0 || h[1] > kMaxSentRank || h[0] < 0 ||
        h[0] > static_cast<int64_t>(DType::I64)) {
      (void)impl->fail("malformed shape from rank " + llvm::Twine(r));
      return failure();
    }
    if (r == impl->rank) {
      out[r] = std::move(local);
    } else {
      FailureOr<Tensor> t = impl->allocate(ArrayRef<int64_t>(h + 2, h[1]),
                                           static_cast<DType>(h[0]));
      if (failed(t))
        return failure();
      out[r] = std::move(*t);
    }
    // Bytes, not elements: each rank's block carries its own dtype.
    FailureOr<int> c = impl->count(out[r].byteSize(), "a gathered block");
    FailureOr<int> s = impl->count(total, "the gathered blocks together");
    if (failed(c) || failed(s))
      return failure();
    counts[r] = *c;
    starts[r] = *s;
    total += *c;
  }
  std::vector<unsigned char> all(total);
  if (failed(impl->complete(
          MPI_Iallgatherv(out[impl->rank].rawData(), counts[impl->rank],
                          MPI_BYTE, all.data(), counts.data(), starts.data(),
                          MPI_BYTE, impl->world, &request),
          request, "MPI_Iallgatherv", what)))
    return failure();
  for (int r = 0; r < n; ++r)
    if (r != impl->rank && counts[r])
      std::memcpy(out[r].rawData(), all.data() + starts[r], counts[r]);
  return out;
}

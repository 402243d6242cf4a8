//===- MpiCommunicator.cpp - the Communicator over Open MPI ---------------===//
//
// Each collective maps to the nonblocking MPI collective of the group's
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

namespace {

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

const char *reductionName(Reduction kind) {
  return kind == Reduction::Sum ? "sum" : "max";
}

/// "devices [0, 1, 2, 3]"; long groups are cut short.
std::string describeGroup(ArrayRef<int64_t> group) {
  constexpr size_t kShown = 16;
  std::string out = "devices [";
  for (size_t i = 0; i < group.size() && i < kShown; ++i)
    out += (i ? ", " : "") + std::to_string(group[i]);
  if (group.size() > kShown)
    out += ", ... (" + std::to_string(group.size()) + " in all)";
  return out + "]";
}

} // namespace

//===----------------------------------------------------------------------===//
// State and error handling
//===----------------------------------------------------------------------===//

struct MpiCommunicator::Impl {
  MLIRContext *context = nullptr;
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
  std::vector<std::shared_ptr<PendingSend>> pending;

  LogicalResult fail(const llvm::Twine &message);
  /// fail() with MPI's error string unless `code` is MPI_SUCCESS.
  LogicalResult check(int code, const char *call) {
    if (code == MPI_SUCCESS)
      return success();
    return fail(llvm::Twine(call) + " failed: " + detail::mpiErrorString(code));
  }
  /// `n` as an MPI count (int), or failure.
  FailureOr<int> count(int64_t n, const char *what) {
    if (n < 0 || n > INT_MAX) {
      (void)fail(llvm::Twine(what) + " has " + llvm::Twine(n) +
                 " elements, more than one MPI message can carry (" +
                 llvm::Twine(INT_MAX) + ")");
      return failure();
    }
    return static_cast<int>(n);
  }
  FailureOr<Tensor> allocate(ArrayRef<int64_t> shape, DType dtype) {
    llvm::Expected<Tensor> t = Tensor::allocate(shape, dtype);
    if (!t) {
      (void)fail(llvm::toString(t.takeError()));
      return failure();
    }
    return std::move(*t);
  }
  /// The communicator of `group` and this rank's index in it.
  FailureOr<MPI_Comm> commFor(ArrayRef<int64_t> group, int64_t &index);
  LogicalResult checkDim(const Tensor &t, int64_t dim, int64_t parts,
                         const char *what);
  /// Completes the sends whose requests are done; keeps the others.
  LogicalResult reapSends(bool waitForAll);
  void freeAll();

  /// Waits for `requests`, the parts of the operation `what()` describes
  /// (MpiLiveness::wait). After options.timeoutSeconds it reports which
  /// ranks do not answer and ends the job. `call` names the MPI call in an
  /// error.
  LogicalResult wait(llvm::MutableArrayRef<MPI_Request> requests,
                     const char *call, llvm::function_ref<std::string()> what,
                     MPI_Status *statuses = MPI_STATUSES_IGNORE);
  /// check(startCode) for a nonblocking call that started `request`, then
  /// wait() for it.
  LogicalResult complete(int startCode, MPI_Request &request, const char *call,
                         llvm::function_ref<std::string()> what,
                         MPI_Status *status = MPI_STATUS_IGNORE) {
    if (failed(check(startCode, call)))
      return failure();
    return wait(request, call, what, status);
  }
};

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

LogicalResult MpiCommunicator::Impl::wait(
    llvm::MutableArrayRef<MPI_Request> requests, const char *call,
    llvm::function_ref<std::string()> what, MPI_Status *statuses) {
  detail::PollResult result =
      liveness.wait(requests, statuses, options.timeoutSeconds, what);
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

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

FailureOr<Tensor> MpiCommunicator::allGather(const Tensor &local,
                                             ArrayRef<int64_t> group,
                                             int64_t dim) {
  int64_t me;
  FailureOr<MPI_Comm> comm = impl->commFor(group, me);
  if (failed(comm) || failed(impl->checkDim(local, dim, 0, "all_gather")))
    return failure();
  int64_t n = group.size();
  SmallVector<int64_t> shape(local.shape());
  shape[dim] *= n;
  FailureOr<Tensor> out = impl->allocate(shape, local.dtype());
  if (failed(out))
    return failure();
  FailureOr<int> count = impl->count(local.numElements(), "all_gather");
  if (failed(count))
    return failure();
  // Blocks arrive one after another; that is the result only for dim 0
  // (or when everything before `dim` has size 1).
  BlockLayout l = layoutOf(shape, dim, n);
  std::vector<unsigned char> staging(l.outer == 1 ? 0 : out->byteSize());
  unsigned char *into = l.outer == 1 ? out->rawData() : staging.data();
  MPI_Datatype type = mpiDatatype(local.dtype());
  MPI_Request request;
  if (failed(
          impl->complete(MPI_Iallgather(local.rawData(), *count, type, into,
                                        *count, type, *comm, &request),
                         request, "MPI_Iallgather", [&] {
                           return "all_gather (dim " + std::to_string(dim) +
                                  ") over " + describeGroup(group);
                         })))
    return failure();
  if (l.outer != 1)
    unpackBlocks(staging.data(), l, local.elementByteWidth(), out->rawData());
  return out;
}

FailureOr<Tensor> MpiCommunicator::allReduce(const Tensor &local,
                                             ArrayRef<int64_t> group,
                                             Reduction kind) {
  int64_t me;
  FailureOr<MPI_Comm> comm = impl->commFor(group, me);
  if (failed(comm))
    return failure();
  FailureOr<Tensor> out = impl->allocate(local.shape(), local.dtype());
  if (failed(out))
    return failure();
  FailureOr<int> count = impl->count(local.numElements(), "all_reduce");
  if (failed(count))
    return failure();
  auto what = [&] {
    return std::string("all_reduce (") + reductionName(kind) + ") over " +
           describeGroup(group);
  };
  MPI_Datatype type = mpiDatatype(local.dtype());
  unsigned width = local.elementByteWidth();
  MPI_Request request;
  if (!impl->options.deterministicReductions) {
    if (failed(impl->complete(MPI_Iallreduce(local.rawData(), out->rawData(),
                                             *count, type, mpiOp(kind), *comm,
                                             &request),
                              request, "MPI_Iallreduce", what)))
      return failure();
    return out;
  }

  // Member j reduces chunk j of the elements: it receives that chunk from
  // every member (in group order), folds them, and shares its result.
  int n = static_cast<int>(group.size());
  std::vector<int> starts(n + 1), counts(n);
  for (int j = 0; j <= n; ++j)
    starts[j] = static_cast<int>(int64_t(*count) * j / n);
  for (int j = 0; j < n; ++j)
    counts[j] = starts[j + 1] - starts[j];
  int mine = counts[me];
  std::vector<int> recvCounts(n, mine), recvStarts(n);
  for (int i = 0; i < n; ++i)
    recvStarts[i] = i * mine;
  std::vector<unsigned char> chunks(int64_t(mine) * n * width);
  if (failed(impl->complete(
          MPI_Ialltoallv(local.rawData(), counts.data(), starts.data(), type,
                         chunks.data(), recvCounts.data(), recvStarts.data(),
                         type, *comm, &request),
          request, "MPI_Ialltoallv", what)))
    return failure();
  foldInOrder(chunks.data(), n, mine, local.dtype(), kind,
              out->rawData() + int64_t(starts[me]) * width);
  if (failed(impl->complete(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL,
                                            out->rawData(), counts.data(),
                                            starts.data(), type, *comm,
                                            &request),
                            request, "MPI_Iallgatherv", what)))
    return failure();
  return out;
}

FailureOr<Tensor> MpiCommunicator::reduceScatter(const Tensor &local,
                                                 ArrayRef<int64_t> group,
                                                 int64_t dim,
                                                 Reduction kind) {
  int64_t me;
  FailureOr<MPI_Comm> comm = impl->commFor(group, me);
  int64_t n = group.size();
  if (failed(comm) || failed(impl->checkDim(local, dim, n, "reduce_scatter")))
    return failure();
  SmallVector<int64_t> blockShape(local.shape());
  blockShape[dim] /= n;
  FailureOr<Tensor> out = impl->allocate(blockShape, local.dtype());
  if (failed(out))
    return failure();
  FailureOr<int> count =
      impl->count(out->numElements(), "reduce_scatter block");
  if (failed(count))
    return failure();
  // Block j of `dim` goes to member j: make each block contiguous.
  BlockLayout l = layoutOf(local.shape(), dim, n);
  unsigned width = local.elementByteWidth();
  MPI_Datatype type = mpiDatatype(local.dtype());
  std::vector<unsigned char> packed(l.outer == 1 ? 0 : local.byteSize());
  if (l.outer != 1)
    packBlocks(local.rawData(), l, width, packed.data());
  const unsigned char *send = l.outer == 1 ? local.rawData() : packed.data();

  auto what = [&] {
    return "reduce_scatter (" + std::string(reductionName(kind)) + ", dim " +
           std::to_string(dim) + ") over " + describeGroup(group);
  };
  MPI_Request request;
  if (!impl->options.deterministicReductions) {
    if (failed(impl->complete(
            MPI_Ireduce_scatter_block(send, out->rawData(), *count, type,
                                      mpiOp(kind), *comm, &request),
            request, "MPI_Ireduce_scatter_block", what)))
      return failure();
    return out;
  }
  std::vector<unsigned char> blocks(out->byteSize() * n);
  if (failed(
          impl->complete(MPI_Ialltoall(send, *count, type, blocks.data(),
                                       *count, type, *comm, &request),
                         request, "MPI_Ialltoall", what)))
    return failure();
  foldInOrder(blocks.data(), n, *count, local.dtype(), kind, out->rawData());
  return out;
}

FailureOr<Tensor> MpiCommunicator::allToAll(const Tensor &local,
                                            ArrayRef<int64_t> group,
                                            int64_t splitDim,
                                            int64_t concatDim) {
  int64_t me;
  FailureOr<MPI_Comm> comm = impl->commFor(group, me);
  int64_t n = group.size();
  if (failed(comm) ||
      failed(impl->checkDim(local, splitDim, n, "all_to_all split")) ||
      failed(impl->checkDim(local, concatDim, 0, "all_to_all concat")))
    return failure();
  SmallVector<int64_t> shape(local.shape());
  shape[splitDim] /= n;
  FailureOr<int> count = impl->count(
      local.numElements() / std::max<int64_t>(n, 1), "all_to_all block");
  if (failed(count))
    return failure();
  shape[concatDim] *= n;
  FailureOr<Tensor> out = impl->allocate(shape, local.dtype());
  if (failed(out))
    return failure();

  unsigned width = local.elementByteWidth();
  MPI_Datatype type = mpiDatatype(local.dtype());
  BlockLayout split = layoutOf(local.shape(), splitDim, n);
  std::vector<unsigned char> packed(split.outer == 1 ? 0 : local.byteSize());
  if (split.outer != 1)
    packBlocks(local.rawData(), split, width, packed.data());
  BlockLayout concat = layoutOf(shape, concatDim, n);
  std::vector<unsigned char> received(concat.outer == 1 ? 0 : out->byteSize());
  MPI_Request request;
  if (failed(impl->complete(
          MPI_Ialltoall(split.outer == 1 ? local.rawData() : packed.data(),
                        *count, type,
                        concat.outer == 1 ? out->rawData() : received.data(),
                        *count, type, *comm, &request),
          request, "MPI_Ialltoall", [&] {
            return "all_to_all (split dim " + std::to_string(splitDim) +
                   ", concat dim " + std::to_string(concatDim) + ") over " +
                   describeGroup(group);
          })))
    return failure();
  if (concat.outer != 1)
    unpackBlocks(received.data(), concat, width, out->rawData());
  return out;
}

FailureOr<Tensor> MpiCommunicator::collectivePermute(
    const Tensor &local, ArrayRef<int64_t> group,
    ArrayRef<std::pair<int64_t, int64_t>> pairs) {
  int64_t me;
  FailureOr<MPI_Comm> comm = impl->commFor(group, me);
  if (failed(comm))
    return failure();
  int64_t n = group.size();
  std::vector<bool> isSource(n), isTarget(n);
  for (auto [s, t] : pairs) {
    if (s < 0 || s >= n || t < 0 || t >= n || isSource[s] || isTarget[t]) {
      (void)impl->fail("collective_permute pair [" + llvm::Twine(s) + ", " +
                       llvm::Twine(t) +
                       "] is out of range or repeats a member of the "
                       "group of size " +
                       llvm::Twine(n));
      return failure();
    }
    isSource[s] = isTarget[t] = true;
  }
  // Zero-filled: what a member that is no target gets.
  FailureOr<Tensor> out = impl->allocate(local.shape(), local.dtype());
  if (failed(out))
    return failure();
  FailureOr<int> count = impl->count(local.numElements(), "collective_permute");
  if (failed(count))
    return failure();
  SmallVector<MPI_Request, 2> requests;
  for (auto [s, t] : pairs) {
    if (s == me && t == me) {
      std::memcpy(out->rawData(), local.rawData(), local.byteSize());
      continue;
    }
    int rc = MPI_SUCCESS;
    if (s == me) {
      rc = MPI_Isend(local.rawData(), *count, mpiDatatype(local.dtype()),
                     static_cast<int>(t),
                     kPermuteTag, *comm, &requests.emplace_back());
    } else if (t == me) {
      rc = MPI_Irecv(out->rawData(), *count, mpiDatatype(local.dtype()),
                     static_cast<int>(s),
                     kPermuteTag, *comm, &requests.emplace_back());
    }
    if (failed(impl->check(rc, s == me ? "MPI_Isend" : "MPI_Irecv")))
      return failure();
  }
  if (failed(impl->wait(requests, "MPI_Waitall (collective_permute)", [&] {
        return "collective_permute over " + describeGroup(group);
      })))
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

//===- MpiPendingReduction.cpp - reductions that complete later ----------===//
//
// MpiCommunicator::startAllReduce / startReduceScatter: a reduction as MPI
// nonblocking calls that are all started at once, in program order. MPI
// matches the collectives of a communicator in the order each rank starts
// them, so no call may be started later at a point that depends on timing
// (such as "when the previous stage completed"): a reduction is therefore
// one data call, with the local fold after it, rather than the blocking
// path's exchange-fold-share. The deterministic all_reduce gathers every
// member's whole tensor (MPI_Iallgather) and folds them in group order,
// the blocking path's arithmetic element for element, so the bits are the
// same; for two members it moves as many bytes as the exchange and share.
//
// progress(), called by the interpreter between ops, tests the calls so
// the transfer moves while the backward pass computes; wait() finishes
// them through Impl::wait (liveness answers, timeout). A large transfer is
// started together with an MPI_Ibarrier: wait() sleeps on the barrier
// until every member has reached the reduction and only then polls the
// transfer without pause (Impl::meet's rule).
//
//===----------------------------------------------------------------------===//

#include "MpiCommunicatorImpl.h"
#include "MpiPacking.h"

#include "shardc/Support/HalfFloat.h"

#include <functional>

using namespace mlir;
using namespace shardc;
using llvm::ArrayRef;
using llvm::SmallVector;
using namespace shardc::detail;

namespace {
class MpiPendingReduction : public PendingCollective {
public:
  MpiPendingReduction(MpiCommunicator::Impl &impl, std::string what,
                      Tensor local, Tensor out)
      : local(std::move(local)), out(std::move(out)), impl(impl),
        what(std::move(what)) {}
  MpiPendingReduction(const MpiPendingReduction &) = delete;
  MpiPendingReduction &operator=(const MpiPendingReduction &) = delete;

  ~MpiPendingReduction() override {
    // Dropped before its wait (the run failed elsewhere): MPI may still
    // write into the buffers, so finish the calls first (bounded by the
    // timeout, which ends the job).
    if (started && !broken)
      (void)finishCalls();
  }

  /// Staging memory that lives as long as the call (uninitialized).
  unsigned char *stage(size_t bytes) {
    buffers.emplace_back(new unsigned char[std::max<size_t>(bytes, 1)]);
    return buffers.back().get();
  }

  /// Starts the data call `startTransfer` names (`call`), preceded by the
  /// group's meeting if it moves `bytes` that count as large; `fold` runs
  /// once it has completed.
  LogicalResult begin(MPI_Comm comm, int64_t bytes, const char *call,
                      llvm::function_ref<int(MPI_Request *)> startTransfer,
                      std::function<void()> fold) {
    this->call = call;
    this->fold = std::move(fold);
    if (meetsFirst(bytes)) {
      meets = true;
      if (failed(impl.check(MPI_Ibarrier(comm, &requests[0]), "MPI_Ibarrier")))
        return failure();
    }
    if (failed(impl.check(startTransfer(&requests[1]), call))) {
      // The barrier, if any, must still complete before this returns.
      (void)impl.wait(requests[0], "MPI_Ibarrier", [&] { return what; });
      return failure();
    }
    started = true;
    this->bytes = bytes;
    impl.reductionBytesInFlight += bytes;
    return success();
  }

  void progress() override {
    if (!started || broken)
      return;
    int done = 0;
    if (failed(impl.check(MPI_Testall(2, requests, &done, MPI_STATUSES_IGNORE),
                          call)))
      broken = true;
  }

  FailureOr<Tensor> wait() override {
    if (broken || failed(finishCalls()))
      return failure();
    if (fold)
      fold();
    return std::move(out);
  }

  Tensor local, out;

private:
  LogicalResult finishCalls() {
    auto describe = [&] { return what; };
    // Once the group has met, every reduction in flight shares the
    // transport with this one (Open MPI moves their fragments in turn):
    // the pause-free poll lasts as long as all of them take.
    double spinSeconds =
        meets ? transferSpinSeconds(impl.reductionBytesInFlight) : kSpinSeconds;
    started = false;
    impl.reductionBytesInFlight -= bytes;
    if (failed(impl.wait(requests[0], "MPI_Ibarrier", describe)) ||
        failed(impl.wait(requests[1], call, describe, MPI_STATUS_IGNORE,
                         spinSeconds))) {
      broken = true;
      return failure();
    }
    return success();
  }

  MpiCommunicator::Impl &impl;
  std::string what;
  const char *call = "";
  /// The meeting (MPI_REQUEST_NULL if none) and the transfer.
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  std::function<void()> fold;
  bool started = false, broken = false;
  /// Started with a meeting (a large transfer); its size.
  bool meets = false;
  int64_t bytes = 0;
  SmallVector<std::unique_ptr<unsigned char[]>, 2> buffers;
};
} // namespace

FailureOr<std::unique_ptr<PendingCollective>>
MpiCommunicator::startAllReduce(Tensor local, ArrayRef<int64_t> group,
                                Reduction kind) {
  if (!impl->options.overlapReductions)
    return Communicator::startAllReduce(std::move(local), group, kind);
  int64_t me;
  FailureOr<MPI_Comm> comm = impl->commFor(group, me);
  if (failed(comm))
    return failure();
  FailureOr<Tensor> out =
      impl->allocate(local.shape(), local.dtype(), /*zero=*/false);
  if (failed(out))
    return failure();
  FailureOr<int> count = impl->count(local.numElements(), "all_reduce");
  if (failed(count))
    return failure();
  int64_t bytes = local.byteSize();
  DType dtype = local.dtype();
  auto pending = std::make_unique<MpiPendingReduction>(
      *impl, describeAllReduce(kind, group), std::move(local), std::move(*out));
  MpiPendingReduction &p = *pending;
  MPI_Datatype type = mpiDatatype(dtype);
  MPI_Comm c = *comm;
  int n = *count;
  LogicalResult begun = failure();
  // MPI has no half-float sum: halves always fold here, in group order.
  if (!impl->options.deterministicReductions && !isHalfDType(dtype)) {
    begun = p.begin(
        c, bytes, "MPI_Iallreduce",
        [&](MPI_Request *r) {
          return MPI_Iallreduce(p.local.rawData(), p.out.rawData(), n, type,
                                mpiOp(kind), c, r);
        },
        nullptr);
  } else {
    int64_t members = group.size();
    unsigned char *gathered = p.stage(size_t(bytes) * members);
    begun = p.begin(
        c, bytes, "MPI_Iallgather",
        [&](MPI_Request *r) {
          return MPI_Iallgather(p.local.rawData(), n, type, gathered, n, type,
                                c, r);
        },
        [&p, gathered, members, n, kind] {
          foldInOrder(gathered, members, n, p.out.dtype(), kind,
                      p.out.rawData());
        });
  }
  if (failed(begun))
    return failure();
  return std::unique_ptr<PendingCollective>(std::move(pending));
}

FailureOr<std::unique_ptr<PendingCollective>>
MpiCommunicator::startReduceScatter(Tensor local, ArrayRef<int64_t> group,
                                    int64_t dim, Reduction kind) {
  if (!impl->options.overlapReductions)
    return Communicator::startReduceScatter(std::move(local), group, dim, kind);
  int64_t bytes = local.byteSize();
  DType dtype = local.dtype();
  int64_t n = group.size();
  auto pending = std::make_unique<MpiPendingReduction>(
      *impl, describeReduceScatter(kind, dim, group), std::move(local),
      Tensor());
  MpiPendingReduction &p = *pending;
  // Packed blocks live as long as the call.
  FailureOr<Impl::ReduceScatterSetup> setup = impl->setUpReduceScatter(
      p.local, group, dim, [&](size_t size) { return p.stage(size); });
  if (failed(setup))
    return failure();
  p.out = std::move(setup->out);
  const unsigned char *send = setup->send;
  MPI_Datatype type = mpiDatatype(dtype);
  MPI_Comm c = setup->comm;
  int blockCount = setup->count;
  LogicalResult begun = failure();
  // MPI has no half-float sum: halves always fold here, in group order.
  if (!impl->options.deterministicReductions && !isHalfDType(dtype)) {
    begun = p.begin(
        c, bytes, "MPI_Ireduce_scatter_block",
        [&](MPI_Request *r) {
          return MPI_Ireduce_scatter_block(send, p.out.rawData(), blockCount,
                                           type, mpiOp(kind), c, r);
        },
        nullptr);
  } else {
    // Member j receives block j of every member and folds them in group
    // order (MpiCommunicator::reduceScatter).
    unsigned char *blocks = p.stage(size_t(p.out.byteSize()) * n);
    begun = p.begin(
        c, bytes, "MPI_Ialltoall",
        [&](MPI_Request *r) {
          return MPI_Ialltoall(send, blockCount, type, blocks, blockCount, type,
                               c, r);
        },
        [&p, blocks, n, blockCount, kind] {
          foldInOrder(blocks, n, blockCount, p.out.dtype(), kind,
                      p.out.rawData());
        });
  }
  if (failed(begun))
    return failure();
  return std::unique_ptr<PendingCollective>(std::move(pending));
}

//===- MpiCollectives.cpp - MpiCommunicator's collectives -----------------===//
//
// Each collective maps to the nonblocking MPI collective of the group's
// communicator (MpiCommunicator.cpp's header comment gives the mapping);
// a collective along a dim other than 0 packs its blocks contiguous first
// (MpiPacking.h).
//
//===----------------------------------------------------------------------===//

#include "MpiCommunicatorImpl.h"
#include "MpiPacking.h"

#include "shardc/Support/HalfFloat.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>

using namespace mlir;
using namespace shardc;
using llvm::ArrayRef;
using llvm::SmallVector;
using namespace shardc::detail;

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
  FailureOr<Tensor> out = impl->allocate(shape, local.dtype(), /*zero=*/false);
  if (failed(out))
    return failure();
  FailureOr<int> count = impl->count(local.numElements(), "all_gather");
  if (failed(count))
    return failure();
  // Blocks arrive one after another; that is the result only for dim 0
  // (or when everything before `dim` has size 1).
  BlockLayout l = layoutOf(shape, dim, n);
  unsigned char *into =
      l.outer == 1 ? out->rawData() : impl->stage(0, out->byteSize());
  MPI_Datatype type = mpiDatatype(local.dtype());
  auto what = [&] {
    return "all_gather (dim " + std::to_string(dim) + ") over " +
           describeGroup(group);
  };
  FailureOr<double> spin = impl->meet(*comm, out->byteSize(), what);
  if (failed(spin))
    return failure();
  MPI_Request request;
  if (failed(impl->complete(MPI_Iallgather(local.rawData(), *count, type, into,
                                           *count, type, *comm, &request),
                            request, "MPI_Iallgather", what, MPI_STATUS_IGNORE,
                            *spin)))
    return failure();
  if (l.outer != 1)
    unpackBlocks(into, l, local.elementByteWidth(), out->rawData());
  return out;
}

FailureOr<Tensor> MpiCommunicator::allReduce(const Tensor &local,
                                             ArrayRef<int64_t> group,
                                             Reduction kind) {
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
  auto what = [&] { return describeAllReduce(kind, group); };
  MPI_Datatype type = mpiDatatype(local.dtype());
  unsigned width = local.elementByteWidth();
  FailureOr<double> spin = impl->meet(*comm, local.byteSize(), what);
  if (failed(spin))
    return failure();
  MPI_Request request;
  // MPI has no half-float sum: halves always fold here, in group order.
  if (!impl->options.deterministicReductions && !isHalfDType(local.dtype())) {
    if (failed(impl->complete(
            MPI_Iallreduce(local.rawData(), out->rawData(), *count, type,
                           mpiOp(kind), *comm, &request),
            request, "MPI_Iallreduce", what, MPI_STATUS_IGNORE, *spin)))
      return failure();
    return out;
  }

  // Member j reduces chunk j of the elements: it receives that chunk from
  // every other member, folds them with its own chunk (read in place: MPI
  // would copy it into the staging buffer) in group order, and shares its
  // result.
  int n = static_cast<int>(group.size());
  std::vector<int> starts(n + 1), counts(n);
  for (int j = 0; j <= n; ++j)
    starts[j] = static_cast<int>(int64_t(*count) * j / n);
  for (int j = 0; j < n; ++j)
    counts[j] = starts[j + 1] - starts[j];
  int mine = counts[me];
  std::vector<int> sendCounts(counts), recvCounts(n, mine), recvStarts(n);
  sendCounts[me] = recvCounts[me] = 0;
  for (int i = 0; i < n; ++i)
    recvStarts[i] = i * mine;
  unsigned char *chunks = impl->stage(0, int64_t(mine) * n * width);
  if (failed(impl->complete(
          MPI_Ialltoallv(local.rawData(), sendCounts.data(), starts.data(),
                         type, chunks, recvCounts.data(), recvStarts.data(),
                         type, *comm, &request),
          request, "MPI_Ialltoallv", what, MPI_STATUS_IGNORE, *spin)))
    return failure();
  SmallVector<const unsigned char *, 8> parts;
  for (int i = 0; i < n; ++i)
    parts.push_back(i == me ? local.rawData() + int64_t(starts[me]) * width
                            : chunks + int64_t(recvStarts[i]) * width);
  foldInOrder(parts, mine, local.dtype(), kind,
              out->rawData() + int64_t(starts[me]) * width);
  if (failed(impl->complete(
          MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out->rawData(),
                          counts.data(), starts.data(), type, *comm, &request),
          request, "MPI_Iallgatherv", what, MPI_STATUS_IGNORE, *spin)))
    return failure();
  return out;
}

FailureOr<MpiCommunicator::Impl::ReduceScatterSetup>
MpiCommunicator::Impl::setUpReduceScatter(
    const Tensor &local, ArrayRef<int64_t> group, int64_t dim,
    llvm::function_ref<unsigned char *(size_t)> stage) {
  int64_t me;
  FailureOr<MPI_Comm> comm = commFor(group, me);
  int64_t n = group.size();
  if (failed(comm) || failed(checkDim(local, dim, n, "reduce_scatter")))
    return failure();
  SmallVector<int64_t> blockShape(local.shape());
  blockShape[dim] /= n;
  FailureOr<Tensor> out = allocate(blockShape, local.dtype(), /*zero=*/false);
  if (failed(out))
    return failure();
  FailureOr<int> count =
      this->count(out->numElements(), "reduce_scatter block");
  if (failed(count))
    return failure();
  // Block j of `dim` goes to member j: make each block contiguous.
  BlockLayout l = layoutOf(local.shape(), dim, n);
  const unsigned char *send = local.rawData();
  if (l.outer != 1) {
    unsigned char *packed = stage(local.byteSize());
    packBlocks(local.rawData(), l, local.elementByteWidth(), packed);
    send = packed;
  }
  return ReduceScatterSetup{*comm, std::move(*out), *count, send};
}

FailureOr<Tensor> MpiCommunicator::reduceScatter(const Tensor &local,
                                                 ArrayRef<int64_t> group,
                                                 int64_t dim, Reduction kind) {
  FailureOr<Impl::ReduceScatterSetup> setup = impl->setUpReduceScatter(
      local, group, dim, [&](size_t bytes) { return impl->stage(0, bytes); });
  if (failed(setup))
    return failure();
  auto [comm, out, count, send] = std::move(*setup);
  int64_t n = group.size();
  MPI_Datatype type = mpiDatatype(local.dtype());
  auto what = [&] { return describeReduceScatter(kind, dim, group); };
  FailureOr<double> spin = impl->meet(comm, local.byteSize(), what);
  if (failed(spin))
    return failure();
  MPI_Request request;
  // MPI has no half-float sum: halves always fold here, in group order.
  if (!impl->options.deterministicReductions && !isHalfDType(local.dtype())) {
    if (failed(impl->complete(
            MPI_Ireduce_scatter_block(send, out.rawData(), count, type,
                                      mpiOp(kind), comm, &request),
            request, "MPI_Ireduce_scatter_block", what, MPI_STATUS_IGNORE,
            *spin)))
      return failure();
    return std::move(out);
  }
  unsigned char *blocks = impl->stage(1, out.byteSize() * n);
  if (failed(impl->complete(
          MPI_Ialltoall(send, count, type, blocks, count, type, comm, &request),
          request, "MPI_Ialltoall", what, MPI_STATUS_IGNORE, *spin)))
    return failure();
  foldInOrder(blocks, n, count, local.dtype(), kind, out.rawData());
  return std::move(out);
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
  FailureOr<Tensor> out = impl->allocate(shape, local.dtype(), /*zero=*/false);
  if (failed(out))
    return failure();

  unsigned width = local.elementByteWidth();
  MPI_Datatype type = mpiDatatype(local.dtype());
  BlockLayout split = layoutOf(local.shape(), splitDim, n);
  const unsigned char *send = local.rawData();
  if (split.outer != 1) {
    unsigned char *packed = impl->stage(0, local.byteSize());
    packBlocks(local.rawData(), split, width, packed);
    send = packed;
  }
  BlockLayout concat = layoutOf(shape, concatDim, n);
  unsigned char *received =
      concat.outer == 1 ? out->rawData() : impl->stage(1, out->byteSize());
  auto what = [&] {
    return "all_to_all (split dim " + std::to_string(splitDim) +
           ", concat dim " + std::to_string(concatDim) + ") over " +
           describeGroup(group);
  };
  FailureOr<double> spin = impl->meet(*comm, local.byteSize(), what);
  if (failed(spin))
    return failure();
  MPI_Request request;
  if (failed(impl->complete(MPI_Ialltoall(send, *count, type, received, *count,
                                          type, *comm, &request),
                            request, "MPI_Ialltoall", what, MPI_STATUS_IGNORE,
                            *spin)))
    return failure();
  if (concat.outer != 1)
    unpackBlocks(received, concat, width, out->rawData());
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


//===- MpiPacking.cpp - laying tensors out for MPI's contiguous buffers ---===//

#include "MpiPacking.h"

#include "shardc/Support/HalfFloat.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

using namespace shardc;
using namespace shardc::detail;

MPI_Datatype shardc::detail::mpiDatatype(DType dtype) {
  switch (dtype) {
  case DType::I1:
    return MPI_UINT8_T;
  case DType::I32:
    return MPI_INT32_T;
  case DType::I64:
    return MPI_INT64_T;
  case DType::F16:
  case DType::BF16:
    return MPI_UINT16_T; // moved, never reduced by MPI (foldInOrder does)
  default:
    return MPI_FLOAT;
  }
}

MPI_Op shardc::detail::mpiOp(Reduction kind) {
  return kind == Reduction::Sum ? MPI_SUM : MPI_MAX;
}

BlockLayout shardc::detail::layoutOf(llvm::ArrayRef<int64_t> shape,
                                     int64_t dim, int64_t parts) {
  BlockLayout l;
  l.parts = parts;
  for (int64_t d = 0; d < dim; ++d)
    l.outer *= shape[d];
  l.inner = parts ? shape[dim] / parts : 0;
  for (size_t d = dim + 1; d < shape.size(); ++d)
    l.inner *= shape[d];
  return l;
}

void shardc::detail::packBlocks(const unsigned char *in, BlockLayout l,
                                unsigned width, unsigned char *out) {
  int64_t run = l.inner * width;
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t j = 0; j < l.parts; ++j)
      std::memcpy(out + (j * l.outer + o) * run, in + (o * l.parts + j) * run,
                  run);
}

void shardc::detail::unpackBlocks(const unsigned char *in, BlockLayout l,
                                  unsigned width, unsigned char *out) {
  int64_t run = l.inner * width;
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t j = 0; j < l.parts; ++j)
      std::memcpy(out + (o * l.parts + j) * run, in + (j * l.outer + o) * run,
                  run);
}

void shardc::detail::foldInOrder(const unsigned char *parts, int64_t numParts,
                                 int64_t count, DType dtype, Reduction kind,
                                 unsigned char *out) {
  int64_t bytes = count * dtypeByteWidth(dtype);
  llvm::SmallVector<const unsigned char *, 8> pointers;
  for (int64_t p = 0; p < numParts; ++p)
    pointers.push_back(parts + p * bytes);
  foldInOrder(pointers, count, dtype, kind, out);
}

void shardc::detail::foldInOrder(llvm::ArrayRef<const unsigned char *> parts,
                                 int64_t count, DType dtype, Reduction kind,
                                 unsigned char *out) {
  if (count == 0 || parts.empty())
    return;
  unsigned width = dtypeByteWidth(dtype);
  // Folded a cache-sized run at a time: the run of `out` is copied from the
  // first part and folded with the others while it is in the cache, so
  // `out` goes to memory once instead of being written by the copy and
  // read and written again by every fold (a gradient's reduction reads and
  // writes tens of megabytes). Each element sees the same operations in
  // the same order: the bits do not change.
  constexpr int64_t kRunBytes = 16 << 10;
  int64_t runElements = std::max<int64_t>(kRunBytes / width, 1);
  for (int64_t begin = 0; begin < count; begin += runElements) {
    int64_t n = std::min(runElements, count - begin);
    unsigned char *acc = out + begin * width;
    std::memcpy(acc, parts[0] + begin * width, n * width);
    if (isHalfDType(dtype)) {
      for (size_t p = 1; p < parts.size(); ++p)
        reduceHalfElements(
            reinterpret_cast<uint16_t *>(acc),
            reinterpret_cast<const uint16_t *>(parts[p] + begin * width), n,
            dtype, kind == Reduction::Max);
      continue;
    }
    withComputedType(dtype, [&](auto *tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      for (size_t p = 1; p < parts.size(); ++p)
        reduceElements(reinterpret_cast<T *>(acc),
                       reinterpret_cast<const T *>(parts[p] + begin * width), n,
                       kind);
    });
  }
}

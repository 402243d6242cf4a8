//===- Tensor.cpp - dense runtime tensors ---------------------------------===//

#include "shardc/Support/Tensor.h"

#include "shardc/Support/HalfFloat.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <unistd.h>
#if defined(__linux__)
#include <atomic>
#include <fstream>
#include <mutex>
#include <string>
#include <sys/mman.h>
#endif

using namespace shardc;
using llvm::ArrayRef;
using llvm::SmallVector;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::StringRef shardc::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F64:
    return "f64";
  case DType::I1:
    return "i1";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  }
  return "unknown";
}

std::optional<DType> shardc::parseDType(llvm::StringRef name) {
  for (DType d : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I1,
                  DType::I32, DType::I64})
    if (dtypeName(d) == name)
      return d;
  return std::nullopt;
}

unsigned shardc::dtypeByteWidth(DType dtype) {
  switch (dtype) {
  case DType::I1:
    return 1;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  }
  return 4;
}

bool shardc::isIntegerDType(DType dtype) {
  return dtype == DType::I1 || dtype == DType::I32 || dtype == DType::I64;
}

uint64_t shardc::defaultMaxTensorBytes() {
  // Queried once: the answer does not change while we run, and sysconf is
  // not free.
  static const uint64_t budget = [] {
    constexpr uint64_t cap = uint64_t(64) << 30;
    long pages = sysconf(_SC_PHYS_PAGES);
    long pageSize = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || pageSize <= 0)
      return uint64_t(4) << 30;
    std::optional<uint64_t> total = llvm::checkedMulUnsigned<uint64_t>(
        static_cast<uint64_t>(pages), static_cast<uint64_t>(pageSize));
    if (!total)
      return cap;
    return std::min(*total / 2, cap);
  }();
  return budget;
}

std::string shardc::formatShape(ArrayRef<int64_t> shape) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "[";
  llvm::interleaveComma(shape, os);
  os << "]";
  return out;
}

std::optional<int64_t> shardc::checkedNumElements(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    std::optional<int64_t> next = llvm::checkedMul<int64_t>(count, d);
    if (!next)
      return std::nullopt;
    count = *next;
  }
  return count;
}

std::optional<uint64_t> shardc::checkedStorageBytes(ArrayRef<int64_t> shape,
                                                    DType dtype) {
  std::optional<int64_t> count = checkedNumElements(shape);
  if (!count)
    return std::nullopt;
  return llvm::checkedMulUnsigned<uint64_t>(static_cast<uint64_t>(*count),
                                            dtypeByteWidth(dtype));
}

llvm::Error shardc::checkTensorFits(ArrayRef<int64_t> shape, uint64_t maxBytes,
                                    DType dtype) {
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return makeError("tensor shape " + formatShape(shape) +
                     " has a negative dimension");
  std::optional<uint64_t> bytes = checkedStorageBytes(shape, dtype);
  if (!bytes)
    return makeError("tensor of shape " + formatShape(shape) +
                     " is too large: its byte size overflows 64 bits");
  if (*bytes > maxBytes)
    return makeError("tensor of shape " + formatShape(shape) + " needs " +
                     llvm::Twine(*bytes) + " bytes, more than the limit of " +
                     llvm::Twine(maxBytes) + " bytes");
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

Tensor::Tensor() : shape_({0}) {}

Tensor::Tensor(Tensor &&other) noexcept
    : shape_(std::move(other.shape_)), data_(std::move(other.data_)),
      numElements_(other.numElements_), dtype_(other.dtype_) {
  // Leave the source in the documented empty state, not with a stale shape
  // that no longer matches its (absent) storage.
  other.shape_.assign({0});
  other.numElements_ = 0;
}

Tensor &Tensor::operator=(Tensor &&other) noexcept {
  if (this == &other)
    return *this;
  shape_ = std::move(other.shape_);
  data_ = std::move(other.data_);
  numElements_ = other.numElements_;
  dtype_ = other.dtype_;
  other.shape_.assign({0});
  other.numElements_ = 0;
  return *this;
}

#if defined(__linux__) && defined(MADV_HUGEPAGE)
namespace {
/// The heap's transparent-huge-page advice (adviseHugePages): where the
/// heap starts, and how far it has been advised.
struct HeapAdvice {
  std::mutex mutex;
  uintptr_t start = 0; // 0 until read; UINTPTR_MAX when there is no heap
  std::atomic<uintptr_t> advisedEnd{0};
};
HeapAdvice heapAdvice;

/// The start of the process's brk heap, from /proc/self/maps.
uintptr_t findHeapStart() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.size() > 6 && line.compare(line.size() - 6, 6, "[heap]") == 0)
      return std::stoull(line.substr(0, line.find('-')), nullptr, 16);
  return UINTPTR_MAX;
}
} // namespace
#endif

/// With SHARDC_HUGE_PAGES=1, asks the kernel to back a tensor's memory with
/// transparent huge pages (where it only does so on request, as Debian's
/// default `madvise` mode does): a tensor read or written in one sweep (an
/// optimizer update, an elementwise pass, a GEMM's operands, a collective's
/// copy) then misses the TLB once per 2 MiB instead of once per 4 KiB, and a
/// fresh buffer faults in 512 times less often. On a KVM machine, where a TLB
/// miss walks two page tables, a fused Adam update took 10-20 % less time and a
/// data-parallel GPT step 2-7 % (bench/kernel-speed.md). A buffer in the brk
/// heap (where the backends keep freed memory for the next step,
/// RetainFreedMemory.h) advises the whole heap up to the current break, once
/// per growth, as glibc's `glibc.malloc.hugetlb=1` tunable does: tensors
/// smaller than a huge page (a [512, 768] activation) share them. Another
/// buffer advises the huge pages inside it. Only advice: the values are the
/// same either way.
static void adviseHugePages(unsigned char *raw, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Asked for with SHARDC_HUGE_PAGES=1 only: on a VM whose host takes freed
  // memory back (virtio-balloon page reporting reports free 2 MiB blocks),
  // every fresh huge page is backed by the host anew, and a process's
  // first touch of its memory cost seconds of system time (docs/mpi.md).
  static const bool wanted = [] {
    const char *value = std::getenv("SHARDC_HUGE_PAGES");
    return value && std::string(value) == "1";
  }();
  if (!wanted)
    return;
  constexpr uintptr_t kHugePage = 2 << 20;
  uintptr_t begin = reinterpret_cast<uintptr_t>(raw), end = begin + bytes;
  // The heap advised so far holds it (and the heap's start is known),
  // unless the heap shrank since (glibc trims its top): memory it grows
  // back is not advised.
  uintptr_t advised = heapAdvice.advisedEnd.load(std::memory_order_relaxed);
  if (end <= advised && advised <= reinterpret_cast<uintptr_t>(sbrk(0)))
    return;
  std::lock_guard<std::mutex> lock(heapAdvice.mutex);
  if (!heapAdvice.start)
    heapAdvice.start = findHeapStart();
  uintptr_t brk = reinterpret_cast<uintptr_t>(sbrk(0));
  if (begin >= heapAdvice.start && end <= brk) {
    advised = heapAdvice.advisedEnd.load(std::memory_order_relaxed);
    if (end > advised || advised > brk) {
      (void)madvise(reinterpret_cast<void *>(heapAdvice.start),
                    brk - heapAdvice.start, MADV_HUGEPAGE);
      heapAdvice.advisedEnd.store(brk, std::memory_order_relaxed);
    }
    return;
  }
  uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
  uintptr_t last = end & ~(kHugePage - 1);
  if (first < last)
    (void)madvise(reinterpret_cast<void *>(first), last - first, MADV_HUGEPAGE);
#else
  (void)raw;
  (void)bytes;
#endif
}

llvm::Expected<Tensor> Tensor::allocateImpl(ArrayRef<int64_t> shape,
                                            DType dtype, uint64_t maxBytes,
                                            bool zero) {
  if (llvm::Error err = checkTensorFits(shape, maxBytes, dtype))
    return std::move(err);
  int64_t count = *checkedNumElements(shape);
  // Storage is rounded up to whole 8-byte words, so a reinterpreting view
  // of any computed dtype stays aligned and in bounds.
  size_t width = dtypeByteWidth(dtype);
  // A tensor with no elements still gets a (one-word) buffer, so data()
  // is never null: memcpy/memset of 0 bytes from a null pointer is
  // undefined, and the kernels and layouts copy without asking for empty
  // shapes (UBSan found it on a size-0 dim in simulate).
  size_t storageBytes = static_cast<size_t>(count) * width;
  size_t words =
      std::max<size_t>(storageBytes / 8 + (storageBytes % 8 != 0), 1);
  // calloc: large buffers come straight from the kernel as zero pages, so
  // zero-filling costs nothing until a page is touched (aligned_alloc has no
  // zeroing form). The storage starts at the first kStorageAlignment
  // boundary past the allocation's first byte, and that byte-distance (1 to
  // kStorageAlignment) is kept in the byte before the storage for the
  // deleter.
  if (words > (std::numeric_limits<size_t>::max() - kStorageAlignment) / 8)
    return makeError("tensor of shape " + formatShape(shape) +
                     " is too large to allocate");
  size_t bytes = words * 8 + kStorageAlignment;
  auto *raw = static_cast<unsigned char *>(zero ? std::calloc(bytes, 1)
                                                : std::malloc(bytes));
  if (!raw)
    return makeError("out of memory: cannot allocate " +
                     llvm::Twine(uint64_t(count) * width) +
                     " bytes for a tensor of "
                     "shape " +
                     formatShape(shape));
  adviseHugePages(raw, bytes);
  size_t skip = kStorageAlignment -
                reinterpret_cast<uintptr_t>(raw) % kStorageAlignment;
  unsigned char *p = raw + skip;
  p[-1] = static_cast<unsigned char>(skip - 1);
  Tensor t;
  t.shape_.assign(shape.begin(), shape.end());
  t.numElements_ = count;
  t.dtype_ = dtype;
  t.data_.reset(p);
  return std::move(t);
}

void Tensor::StorageDeleter::operator()(unsigned char *p) const {
  if (p)
    std::free(p - (p[-1] + 1));
}

llvm::Expected<Tensor> Tensor::allocate(ArrayRef<int64_t> shape, DType dtype,
                                        uint64_t maxBytes) {
  return allocateImpl(shape, dtype, maxBytes, /*zero=*/true);
}

llvm::Expected<Tensor> Tensor::allocateUninitialized(ArrayRef<int64_t> shape,
                                                     DType dtype,
                                                     uint64_t maxBytes) {
  return allocateImpl(shape, dtype, maxBytes, /*zero=*/false);
}

llvm::Expected<Tensor> Tensor::fromValues(ArrayRef<int64_t> shape,
                                          ArrayRef<float> values, DType dtype) {
  if (dtype != DType::F32)
    return makeError("float values cannot fill a tensor of dtype " +
                     dtypeName(dtype));
  return fromBytes(shape, dtype, values.data(), values.size());
}

llvm::Expected<Tensor> Tensor::fromBytes(ArrayRef<int64_t> shape, DType dtype,
                                         const void *values, size_t count) {
  std::optional<int64_t> expected = checkedNumElements(shape);
  if (!expected || static_cast<uint64_t>(*expected) != count)
    return makeError("shape " + formatShape(shape) + " does not hold " +
                     llvm::Twine(count) + " values");
  llvm::Expected<Tensor> t =
      allocate(shape, dtype, std::numeric_limits<uint64_t>::max());
  if (!t)
    return t.takeError();
  if (count)
    std::memcpy(t->rawData(), values, t->byteSize());
  if (dtype == DType::I1)
    for (unsigned char &b : llvm::MutableArrayRef<unsigned char>(
             t->rawData(), static_cast<size_t>(count)))
      b = b != 0;
  return t;
}

double Tensor::elementAsDouble(int64_t i) const {
  switch (dtype_) {
  case DType::I1:
    return data_[i];
  case DType::I32:
    return dataAs<int32_t>()[i];
  case DType::I64:
    return static_cast<double>(dataAs<int64_t>()[i]);
  case DType::F16:
  case DType::BF16:
    return halfToFloat(reinterpret_cast<const uint16_t *>(data_.get())[i],
                       dtype_);
  default:
    return data()[i];
  }
}

Tensor Tensor::scalar(float value) {
  Tensor t = cantFail(allocate({}, DType::F32));
  t.data()[0] = value;
  return t;
}

Tensor Tensor::clone() const {
  llvm::Expected<Tensor> copy = allocateUninitialized(
      shape_, dtype_, std::numeric_limits<uint64_t>::max());
  if (!copy) {
    llvm::consumeError(copy.takeError());
    llvm::report_bad_alloc_error("shardc: out of memory cloning a tensor");
  }
  if (numElements_ > 0)
    std::memcpy(copy->rawData(), rawData(), byteSize());
  return std::move(*copy);
}

SmallVector<int64_t> Tensor::strides() const {
  SmallVector<int64_t> out(shape_.size(), 1);
  for (int64_t i = rank() - 2; i >= 0; --i)
    out[i] = out[i + 1] * shape_[i + 1];
  return out;
}

float &Tensor::at(ArrayRef<int64_t> index) {
  int64_t offset = 0;
  for (auto [i, d] : llvm::zip(index, shape_))
    offset = offset * d + i;
  return data()[offset];
}

float Tensor::at(ArrayRef<int64_t> index) const {
  return const_cast<Tensor *>(this)->at(index);
}

llvm::Error Tensor::reshape(ArrayRef<int64_t> newShape) {
  std::optional<int64_t> count = checkedNumElements(newShape);
  if (!count || *count != numElements_)
    return makeError("cannot reshape " + describe() + " to shape " +
                     formatShape(newShape) + ": element counts differ");
  shape_.assign(newShape.begin(), newShape.end());
  return llvm::Error::success();
}

std::string Tensor::describe() const {
  std::string out = "tensor<";
  for (int64_t d : shape_)
    out += std::to_string(d) + "x";
  out += dtypeName(dtype_).str() + ">";
  return out;
}

//===----------------------------------------------------------------------===//
// Block helpers (what collectives are made of)
//===----------------------------------------------------------------------===//

/// Splits the row-major layout around `dim`: `outer` rows of `dimSize *
/// inner` contiguous elements each.
static void splitAround(ArrayRef<int64_t> shape, int64_t dim, int64_t &outer,
                        int64_t &inner) {
  outer = 1;
  inner = 1;
  for (int64_t i = 0; i < dim; ++i)
    outer *= shape[i];
  for (int64_t i = dim + 1, e = shape.size(); i < e; ++i)
    inner *= shape[i];
}

llvm::Expected<Tensor> shardc::trySliceBlock(const Tensor &tensor, int64_t dim,
                                             int64_t numBlocks, int64_t index) {
  if (dim < 0 || dim >= tensor.rank())
    return makeError("cannot slice " + tensor.describe() + " along dim " +
                     llvm::Twine(dim) + ": out of range");
  if (numBlocks <= 0 || index < 0 || index >= numBlocks)
    return makeError("cannot take block " + llvm::Twine(index) + " of " +
                     llvm::Twine(numBlocks) + " of " + tensor.describe());
  if (tensor.dim(dim) % numBlocks != 0)
    return makeError("cannot split dim " + llvm::Twine(dim) + " of " +
                     tensor.describe() + " into " + llvm::Twine(numBlocks) +
                     " equal blocks");
  SmallVector<int64_t> shape(tensor.shape());
  shape[dim] /= numBlocks;
  llvm::Expected<Tensor> out = Tensor::allocate(
      shape, tensor.dtype(), std::numeric_limits<uint64_t>::max());
  if (!out)
    return out.takeError();
  int64_t outer, inner;
  splitAround(tensor.shape(), dim, outer, inner);
  // Each outer row contributes one contiguous run of `shape[dim] * inner`
  // elements, copied as bytes whatever the dtype.
  int64_t width = tensor.elementByteWidth();
  int64_t run = shape[dim] * inner * width;
  int64_t srcRow = tensor.dim(dim) * inner * width;
  for (int64_t o = 0; o < outer && run > 0; ++o)
    std::memcpy(out->rawData() + o * run,
                tensor.rawData() + o * srcRow + index * run, run);
  return out;
}

llvm::Expected<Tensor> shardc::tryResizeDim(const Tensor &tensor, int64_t dim,
                                            int64_t size, uint64_t maxBytes) {
  if (dim < 0 || dim >= tensor.rank())
    return makeError("cannot resize " + tensor.describe() + " along dim " +
                     llvm::Twine(dim) + ": out of range");
  if (size < 0)
    return makeError("cannot resize dim " + llvm::Twine(dim) + " of " +
                     tensor.describe() + " to " + llvm::Twine(size));
  if (size == tensor.dim(dim))
    return tensor.clone();
  SmallVector<int64_t> shape(tensor.shape());
  shape[dim] = size;
  // Zeroed: the rows past the old size are padding.
  llvm::Expected<Tensor> out = Tensor::allocate(shape, tensor.dtype(), maxBytes);
  if (!out)
    return out.takeError();
  int64_t outer, inner;
  splitAround(tensor.shape(), dim, outer, inner);
  int64_t width = tensor.elementByteWidth();
  int64_t run = std::min(size, tensor.dim(dim)) * inner * width;
  int64_t srcRow = tensor.dim(dim) * inner * width;
  int64_t dstRow = size * inner * width;
  for (int64_t o = 0; o < outer && run > 0; ++o)
    std::memcpy(out->rawData() + o * dstRow, tensor.rawData() + o * srcRow,
                run);
  return out;
}

llvm::Expected<Tensor> shardc::trySlicePaddedBlock(const Tensor &tensor,
                                                   int64_t dim,
                                                   int64_t numBlocks,
                                                   int64_t index) {
  if (dim < 0 || dim >= tensor.rank() || numBlocks <= 0)
    return trySliceBlock(tensor, dim, numBlocks, index);
  if (tensor.dim(dim) % numBlocks == 0)
    return trySliceBlock(tensor, dim, numBlocks, index);
  int64_t block = (tensor.dim(dim) + numBlocks - 1) / numBlocks;
  llvm::Expected<Tensor> padded =
      tryResizeDim(tensor, dim, block * numBlocks,
                   std::numeric_limits<uint64_t>::max());
  if (!padded)
    return padded.takeError();
  return trySliceBlock(*padded, dim, numBlocks, index);
}

llvm::Expected<Tensor> shardc::tryConcatenate(ArrayRef<const Tensor *> parts,
                                              int64_t dim, uint64_t maxBytes) {
  if (parts.empty())
    return makeError("cannot concatenate zero tensors");
  const Tensor &first = *parts.front();
  if (dim < 0 || dim >= first.rank())
    return makeError("cannot concatenate " + first.describe() + " along dim " +
                     llvm::Twine(dim) + ": out of range");
  SmallVector<int64_t> shape(first.shape());
  shape[dim] = 0;
  for (const Tensor *part : parts) {
    bool compatible =
        part->rank() == first.rank() && part->dtype() == first.dtype();
    for (int64_t i = 0; compatible && i < first.rank(); ++i)
      compatible = i == dim || part->dim(i) == first.dim(i);
    if (!compatible)
      return makeError("cannot concatenate " + part->describe() + " with " +
                       first.describe() + " along dim " + llvm::Twine(dim));
    std::optional<int64_t> sum =
        llvm::checkedAdd<int64_t>(shape[dim], part->dim(dim));
    if (!sum)
      return makeError("concatenation along dim " + llvm::Twine(dim) +
                       " overflows");
    shape[dim] = *sum;
  }
  llvm::Expected<Tensor> out = Tensor::allocate(shape, first.dtype(), maxBytes);
  if (!out)
    return out.takeError();
  int64_t outer, inner;
  splitAround(shape, dim, outer, inner);
  int64_t width = first.elementByteWidth();
  unsigned char *dst = out->rawData();
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor *part : parts) {
      int64_t run = part->dim(dim) * inner * width;
      if (run == 0)
        continue;
      std::memcpy(dst, part->rawData() + o * run, run);
      dst += run;
    }
  }
  return out;
}

int64_t shardc::countNonFinite(const Tensor &t) {
  if (isHalfDType(t.dtype())) {
    int64_t count = 0;
    for (int64_t i = 0, e = t.numElements(); i < e; ++i)
      count += !std::isfinite(t.elementAsDouble(i));
    return count;
  }
  if (t.dtype() != DType::F32)
    return 0;
  return llvm::count_if(t.values(), [](float x) { return !std::isfinite(x); });
}

float shardc::maxAbsDifference(const Tensor &a, const Tensor &b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype())
    return std::numeric_limits<float>::infinity();
  float worst = 0;
  if (isHalfDType(a.dtype())) {
    for (int64_t i = 0, e = a.numElements(); i < e; ++i) {
      double x = a.elementAsDouble(i), y = b.elementAsDouble(i);
      if ((std::isnan(x) && std::isnan(y)) || x == y)
        continue;
      double d = std::fabs(x - y);
      worst = std::max<float>(worst, std::isnan(d) ? INFINITY : d);
    }
    return worst;
  }
  if (a.dtype() != DType::F32) {
    for (int64_t i = 0, e = a.numElements(); i < e; ++i)
      worst = std::max<float>(
          worst, std::fabs(a.elementAsDouble(i) - b.elementAsDouble(i)));
    return worst;
  }
  for (auto [x, y] : llvm::zip(a.values(), b.values())) {
    if ((std::isnan(x) && std::isnan(y)) || x == y) // also equal infinities
      continue;
    float d = std::fabs(x - y);
    if (std::isnan(d))
      d = std::numeric_limits<float>::infinity();
    worst = std::max(worst, d);
  }
  return worst;
}

bool shardc::allClose(const Tensor &a, const Tensor &b, float rtol,
                      float atol) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype())
    return false;
  if (isHalfDType(a.dtype())) {
    llvm::Expected<Tensor> wa = widenToF32(a), wb = widenToF32(b);
    if (!wa || !wb) {
      llvm::consumeError(wa.takeError());
      llvm::consumeError(wb.takeError());
      return false;
    }
    return allClose(*wa, *wb, rtol, atol);
  }
  if (a.dtype() != DType::F32)
    return a.byteSize() == 0 ||
           std::memcmp(a.rawData(), b.rawData(), a.byteSize()) == 0;
  for (auto [x, y] : llvm::zip(a.values(), b.values())) {
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y))
        return false;
      continue;
    }
    if (x == y) // also equal infinities
      continue;
    if (!(std::fabs(x - y) <= atol + rtol * std::fabs(y)))
      return false;
  }
  return true;
}

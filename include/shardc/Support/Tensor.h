//===- Tensor.h - dense runtime tensors -------------------------*- C++ -*-===//
//
// The value the interpreter, the simulator and the .npy reader pass around: a
// dense, row-major tensor of f32 storage with a static shape.
//
// Every tensor whose shape comes from a user (a file, a function type, a
// command line) is created through `Tensor::allocate`, which refuses shapes
// whose size overflows or exceeds a byte budget *before* allocating, so a
// hostile input produces an error message instead of an abort.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_SUPPORT_TENSOR_H
#define SHARDC_SUPPORT_TENSOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

namespace shardc {

/// The element type a tensor stands for. Storage is always f32 today: only
/// F32 is computed, the other tags exist so that mixed precision can be added
/// without changing every signature that carries a tensor.
enum class DType : uint8_t { F32, F16, BF16, F64 };

/// "f32", "f16", "bf16", "f64" (the MLIR spelling).
llvm::StringRef dtypeName(DType dtype);
/// Bytes per element of the dtype itself (not of the f32 storage).
unsigned dtypeByteWidth(DType dtype);

/// The default budget for a single tensor: half of the physical memory,
/// capped at 64 GiB (4 GiB when the memory size cannot be queried).
uint64_t defaultMaxTensorBytes();

/// "[16, 64]"; a scalar is "[]".
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// Element count of `shape`, or nullopt if a dim is negative or the product
/// overflows int64_t.
std::optional<int64_t> checkedNumElements(llvm::ArrayRef<int64_t> shape);

/// Bytes of storage a tensor of `shape` needs, or nullopt on a negative dim
/// or overflow.
std::optional<uint64_t> checkedStorageBytes(llvm::ArrayRef<int64_t> shape);

/// Succeeds if a tensor of `shape` can be allocated within `maxBytes`; the
/// error names the shape and the byte count (or says it overflows).
llvm::Error checkTensorFits(llvm::ArrayRef<int64_t> shape, uint64_t maxBytes);

/// A dense row-major tensor. Move-only: copies of activations are expensive,
/// so they are spelled `clone()`. A default-constructed or moved-from tensor
/// is empty: shape [0], no storage.
class Tensor {
public:
  Tensor();
  Tensor(Tensor &&other) noexcept;
  Tensor &operator=(Tensor &&other) noexcept;
  Tensor(const Tensor &) = delete;
  Tensor &operator=(const Tensor &) = delete;
  ~Tensor() = default;

  /// Allocates a zero-filled tensor. Fails, without allocating, when a dim is
  /// negative, the size overflows or exceeds `maxBytes`; fails too when the
  /// system refuses the memory.
  static llvm::Expected<Tensor>
  allocate(llvm::ArrayRef<int64_t> shape, DType dtype = DType::F32,
           uint64_t maxBytes = defaultMaxTensorBytes());

  /// allocate() without the zero fill, for a kernel that writes every
  /// element: a reused heap buffer then costs no extra pass (calloc must
  /// clear it), which is a few percent of a training step. The contents are
  /// unspecified until written.
  static llvm::Expected<Tensor>
  allocateUninitialized(llvm::ArrayRef<int64_t> shape, DType dtype = DType::F32,
                        uint64_t maxBytes = defaultMaxTensorBytes());

  /// A tensor holding a copy of `values`, whose count must match `shape`.
  static llvm::Expected<Tensor> fromValues(llvm::ArrayRef<int64_t> shape,
                                           llvm::ArrayRef<float> values,
                                           DType dtype = DType::F32);

  /// A rank-0 tensor.
  static Tensor scalar(float value);

  /// A deep copy (aborts through LLVM's bad-alloc handler only if the system
  /// cannot provide memory the original already fit in).
  Tensor clone() const;

  llvm::ArrayRef<int64_t> shape() const { return shape_; }
  /// MLIR-style spelling of shape().
  llvm::ArrayRef<int64_t> getShape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[i]; }
  DType dtype() const { return dtype_; }
  int64_t numElements() const { return numElements_; }
  /// Bytes of storage (f32 per element).
  uint64_t byteSize() const {
    return static_cast<uint64_t>(numElements_) * sizeof(float);
  }
  /// Row-major strides in elements; the last dim has stride 1.
  llvm::SmallVector<int64_t> strides() const;

  float *data() { return data_.get(); }
  const float *data() const { return data_.get(); }
  llvm::MutableArrayRef<float> values() {
    return {data_.get(), static_cast<size_t>(numElements_)};
  }
  llvm::ArrayRef<float> values() const {
    return {data_.get(), static_cast<size_t>(numElements_)};
  }

  /// Element at a full multi-index. Unchecked: for tests and small tools.
  float &at(llvm::ArrayRef<int64_t> index);
  float at(llvm::ArrayRef<int64_t> index) const;

  /// Reinterprets the row-major elements with `newShape` (same element
  /// count), without moving data.
  llvm::Error reshape(llvm::ArrayRef<int64_t> newShape);

  /// "tensor<16x64xf32>".
  std::string describe() const;

private:
  /// allocate() (`zero`) or allocateUninitialized().
  static llvm::Expected<Tensor> allocateImpl(llvm::ArrayRef<int64_t> shape,
                                             DType dtype, uint64_t maxBytes,
                                             bool zero);

  struct FreeDeleter {
    void operator()(float *p) const { std::free(p); }
  };

  llvm::SmallVector<int64_t, 4> shape_;
  std::unique_ptr<float[], FreeDeleter> data_;
  int64_t numElements_ = 0;
  DType dtype_ = DType::F32;
};

/// Checked block helpers, for data whose shapes have not been validated
/// (every bad argument is an error, never an abort).
///
/// Block `index` of `tensor` split along `dim` into `numBlocks` equal
/// blocks. Fails if `dim` is out of range, `index` outside [0, numBlocks) or
/// the dim not divisible.
llvm::Expected<Tensor> trySliceBlock(const Tensor &tensor, int64_t dim,
                                     int64_t numBlocks, int64_t index);

/// Concatenation of `parts` along `dim`; every other dim must agree.
llvm::Expected<Tensor>
tryConcatenate(llvm::ArrayRef<const Tensor *> parts, int64_t dim,
               uint64_t maxBytes = defaultMaxTensorBytes());

/// The elements of `t` that are NaN or infinite.
int64_t countNonFinite(const Tensor &t);

/// Largest |a - b| over all elements (NaN compares as infinitely far unless
/// both are NaN); +inf if the shapes differ.
float maxAbsDifference(const Tensor &a, const Tensor &b);

/// True if shapes agree and |a - b| <= atol + rtol * |b| everywhere.
bool allClose(const Tensor &a, const Tensor &b, float rtol = 1e-5f,
              float atol = 1e-6f);

} // namespace shardc

#endif // SHARDC_SUPPORT_TENSOR_H

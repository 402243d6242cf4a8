//===- Tensor.h - dense runtime tensors -------------------------*- C++ -*-===//
//
// The value the interpreter, the simulator and the .npy reader pass around: a
// dense, row-major tensor with a static shape and storage typed by its
// DType (f32, i1 as one byte 0/1, i32, i64).
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

/// The element type of a tensor; its storage holds elements of exactly this
/// width. F32, I1 (a byte holding 0 or 1), I32 and I64 are computed; F16 and
/// BF16 are stored as two bytes and computed in f32, rounded on store
/// (HalfFloat.h); F64 is a tag kept open (nothing computes it).
enum class DType : uint8_t { F32, F16, BF16, F64, I1, I32, I64 };

/// "f32", "f16", "bf16", "f64", "i1", "i32", "i64" (the MLIR spelling).
llvm::StringRef dtypeName(DType dtype);
/// The DType spelled `name` ("f32", "i1", "i32", "i64", ...), or nullopt.
std::optional<DType> parseDType(llvm::StringRef name);
/// Bytes per element of storage: 4 for f32 and i32, 1 for i1, 8 for i64.
unsigned dtypeByteWidth(DType dtype);
/// True for the integer dtypes I1, I32, I64.
bool isIntegerDType(DType dtype);

/// The C++ element type of each computed DType (I1 is stored as uint8_t).
template <typename T> struct DTypeOf;
template <> struct DTypeOf<float> {
  static constexpr DType value = DType::F32;
};
template <> struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::I1;
};
template <> struct DTypeOf<int32_t> {
  static constexpr DType value = DType::I32;
};
template <> struct DTypeOf<int64_t> {
  static constexpr DType value = DType::I64;
};

/// Calls `f` with a null pointer of the C++ element type of `dtype` (float,
/// uint8_t for i1, int32_t, int64_t), so that code over the computed dtypes is
/// written once as a template. bf16 and f16 are computed widened (HalfFloat.h:
/// code over their storage checks isHalfDType first); they get float here.
template <typename Fn> void withComputedType(DType dtype, Fn &&f) {
  switch (dtype) {
  case DType::I1:
    return f(static_cast<uint8_t *>(nullptr));
  case DType::I32:
    return f(static_cast<int32_t *>(nullptr));
  case DType::I64:
    return f(static_cast<int64_t *>(nullptr));
  default:
    return f(static_cast<float *>(nullptr));
  }
}

/// The default budget for a single tensor: half of the physical memory,
/// capped at 64 GiB (4 GiB when the memory size cannot be queried).
uint64_t defaultMaxTensorBytes();

/// "[16, 64]"; a scalar is "[]".
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// Element count of `shape`, or nullopt if a dim is negative or the product
/// overflows int64_t.
std::optional<int64_t> checkedNumElements(llvm::ArrayRef<int64_t> shape);

/// Bytes of storage a tensor of `shape` and `dtype` needs, or nullopt on a
/// negative dim or overflow.
std::optional<uint64_t> checkedStorageBytes(llvm::ArrayRef<int64_t> shape,
                                            DType dtype = DType::F32);

/// Succeeds if a tensor of `shape` and `dtype` can be allocated within
/// `maxBytes`; the error names the shape and the byte count (or says it
/// overflows).
llvm::Error checkTensorFits(llvm::ArrayRef<int64_t> shape, uint64_t maxBytes,
                            DType dtype = DType::F32);

/// The alignment of every tensor's storage, in bytes: a cache line, and the
/// widest vector register (AVX-512). The vectorized kernels (Eigen's) peel
/// scalar iterations until the destination is aligned to their packet, and
/// a scalar exp or tanh rounds differently from the vector one; with every
/// tensor starting on this boundary, an element's bits depend only on its
/// position in the tensor, never on where malloc put it, so two devices
/// computing the same block agree to the bit whatever the target ISA.
inline constexpr size_t kStorageAlignment = 64;

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

  /// An f32 tensor holding a copy of `values`, whose count must match
  /// `shape`. `dtype` must be F32 (it is kept so that callers spelling it
  /// still compile); other dtypes go through fromValuesAs.
  static llvm::Expected<Tensor> fromValues(llvm::ArrayRef<int64_t> shape,
                                           llvm::ArrayRef<float> values,
                                           DType dtype = DType::F32);

  /// A tensor of the dtype of `T` (float, uint8_t for i1, int32_t, int64_t)
  /// holding a copy of `values`. An i1 value other than 0 is stored as 1.
  template <typename T>
  static llvm::Expected<Tensor> fromValuesAs(llvm::ArrayRef<int64_t> shape,
                                             llvm::ArrayRef<T> values) {
    return fromBytes(shape, DTypeOf<T>::value, values.data(), values.size());
  }

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
  /// Bytes per element of the storage.
  unsigned elementByteWidth() const { return dtypeByteWidth(dtype_); }
  /// Bytes of storage (the dtype's width per element).
  uint64_t byteSize() const {
    return static_cast<uint64_t>(numElements_) * elementByteWidth();
  }
  /// Row-major strides in elements; the last dim has stride 1.
  llvm::SmallVector<int64_t> strides() const;

  /// The storage as bytes, for code that moves elements without computing
  /// on them (layouts, collectives, files).
  unsigned char *rawData() { return data_.get(); }
  const unsigned char *rawData() const { return data_.get(); }

  /// The f32 view every float kernel uses. Only meaningful for an F32
  /// tensor: the op verifiers keep other dtypes away from float kernels, and
  /// code that may see any dtype uses rawData() or dataAs<T>().
  float *data() { return reinterpret_cast<float *>(data_.get()); }
  const float *data() const {
    return reinterpret_cast<const float *>(data_.get());
  }
  llvm::MutableArrayRef<float> values() {
    return {data(), static_cast<size_t>(numElements_)};
  }
  llvm::ArrayRef<float> values() const {
    return {data(), static_cast<size_t>(numElements_)};
  }

  /// The elements as `T`, or null when `T` is not this tensor's dtype
  /// (float: F32, uint8_t: I1, int32_t: I32, int64_t: I64).
  template <typename T> T *dataAs() {
    return DTypeOf<T>::value == dtype_ ? reinterpret_cast<T *>(data_.get())
                                       : nullptr;
  }
  template <typename T> const T *dataAs() const {
    return DTypeOf<T>::value == dtype_
               ? reinterpret_cast<const T *>(data_.get())
               : nullptr;
  }
  /// dataAs<T>() as an array; empty when `T` is not the dtype.
  template <typename T> llvm::MutableArrayRef<T> valuesAs() {
    T *p = dataAs<T>();
    return {p, p ? static_cast<size_t>(numElements_) : 0};
  }
  template <typename T> llvm::ArrayRef<T> valuesAs() const {
    const T *p = dataAs<T>();
    return {p, p ? static_cast<size_t>(numElements_) : 0};
  }

  /// Element `i` (row-major) converted to double, for any computed dtype;
  /// for comparisons and printing.
  double elementAsDouble(int64_t i) const;

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
  /// fromValuesAs: `count` elements of `dtype` at `values`.
  static llvm::Expected<Tensor> fromBytes(llvm::ArrayRef<int64_t> shape,
                                          DType dtype, const void *values,
                                          size_t count);

  /// Frees storage from allocateImpl, which starts kStorageAlignment bytes
  /// into its own allocation at most and records how far in the byte before.
  struct StorageDeleter {
    void operator()(unsigned char *p) const;
  };

  llvm::SmallVector<int64_t, 4> shape_;
  std::unique_ptr<unsigned char[], StorageDeleter> data_;
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

/// `tensor` with dim `dim` cut or zero-padded to `size` elements: how a
/// block padded for an uneven dim (docs/sharding.md#uneven-dims) gains or
/// drops its padding.
llvm::Expected<Tensor> tryResizeDim(const Tensor &tensor, int64_t dim,
                                    int64_t size,
                                    uint64_t maxBytes = defaultMaxTensorBytes());

/// Block `index` of `tensor` split along `dim` into `numBlocks` blocks of
/// ceil(size / numBlocks) elements, the last ones zero-padded (possibly all
/// padding): the block a device holds of an uneven dim.
llvm::Expected<Tensor> trySlicePaddedBlock(const Tensor &tensor, int64_t dim,
                                           int64_t numBlocks, int64_t index);

/// Concatenation of `parts` along `dim`; every other dim must agree.
llvm::Expected<Tensor>
tryConcatenate(llvm::ArrayRef<const Tensor *> parts, int64_t dim,
               uint64_t maxBytes = defaultMaxTensorBytes());

/// The elements of `t` that are NaN or infinite (0 for integer dtypes).
int64_t countNonFinite(const Tensor &t);

/// Largest |a - b| over all elements (NaN compares as infinitely far unless
/// both are NaN); +inf if the shapes or dtypes differ. Integers compare by
/// value.
float maxAbsDifference(const Tensor &a, const Tensor &b);

/// True if shapes and dtypes agree and |a - b| <= atol + rtol * |b|
/// everywhere (integers: exactly equal).
bool allClose(const Tensor &a, const Tensor &b, float rtol = 1e-5f,
              float atol = 1e-6f);

} // namespace shardc

#endif // SHARDC_SUPPORT_TENSOR_H

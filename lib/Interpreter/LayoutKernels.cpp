//===- LayoutKernels.cpp - transpose and broadcast_in_dim -----------------===//
//
// Data-movement kernels, for every dtype: they move elements as unsigned
// integers of the element's byte width. Both first collapse the problem (drop size-1 dims,
// merge dims that stay adjacent in both layouts) so that the common cases
// become a few long contiguous copies; what remains is walked with
// incremental offsets. Transposes that move the innermost dim are done in
// square tiles so both the reads and the writes stay within a few cache
// lines.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseFusion.h"
#include "KernelImpl.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;
using llvm::ArrayRef;
using llvm::SmallVector;

SmallVector<int64_t> shardc::detail::rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

int64_t shardc::detail::productOf(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

namespace {
/// A walk over output dims in row-major order, each with the stride at
/// which the input advances.
struct CollapsedLayout {
  SmallVector<int64_t> sizes, inStrides;

  /// Appends an output dim; merges it into the previous one when the input
  /// also steps through both as one (stride_prev == stride * size).
  void push(int64_t size, int64_t inStride) {
    if (size == 1)
      return;
    if (!sizes.empty() && inStrides.back() == inStride * size) {
      sizes.back() *= size;
      inStrides.back() = inStride;
      return;
    }
    sizes.push_back(size);
    inStrides.push_back(inStride);
  }
};
} // namespace

/// Calls `f` with a null pointer of the unsigned integer type as wide as an
/// element of `width` bytes; the layout kernels only move elements, so this
/// covers every dtype.
template <typename Fn> static void withElementWord(unsigned width, Fn &&f) {
  switch (width) {
  case 1:
    return f(static_cast<uint8_t *>(nullptr));
  case 2:
    return f(static_cast<uint16_t *>(nullptr));
  case 8:
    return f(static_cast<uint64_t *>(nullptr));
  default:
    return f(static_cast<uint32_t *>(nullptr));
  }
}

/// Copies the collapsed problem: `outer` dims walked with offsets, the
/// innermost dim copied, filled or gathered according to its stride.
template <typename T>
static void copyWithInnerDim(const T *in, T *out,
                             const CollapsedLayout &layout) {
  if (layout.sizes.empty()) {
    out[0] = in[0];
    return;
  }
  int64_t inner = layout.sizes.back(), stride = layout.inStrides.back();
  ArrayRef<int64_t> outerSizes = ArrayRef<int64_t>(layout.sizes).drop_back();
  SmallVector<int64_t> outStrides =
      shardc::detail::rowMajorStrides(layout.sizes);
  outStrides.pop_back();
  shardc::detail::StridedWalk walk(
      outerSizes, ArrayRef<int64_t>(layout.inStrides).drop_back(), outStrides);
  do {
    const T *src = in + walk.offsetA();
    T *dst = out + walk.offsetB();
    if (stride == 1)
      std::memcpy(dst, src, inner * sizeof(T));
    else if (stride == 0)
      std::fill_n(dst, inner, *src);
    else
      for (int64_t i = 0; i < inner; ++i)
        dst[i] = src[i * stride];
  } while (walk.next());
}

template <typename T>
static void transposeElements(const T *in, ArrayRef<int64_t> inShape,
                              ArrayRef<int64_t> perm, T *out) {
  if (productOf(inShape) == 0)
    return;
  SmallVector<int64_t> strides = rowMajorStrides(inShape);
  CollapsedLayout layout;
  for (int64_t p : perm)
    layout.push(inShape[p], strides[p]);
  int64_t rank = layout.sizes.size();
  if (rank == 0 || layout.inStrides.back() == 1) {
    copyWithInnerDim(in, out, layout);
    return;
  }
  // The output's innermost dim `b` is strided in the input; the input's
  // innermost dim `a` (smallest stride) is strided in the output. Tile the
  // (a, b) plane and walk every other dim around it.
  int64_t a =
      std::min_element(layout.inStrides.begin(), layout.inStrides.end()) -
      layout.inStrides.begin();
  int64_t b = rank - 1;
  SmallVector<int64_t> outStrides = rowMajorStrides(layout.sizes);
  SmallVector<int64_t> sizes(layout.sizes), inS(layout.inStrides),
      outS(outStrides);
  int64_t na = sizes[a], nb = sizes[b];
  int64_t ia = inS[a], ib = inS[b], oa = outS[a];
  // The walk skips a and b by giving them size 1.
  sizes[a] = sizes[b] = 1;
  // Each tile is read along the input's contiguous dim into a small buffer
  // and written along the output's. Going through the buffer keeps the 32
  // strided rows out of the same L1 sets when the strides are powers of two
  // (a direct strided copy is 2-3x slower there).
  constexpr int64_t kTile = 32;
  T tile[kTile][kTile];
  StridedWalk walk(sizes, inS, outS);
  do {
    const T *src = in + walk.offsetA();
    T *dst = out + walk.offsetB();
    for (int64_t a0 = 0; a0 < na; a0 += kTile) {
      int64_t ta = std::min(kTile, na - a0);
      for (int64_t b0 = 0; b0 < nb; b0 += kTile) {
        int64_t tb = std::min(kTile, nb - b0);
        for (int64_t y = 0; y < tb; ++y)
          for (int64_t x = 0; x < ta; ++x)
            tile[x][y] = src[(a0 + x) * ia + (b0 + y) * ib];
        for (int64_t x = 0; x < ta; ++x)
          for (int64_t y = 0; y < tb; ++y)
            dst[(a0 + x) * oa + b0 + y] = tile[x][y];
      }
    }
  } while (walk.next());
}

void shardc::detail::transposeKernel(const float *in, ArrayRef<int64_t> inShape,
                                     ArrayRef<int64_t> perm, float *out) {
  transposeElements(in, inShape, perm, out);
}

static LogicalResult evalTranspose(TransposeOp op, const Tensor &input,
                                   Tensor &result) {
  ArrayRef<int64_t> perm = op.getPermutation();
  llvm::SmallBitVector seen(input.rank());
  bool valid = static_cast<int64_t>(perm.size()) == input.rank();
  for (int64_t p : perm) {
    valid = valid && p >= 0 && p < input.rank() && !seen.test(p);
    if (valid)
      seen.set(p);
  }
  if (!valid)
    return op.emitError() << "transpose permutation is not a permutation of "
                             "the operand's "
                          << input.rank() << " dims";
  SmallVector<int64_t> expected;
  for (int64_t p : perm)
    expected.push_back(input.dim(p));
  if (result.shape() != ArrayRef<int64_t>(expected))
    return op.emitError() << "transpose result shape "
                          << formatShape(result.shape()) << " should be "
                          << formatShape(expected);
  if (input.dtype() != result.dtype())
    return op.emitError() << "transpose of " << input.describe()
                          << " cannot produce " << result.describe();
  withElementWord(input.elementByteWidth(), [&](auto *word) {
    using T = std::remove_pointer_t<decltype(word)>;
    transposeElements(reinterpret_cast<const T *>(input.rawData()),
                      input.shape(), perm,
                      reinterpret_cast<T *>(result.rawData()));
  });
  return success();
}

static LogicalResult evalBroadcastInDim(BroadcastInDimOp op,
                                        const Tensor &input,
                                        Tensor &result) {
  ArrayRef<int64_t> dims = op.getDims();
  if (static_cast<int64_t>(dims.size()) != input.rank())
    return op.emitError() << "broadcast_in_dim needs one entry in dims per "
                             "operand dim ("
                          << input.rank() << ")";
  SmallVector<int64_t> inStrides = rowMajorStrides(input.shape());
  SmallVector<int64_t> strideOfResultDim(result.rank(), 0);
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d < 0 || d >= result.rank() || (i > 0 && d <= dims[i - 1]))
      return op.emitError() << "broadcast_in_dim dims must be strictly "
                               "increasing and in range of the result";
    if (input.dim(i) != 1 && input.dim(i) != result.dim(d))
      return op.emitError()
             << "broadcast_in_dim operand dim " << i << " of size "
             << input.dim(i) << " cannot expand to result dim " << d
             << " of size " << result.dim(d);
    // A size-1 operand dim repeats: it never advances.
    if (input.dim(i) != 1)
      strideOfResultDim[d] = inStrides[i];
  }
  if (input.dtype() != result.dtype())
    return op.emitError() << "broadcast_in_dim of " << input.describe()
                          << " cannot produce " << result.describe();
  if (result.numElements() == 0)
    return success();
  CollapsedLayout layout;
  for (int64_t d = 0; d < result.rank(); ++d)
    layout.push(result.dim(d), strideOfResultDim[d]);
  withElementWord(input.elementByteWidth(), [&](auto *word) {
    using T = std::remove_pointer_t<decltype(word)>;
    copyWithInnerDim(reinterpret_cast<const T *>(input.rawData()),
                     reinterpret_cast<T *>(result.rawData()), layout);
  });
  return success();
}

static LogicalResult copyWithShape(Operation *op, const Tensor &input,
                                   Tensor &result) {
  if (input.numElements() != result.numElements() ||
      input.dtype() != result.dtype())
    return op->emitError() << "'" << op->getName() << "' cannot turn "
                           << input.describe() << " into " << result.describe()
                           << ": element counts or dtypes differ";
  if (result.numElements() > 0)
    std::memcpy(result.rawData(), input.rawData(), result.byteSize());
  return success();
}

namespace {
struct TransposeKernel
    : shardc::detail::KernelModel<TransposeKernel, TransposeOp> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *> in,
                               Tensor &result, uint64_t) const {
    return evalTranspose(cast<TransposeOp>(op), *in[0], result);
  }
};
struct BroadcastInDimKernel
    : shardc::detail::KernelModel<BroadcastInDimKernel, BroadcastInDimOp> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *> in,
                               Tensor &result, uint64_t) const {
    return evalBroadcastInDim(cast<BroadcastInDimOp>(op), *in[0], result);
  }
  static bool getOperandView(Operation *op, SmallVectorImpl<int64_t> &strides) {
    auto broadcast = cast<BroadcastInDimOp>(op);
    auto inType = cast<RankedTensorType>(broadcast.getInput().getType());
    auto outType = cast<RankedTensorType>(broadcast.getType());
    ArrayRef<int64_t> dims = broadcast.getDims();
    if (static_cast<int64_t>(dims.size()) != inType.getRank())
      return false;
    SmallVector<int64_t> inStrides = rowMajorStrides(inType.getShape());
    strides.assign(outType.getRank(), 0);
    for (auto [i, d] : llvm::enumerate(dims)) {
      if (d < 0 || d >= outType.getRank() ||
          (inType.getDimSize(i) != 1 &&
           inType.getDimSize(i) != outType.getDimSize(d)))
        return false;
      // A size-1 operand dim repeats: it never advances.
      if (inType.getDimSize(i) != 1)
        strides[d] = inStrides[i];
    }
    return true;
  }
};
/// A reshape relabels the row-major elements.
struct ReshapeKernel : shardc::detail::KernelModel<ReshapeKernel, ReshapeOp> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *> in,
                               Tensor &result, uint64_t) const {
    return copyWithShape(op, *in[0], result);
  }
  bool canRelabelOperand(Operation *op, const Tensor &input) const {
    return input.numElements() ==
           cast<RankedTensorType>(op->getResult(0).getType()).getNumElements();
  }
};
/// A sharding constraint returns its operand.
struct ShardingConstraintKernel
    : shardc::detail::KernelModel<ShardingConstraintKernel,
                                  ShardingConstraintOp> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *> in,
                               Tensor &result, uint64_t) const {
    if (in[0]->shape() != result.shape())
      return op->emitError()
             << "sharding_constraint operand " << in[0]->describe()
             << " differs from its result " << result.describe();
    return copyWithShape(op, *in[0], result);
  }
  bool canRelabelOperand(Operation *op, const Tensor &input) const {
    return input.shape() ==
           cast<RankedTensorType>(op->getResult(0).getType()).getShape();
  }
};
} // namespace

void shardc::detail::attachLayoutKernels(MLIRContext *ctx) {
  TransposeOp::attachInterface<TransposeKernel>(*ctx);
  BroadcastInDimOp::attachInterface<BroadcastInDimKernel>(*ctx);
  registerViewHooks<BroadcastInDimOp, BroadcastInDimKernel>();
  ReshapeOp::attachInterface<ReshapeKernel>(*ctx);
  ShardingConstraintOp::attachInterface<ShardingConstraintKernel>(*ctx);
}

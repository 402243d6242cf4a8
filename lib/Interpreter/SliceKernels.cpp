//===- SliceKernels.cpp - slice, concatenate and pad ----------------------===//
//
// Data-movement kernels, written once over the element type `T` (they only
// copy elements, so every dtype shares them); the models below run them on
// f32 storage. Each evaluator first checks the op's attributes against its
// operand and result tensors, so that unverified IR cannot make a raw kernel
// read or write out of bounds.
//
//===----------------------------------------------------------------------===//

#include "KernelImpl.h"

#include <algorithm>
#include <cstring>

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;
using llvm::ArrayRef;
using llvm::SmallVector;

namespace {

//===----------------------------------------------------------------------===//
// Raw kernels
//===----------------------------------------------------------------------===//

/// dst[dstSteps . i] = src[srcSteps . i] for every index i of `shape`
/// (rank >= 1): slice reads a strided view, pad writes one. The walk covers
/// the outer dims; the innermost is a run (a copy when both steps are 1).
template <typename T>
void copyStrided(const T *src, ArrayRef<int64_t> srcSteps, T *dst,
                 ArrayRef<int64_t> dstSteps, ArrayRef<int64_t> shape) {
  int64_t inner = shape.back();
  int64_t srcStep = srcSteps.back(), dstStep = dstSteps.back();
  SmallVector<int64_t> outer(shape.drop_back());
  StridedWalk walk(outer, srcSteps.drop_back(), dstSteps.drop_back());
  do {
    const T *from = src + walk.offsetA();
    T *to = dst + walk.offsetB();
    if (srcStep == 1 && dstStep == 1)
      std::copy_n(from, inner, to);
    else
      for (int64_t i = 0; i < inner; ++i)
        to[i * dstStep] = from[i * srcStep];
  } while (walk.next());
}

/// out[i...] = in[start + i * stride ...] for every index of `outShape`.
template <typename T>
void sliceKernel(const T *in, ArrayRef<int64_t> inShape, ArrayRef<int64_t> start,
                 ArrayRef<int64_t> stride, T *out, ArrayRef<int64_t> outShape) {
  int64_t rank = inShape.size();
  if (rank == 0) {
    out[0] = in[0];
    return;
  }
  SmallVector<int64_t> inStrides = rowMajorStrides(inShape);
  SmallVector<int64_t> steps(rank);
  int64_t base = 0;
  for (int64_t d = 0; d < rank; ++d) {
    base += start[d] * inStrides[d];
    steps[d] = stride[d] * inStrides[d];
  }
  copyStrided(in + base, steps, out, rowMajorStrides(outShape), outShape);
}

/// out = `value` everywhere, then in[i...] at low + i * (interior + 1).
template <typename T>
void padKernel(const T *in, ArrayRef<int64_t> inShape, T value,
               ArrayRef<int64_t> low, ArrayRef<int64_t> interior, T *out,
               ArrayRef<int64_t> outShape) {
  std::fill_n(out, productOf(outShape), value);
  int64_t rank = inShape.size();
  if (productOf(inShape) == 0)
    return;
  if (rank == 0) {
    out[0] = in[0];
    return;
  }
  SmallVector<int64_t> outStrides = rowMajorStrides(outShape);
  SmallVector<int64_t> steps(rank);
  int64_t base = 0;
  for (int64_t d = 0; d < rank; ++d) {
    base += low[d] * outStrides[d];
    steps[d] = (interior[d] + 1) * outStrides[d];
  }
  copyStrided(in, rowMajorStrides(inShape), out + base, steps, inShape);
}

/// Copies each `ins[i]` (of `sizes[i]` along `dim`) into its stretch of
/// `out`: the tensors are [outer, size * inner] blocks of rows.
template <typename T>
void concatenateKernel(ArrayRef<const T *> ins, ArrayRef<int64_t> sizes,
                       int64_t outer, int64_t inner, T *out) {
  int64_t total = 0;
  for (int64_t s : sizes)
    total += s;
  int64_t offset = 0;
  for (auto [in, size] : llvm::zip(ins, sizes)) {
    int64_t chunk = size * inner;
    if (chunk > 0)
      for (int64_t o = 0; o < outer; ++o)
        std::copy_n(in + o * chunk, chunk, out + o * total * inner + offset);
    offset += chunk;
  }
}

//===----------------------------------------------------------------------===//
// Evaluators: attributes checked against the tensors
//===----------------------------------------------------------------------===//

LogicalResult shapeError(Operation *op, const Tensor &result,
                         ArrayRef<int64_t> expected) {
  return op->emitError() << "'" << op->getName() << "' result shape "
                         << formatShape(result.shape()) << " should be "
                         << formatShape(expected);
}

/// Operands and result of the slice family share one element type (the
/// verifier says so; a hand-built program might not).
LogicalResult dtypeError(Operation *op, const Tensor &a, const Tensor &b) {
  return op->emitError() << "'" << op->getName() << "' mixes element types "
                         << dtypeName(a.dtype()) << " and "
                         << dtypeName(b.dtype());
}

LogicalResult evalSlice(SliceOp op, const Tensor &input, Tensor &result) {
  ArrayRef<int64_t> start = op.getStart(), limit = op.getLimit();
  int64_t rank = input.rank();
  SmallVector<int64_t> stride =
      op.getStride().empty() ? SmallVector<int64_t>(rank, 1)
                             : SmallVector<int64_t>(op.getStride());
  if (static_cast<int64_t>(start.size()) != rank ||
      static_cast<int64_t>(limit.size()) != rank ||
      static_cast<int64_t>(stride.size()) != rank)
    return op.emitError() << "slice start, limit and stride need one entry "
                             "per operand dim ("
                          << rank << ")";
  SmallVector<int64_t> expected;
  for (int64_t d = 0; d < rank; ++d) {
    if (start[d] < 0 || start[d] > limit[d] || limit[d] > input.dim(d) ||
        stride[d] < 1)
      return op.emitError() << "slice of dim " << d << " is out of range";
    expected.push_back((limit[d] - start[d] + stride[d] - 1) / stride[d]);
  }
  if (result.shape() != ArrayRef<int64_t>(expected))
    return shapeError(op, result, expected);
  if (result.dtype() != input.dtype())
    return dtypeError(op, input, result);
  if (result.numElements() > 0)
    withComputedType(input.dtype(), [&](auto *tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      sliceKernel<T>(input.dataAs<T>(), input.shape(), start, stride,
                     result.dataAs<T>(), result.shape());
    });
  return success();
}

LogicalResult evalPad(PadOp op, const Tensor &input, const Tensor &value,
                      Tensor &result) {
  ArrayRef<int64_t> low = op.getLow(), high = op.getHigh();
  int64_t rank = input.rank();
  SmallVector<int64_t> interior =
      op.getInterior().empty() ? SmallVector<int64_t>(rank, 0)
                               : SmallVector<int64_t>(op.getInterior());
  if (value.rank() != 0)
    return op.emitError() << "pad padding_value must be a 0-d tensor, got "
                          << value.describe();
  if (static_cast<int64_t>(low.size()) != rank ||
      static_cast<int64_t>(high.size()) != rank ||
      static_cast<int64_t>(interior.size()) != rank)
    return op.emitError() << "pad low, high and interior need one entry per "
                             "operand dim ("
                          << rank << ")";
  SmallVector<int64_t> expected;
  for (int64_t d = 0; d < rank; ++d) {
    if (low[d] < 0 || high[d] < 0 || interior[d] < 0)
      return op.emitError() << "pad amounts of dim " << d << " are negative";
    int64_t size = input.dim(d);
    // The result tensor exists, so a valid size fits in int64; compare in
    // a wider type so that huge attributes cannot wrap around to it.
    __int128 n = static_cast<__int128>(low[d]) + high[d] + size +
                 static_cast<__int128>(size > 0 ? size - 1 : 0) * interior[d];
    if (d >= result.rank() || n != result.dim(d))
      return op.emitError() << "pad result dim " << d
                            << " does not match its operand and amounts";
    expected.push_back(result.dim(d));
  }
  if (result.shape() != ArrayRef<int64_t>(expected))
    return shapeError(op, result, expected);
  if (result.dtype() != input.dtype() || value.dtype() != input.dtype())
    return dtypeError(op, input, value.dtype() != input.dtype() ? value
                                                                : result);
  withComputedType(input.dtype(), [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    padKernel<T>(input.dataAs<T>(), input.shape(), value.dataAs<T>()[0], low,
                 interior, result.dataAs<T>(), result.shape());
  });
  return success();
}

LogicalResult evalConcatenate(ConcatenateOp op, ArrayRef<const Tensor *> ins,
                              Tensor &result) {
  int64_t dim = op.getDimension(), rank = result.rank();
  if (ins.empty() || dim < 0 || dim >= rank)
    return op.emitError() << "concatenate dimension " << dim
                          << " is out of range for rank " << rank;
  SmallVector<int64_t> expected(result.shape());
  expected[dim] = 0;
  SmallVector<const void *> data;
  SmallVector<int64_t> sizes;
  for (const Tensor *t : ins) {
    if (t->dtype() != result.dtype())
      return dtypeError(op, *t, result);
    if (t->rank() != rank)
      return op.emitError() << "concatenate operand " << t->describe()
                            << " does not have rank " << rank;
    for (int64_t d = 0; d < rank; ++d)
      if (d != dim && t->dim(d) != result.dim(d))
        return shapeError(op, result, t->shape());
    expected[dim] += t->dim(dim);
    data.push_back(t->rawData());
    sizes.push_back(t->dim(dim));
  }
  if (result.shape() != ArrayRef<int64_t>(expected))
    return shapeError(op, result, expected);
  if (result.numElements() == 0)
    return success();
  ArrayRef<int64_t> shape = result.shape();
  withComputedType(result.dtype(), [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    SmallVector<const T *> typed;
    for (const void *d : data)
      typed.push_back(static_cast<const T *>(d));
    concatenateKernel<T>(typed, sizes, productOf(shape.take_front(dim)),
                         productOf(shape.drop_front(dim + 1)),
                         result.dataAs<T>());
  });
  return success();
}

//===----------------------------------------------------------------------===//
// Kernel models
//===----------------------------------------------------------------------===//

struct SliceKernel : KernelModel<SliceKernel, SliceOp> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *> in,
                               Tensor &result, uint64_t) const {
    return evalSlice(cast<SliceOp>(op), *in[0], result);
  }
};
struct PadKernel : KernelModel<PadKernel, PadOp> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *> in,
                               Tensor &result, uint64_t) const {
    return evalPad(cast<PadOp>(op), *in[0], *in[1], result);
  }
};
struct ConcatenateKernel : KernelModel<ConcatenateKernel, ConcatenateOp> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *> in,
                               Tensor &result, uint64_t) const {
    return evalConcatenate(cast<ConcatenateOp>(op), in, result);
  }
};

} // namespace

void shardc::detail::attachSliceKernels(MLIRContext *ctx) {
  SliceOp::attachInterface<SliceKernel>(*ctx);
  PadOp::attachInterface<PadKernel>(*ctx);
  ConcatenateOp::attachInterface<ConcatenateKernel>(*ctx);
}

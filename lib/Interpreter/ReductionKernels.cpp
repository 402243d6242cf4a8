//===- ReduceKernels.cpp - reduce_sum and reduce_max ----------------------===//
//
// The input is read once, in order. After dropping size-1 dims and merging
// neighbours of the same kind (kept or reduced), the innermost group is
// either reduced (a contiguous run folded into one output element) or kept
// (a contiguous run folded elementwise into a contiguous output row); both
// are single Eigen expressions.
//
//===----------------------------------------------------------------------===//

#include "KernelImpl.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;
using llvm::ArrayRef;
using llvm::SmallVector;

namespace {
using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;

/// Input dims grouped: consecutive dims of the same kind merged.
struct ReduceLayout {
  SmallVector<int64_t> sizes;
  SmallVector<bool> reduced;

  void push(int64_t size, bool isReduced) {
    if (size == 1)
      return;
    if (!sizes.empty() && reduced.back() == isReduced) {
      sizes.back() *= size;
      return;
    }
    sizes.push_back(size);
    reduced.push_back(isReduced);
  }
};
} // namespace

/// max that propagates NaN, as jnp.max does. std::max and Eigen's default
/// (PropagateFast) keep or drop a NaN depending on the operand order and on
/// where it falls in a SIMD packet, so the same values gave different
/// results in tensors of different shapes (a sharded program's local blocks
/// and the unsharded tensor).
static float maxPropagatingNaN(float a, float b) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<float>::quiet_NaN()
                                        : std::max(a, b);
}

/// Folds `in` into `out` (already holding the identity of the reduction).
static void reduceKernel(const float *in, ArrayRef<int64_t> inShape,
                         const llvm::SmallBitVector &reducedDims, bool isMax,
                         float *out) {
  ReduceLayout layout;
  for (auto [d, size] : llvm::enumerate(inShape))
    layout.push(size, reducedDims.test(d));
  if (layout.sizes.empty()) {
    out[0] = isMax ? maxPropagatingNaN(out[0], in[0]) : out[0] + in[0];
    return;
  }
  SmallVector<int64_t> inStrides =
      shardc::detail::rowMajorStrides(layout.sizes);
  // Output strides: row-major over the kept groups, 0 for reduced ones.
  SmallVector<int64_t> outStrides(layout.sizes.size(), 0);
  int64_t stride = 1;
  for (int64_t g = static_cast<int64_t>(layout.sizes.size()) - 1; g >= 0; --g) {
    if (!layout.reduced[g]) {
      outStrides[g] = stride;
      stride *= layout.sizes[g];
    }
  }
  int64_t inner = layout.sizes.back();
  bool innerReduced = layout.reduced.back();
  layout.sizes.pop_back();
  inStrides.pop_back();
  outStrides.pop_back();
  shardc::detail::StridedWalk walk(layout.sizes, inStrides, outStrides);
  do {
    ConstArrayMap src(in + walk.offsetA(), inner);
    float *dst = out + walk.offsetB();
    if (innerReduced) {
      *dst = isMax ? maxPropagatingNaN(
                         *dst, src.template maxCoeff<Eigen::PropagateNaN>())
                   : *dst + src.sum();
    } else {
      ArrayMap row(dst, inner);
      if (isMax)
        row = row.binaryExpr(
            src, Eigen::internal::scalar_max_op<float, float,
                                                Eigen::PropagateNaN>());
      else
        row += src;
    }
  } while (walk.next());
}

static LogicalResult evalReduce(Operation *op, ArrayRef<int64_t> dims,
                                bool isMax, const Tensor &input,
                                Tensor &result) {
  llvm::SmallBitVector reduced(input.rank());
  for (int64_t d : dims) {
    if (d < 0 || d >= input.rank() || reduced.test(d))
      return op->emitError() << "'" << op->getName() << "' dims must be "
                             << "unique and in range of rank " << input.rank();
    reduced.set(d);
  }
  SmallVector<int64_t> expected;
  for (int64_t d = 0; d < input.rank(); ++d)
    if (!reduced.test(d))
      expected.push_back(input.dim(d));
  if (result.shape() != ArrayRef<int64_t>(expected))
    return op->emitError() << "'" << op->getName() << "' result shape "
                           << formatShape(result.shape()) << " should be "
                           << formatShape(expected);
  // The identity of the reduction; an empty reduced dim leaves it there
  // (sum 0, max -inf, as NumPy's initial values).
  if (isMax)
    std::fill_n(result.data(), result.numElements(),
                -std::numeric_limits<float>::infinity());
  if (input.numElements() == 0)
    return success();
  reduceKernel(input.data(), input.shape(), reduced, isMax, result.data());
  return success();
}

namespace {
/// Reductions accumulate into their result, which starts as zeros.
template <typename OpT, bool IsMax>
struct ReduceKernel : shardc::detail::KernelModel<ReduceKernel<OpT, IsMax>, OpT> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *> in,
                               Tensor &result, uint64_t) const {
    return evalReduce(op, cast<OpT>(op).getDims(), IsMax, *in[0], result);
  }
  bool accumulatesIntoZeros(Operation *) const { return true; }
};
} // namespace

void shardc::detail::attachReductionKernels(MLIRContext *ctx) {
  ReduceSumOp::attachInterface<ReduceKernel<ReduceSumOp, false>>(*ctx);
  ReduceMaxOp::attachInterface<ReduceKernel<ReduceMaxOp, true>>(*ctx);
}

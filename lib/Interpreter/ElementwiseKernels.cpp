//===- ElementwiseKernels.cpp - every elementwise op, from its ODS formula ===//
//
// One kernel model per arity, attached to every op of the dialect with the
// UnaryElementwise or BinaryElementwise trait (found at compile time from the
// generated op list): the op's `computeElements` expression, instantiated on
// Eigen arrays, is one vectorized pass over contiguous f32 storage with no
// temporaries. Ops declared with integers (add, sub, mul) also run on i32
// and i64 storage. A new elementwise op needs no code here.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseFusion.h"
#include "KernelImpl.h"

#include <Eigen/Core>

#include <cstring>

using namespace mlir;
using namespace shardc;

namespace {
using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;

/// Recomputes with `exact` the elements where `x` is below `threshold`.
/// Where an op's vectorized path is inexact for rare inputs (Eigen's SIMD
/// exp clamps at -88.4, its log reads a subnormal as the smallest normal)
/// while the scalar path at a tensor's tail is right, an element's result
/// would depend on its position; one compare per element fixes them.
///
/// An element equal to the previous one recomputed reuses its result: a
/// causal mask's -1e9 shifted by a row's max fills half of every attention
/// row with one value, and glibc's expf takes a slow underflow path there.
void fixBelow(const float *x, float *y, int64_t n, float threshold,
              float (*exact)(float)) {
  // Compared as bits: -0 and 0 differ, a NaN equals its own bits.
  uint32_t lastBits = 0;
  float lastY = 0;
  bool haveLast = false;
  for (int64_t i = 0; i < n; ++i) {
    if (!(x[i] < threshold))
      continue;
    uint32_t bits;
    std::memcpy(&bits, &x[i], sizeof bits);
    if (!haveLast || bits != lastBits) {
      lastBits = bits;
      lastY = exact(x[i]);
      haveLast = true;
    }
    y[i] = lastY;
  }
}

template <typename OpT>
struct UnaryKernel : shardc::detail::KernelModel<UnaryKernel<OpT>, OpT> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *> in,
                               Tensor &result, uint64_t) const {
    const Tensor &input = *in[0];
    if (input.shape() != result.shape())
      return op->emitError() << "'" << op->getName() << "' operand of shape "
                             << formatShape(input.shape())
                             << " does not match its result shape "
                             << formatShape(result.shape());
    compute(input.data(), result.data(), input.numElements());
    return success();
  }
  static bool computesElementwise(Operation *) { return true; }
  static void evaluateElements(Operation *, ArrayRef<const void *> in,
                               void *out, int64_t, int64_t count) {
    compute(static_cast<const float *>(in[0]), static_cast<float *>(out),
            count);
  }

  /// The op on `n` contiguous elements: the whole tensor, or a block of a
  /// fused pass.
  static void compute(const float *in, float *out, int64_t n) {
    if (n == 0)
      return;
    ConstArrayMap x(in, n);
    ArrayMap y(out, n);
    y = OpT::computeElements(x);
    if constexpr (OpT::kHasExactBelow)
      fixBelow(in, out, n, OpT::kExactBelow, &OpT::computeExactElement);
  }
};

template <typename OpT>
struct BinaryKernel : shardc::detail::KernelModel<BinaryKernel<OpT>, OpT> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *> in,
                               Tensor &result, uint64_t) const {
    const Tensor &lhs = *in[0], &rhs = *in[1];
    if (lhs.shape() != result.shape() || rhs.shape() != result.shape())
      return op->emitError() << "'" << op->getName() << "' operands of shapes "
                             << formatShape(lhs.shape()) << " and "
                             << formatShape(rhs.shape())
                             << " do not match its result shape "
                             << formatShape(result.shape())
                             << " (there is no implicit broadcasting)";
    if (result.numElements() == 0)
      return success();
    if (lhs.dtype() != result.dtype() || rhs.dtype() != result.dtype())
      return op->emitError() << "'" << op->getName() << "' operands "
                             << lhs.describe() << " and " << rhs.describe()
                             << " do not match its result "
                             << result.describe();
    if (!computes(result.dtype()))
      return op->emitError() << "'" << op->getName() << "' does not compute "
                             << result.describe();
    compute(result.dtype(), lhs.rawData(), rhs.rawData(), result.rawData(),
            result.numElements());
    return success();
  }
  static bool computesElementwise(Operation *op) {
    return computes(shardc::detail::dtypeOf(op->getResult(0)));
  }
  static void evaluateElements(Operation *op, ArrayRef<const void *> in,
                               void *out, int64_t, int64_t count) {
    compute(shardc::detail::dtypeOf(op->getResult(0)), in[0], in[1], out,
            count);
  }

  static bool computes(DType dtype) {
    if constexpr (OpT::kAcceptsIntegers)
      if (dtype == DType::I32 || dtype == DType::I64)
        return true;
    return dtype == DType::F32;
  }

  /// The op on `n` contiguous elements of `dtype` (one `computes`): the
  /// whole tensor, or a block of a fused pass.
  static void compute(DType dtype, const void *lhs, const void *rhs, void *out,
                      int64_t n) {
    if (n == 0)
      return;
    if constexpr (OpT::kAcceptsIntegers) {
      if (dtype == DType::I32)
        return computeWrapping<uint32_t>(lhs, rhs, out, n);
      if (dtype == DType::I64)
        return computeWrapping<uint64_t>(lhs, rhs, out, n);
    }
    ConstArrayMap a(static_cast<const float *>(lhs), n);
    ConstArrayMap b(static_cast<const float *>(rhs), n);
    ArrayMap y(static_cast<float *>(out), n);
    y = OpT::computeElements(a, b);
  }

  /// Index arithmetic on signed integers, computed on their `Unsigned`
  /// bits so that overflow wraps around (signed overflow would be undefined
  /// behaviour); the formula is the float one.
  template <typename Unsigned>
  static void computeWrapping(const void *lhs, const void *rhs, void *out,
                              int64_t n) {
    using Array = Eigen::Array<Unsigned, Eigen::Dynamic, 1>;
    Eigen::Map<const Array> a(static_cast<const Unsigned *>(lhs), n);
    Eigen::Map<const Array> b(static_cast<const Unsigned *>(rhs), n);
    Eigen::Map<Array> y(static_cast<Unsigned *>(out), n);
    y = OpT::computeElements(a, b);
  }
};

template <typename OpT> void attachIfElementwise(MLIRContext *ctx) {
  using shardc::detail::registerElementwiseHooks;
  if constexpr (OpT::template hasTrait<shardc::OpTrait::UnaryElementwise>()) {
    OpT::template attachInterface<UnaryKernel<OpT>>(*ctx);
    registerElementwiseHooks<OpT, UnaryKernel<OpT>>();
  } else if constexpr (OpT::template hasTrait<
                           shardc::OpTrait::BinaryElementwise>()) {
    OpT::template attachInterface<BinaryKernel<OpT>>(*ctx);
    registerElementwiseHooks<OpT, BinaryKernel<OpT>>();
  }
}

template <typename... Ops> void attachToElementwise(MLIRContext *ctx) {
  (attachIfElementwise<Ops>(ctx), ...);
}
} // namespace

void shardc::detail::attachElementwiseKernels(MLIRContext *ctx) {
  attachToElementwise<
#define GET_OP_LIST
#include "shardc/Dialect/ShardcOps.cpp.inc"
      >(ctx);
}

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

#include "KernelImpl.h"

#include <Eigen/Core>

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
void fixBelow(const float *x, float *y, int64_t n, float threshold,
              float (*exact)(float)) {
  for (int64_t i = 0; i < n; ++i)
    if (x[i] < threshold)
      y[i] = exact(x[i]);
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
    if (input.numElements() == 0)
      return success();
    ConstArrayMap x(input.data(), input.numElements());
    ArrayMap y(result.data(), result.numElements());
    y = OpT::computeElements(x);
    if constexpr (OpT::kHasExactBelow)
      fixBelow(input.data(), result.data(), input.numElements(),
               OpT::kExactBelow, &OpT::computeExactElement);
    return success();
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
    if constexpr (OpT::kAcceptsIntegers) {
      if (result.dtype() == DType::I32)
        return computeWrapping<int32_t, uint32_t>(lhs, rhs, result);
      if (result.dtype() == DType::I64)
        return computeWrapping<int64_t, uint64_t>(lhs, rhs, result);
    }
    if (result.dtype() != DType::F32)
      return op->emitError() << "'" << op->getName() << "' does not compute "
                             << result.describe();
    ConstArrayMap a(lhs.data(), lhs.numElements());
    ConstArrayMap b(rhs.data(), rhs.numElements());
    ArrayMap y(result.data(), result.numElements());
    y = OpT::computeElements(a, b);
    return success();
  }

  /// Index arithmetic on `Signed` integers, computed on their `Unsigned`
  /// bits so that overflow wraps around (signed overflow would be undefined
  /// behaviour); the formula is the float one.
  template <typename Signed, typename Unsigned>
  static LogicalResult computeWrapping(const Tensor &lhs, const Tensor &rhs,
                                       Tensor &result) {
    using Array = Eigen::Array<Unsigned, Eigen::Dynamic, 1>;
    int64_t n = result.numElements();
    Eigen::Map<const Array> a(
        reinterpret_cast<const Unsigned *>(lhs.dataAs<Signed>()), n);
    Eigen::Map<const Array> b(
        reinterpret_cast<const Unsigned *>(rhs.dataAs<Signed>()), n);
    Eigen::Map<Array> y(reinterpret_cast<Unsigned *>(result.dataAs<Signed>()),
                        n);
    y = OpT::computeElements(a, b);
    return success();
  }
};

template <typename OpT> void attachIfElementwise(MLIRContext *ctx) {
  if constexpr (OpT::template hasTrait<shardc::OpTrait::UnaryElementwise>())
    OpT::template attachInterface<UnaryKernel<OpT>>(*ctx);
  else if constexpr (OpT::template hasTrait<shardc::OpTrait::BinaryElementwise>())
    OpT::template attachInterface<BinaryKernel<OpT>>(*ctx);
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

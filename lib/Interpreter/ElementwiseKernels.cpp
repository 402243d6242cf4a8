//===- ElementwiseKernels.cpp - every elementwise op, from its ODS formula ===//
//
// One kernel model per arity, attached to every op of the dialect with the
// UnaryElementwise or BinaryElementwise trait (found at compile time from the
// generated op list): the op's `computeElements` expression, instantiated on
// Eigen arrays (shardc/Dialect/ElementwiseKernel.h, which the ops' `fold`
// shares), is one vectorized pass over contiguous f32 storage with no
// temporaries. Ops declared with integers (add, sub, mul, div, max, min)
// also run on i32 and i64 storage. A new elementwise op needs no code here.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseFusion.h"
#include "KernelImpl.h"

#include "shardc/Dialect/ElementwiseKernel.h"

using namespace mlir;
using namespace shardc;

namespace {
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
    elementwise::computeUnary<OpT>(in, out, n);
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
    return (dtype == DType::F32 && elementwise::computesBinary<OpT, float>()) ||
           (dtype == DType::I32 &&
            elementwise::computesBinary<OpT, int32_t>()) ||
           (dtype == DType::I64 && elementwise::computesBinary<OpT, int64_t>());
  }

  /// The op on `n` contiguous elements of `dtype` (one `computes`): the
  /// whole tensor, or a block of a fused pass.
  static void compute(DType dtype, const void *lhs, const void *rhs, void *out,
                      int64_t n) {
    if constexpr (OpT::kAcceptsIntegers) {
      if (dtype == DType::I32)
        return elementwise::computeBinary<OpT>(
            static_cast<const int32_t *>(lhs),
            static_cast<const int32_t *>(rhs), static_cast<int32_t *>(out), n);
      if (dtype == DType::I64)
        return elementwise::computeBinary<OpT>(
            static_cast<const int64_t *>(lhs),
            static_cast<const int64_t *>(rhs), static_cast<int64_t *>(out), n);
    }
    elementwise::computeBinary<OpT>(static_cast<const float *>(lhs),
                                    static_cast<const float *>(rhs),
                                    static_cast<float *>(out), n);
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

//===- ElementwiseKernels.cpp - unary and binary elementwise ops ----------===//
//
// Eigen array expressions: each op is one vectorized pass over contiguous
// f32 storage, with no temporaries.
//
//===----------------------------------------------------------------------===//

#include "KernelImpl.h"

#include "llvm/ADT/TypeSwitch.h"

#include <Eigen/Core>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace shardc;

namespace {
using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;
/// Recomputes with `exact` the elements where `x` is below `threshold`.
/// Eigen's SIMD exp clamps its argument at -88.4 (exp(-inf) came out as
/// 2.9e-39, as did sigmoid's tail, which uses it) and its log reads a
/// subnormal as the smallest normal float, while the scalar path taken at a
/// tensor's tail gets both right: an element's result depended on its
/// position. Such inputs are rare, so one compare per element fixes them.
template <typename Fn>
void fixBelow(const float *x, float *y, int64_t n, float threshold,
              Fn exact) {
  for (int64_t i = 0; i < n; ++i)
    if (x[i] < threshold)
      y[i] = exact(x[i]);
}

/// exp(x) is subnormal (or 0) below this: past Eigen's range.
constexpr float kExpSubnormal = -87.33654f;
} // namespace

LogicalResult shardc::detail::evalUnary(Operation *op, const Tensor &input,
                                        Tensor &result) {
  if (input.shape() != result.shape())
    return op->emitError() << "'" << op->getName() << "' operand of shape "
                           << formatShape(input.shape())
                           << " does not match its result shape "
                           << formatShape(result.shape());
  if (input.numElements() == 0)
    return success();
  ConstArrayMap x(input.data(), input.numElements());
  ArrayMap y(result.data(), result.numElements());
  bool handled = true;
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](ReluOp) { y = x.max(0.0f); })
      .Case([&](GeluOp) {
        // The tanh approximation, as jax.nn.gelu(approximate=True).
        constexpr float kSqrt2OverPi = 0.7978845608028654f;
        y = 0.5f * x *
            (1.0f + (kSqrt2OverPi * (x + 0.044715f * x.cube())).tanh());
      })
      .Case([&](ExpOp) {
        y = x.exp();
        fixBelow(input.data(), result.data(), input.numElements(),
                 kExpSubnormal, [](float v) { return std::exp(v); });
      })
      .Case([&](LogOp) {
        y = x.log();
        // Subnormals (and 0 and negative values, which the scalar log gets
        // right too: -inf and NaN).
        fixBelow(input.data(), result.data(), input.numElements(),
                 std::numeric_limits<float>::min(),
                 [](float v) { return std::log(v); });
      })
      .Case([&](NegOp) { y = -x; })
      .Case([&](TanhOp) { y = x.tanh(); })
      // Not Eigen's sqrt/rsqrt: with EIGEN_FAST_MATH (its default) their
      // SIMD path is an rsqrt estimate and a Newton step, which is off by
      // an ulp for many inputs, NaN for +inf, and unlike the scalar path
      // taken at a tensor's tail, so results depended on the position of
      // an element (and differed between sharded and unsharded programs).
      .Case([&](SqrtOp) {
        y = x.unaryExpr([](float v) { return std::sqrt(v); });
      })
      .Case([&](RsqrtOp) {
        y = x.unaryExpr([](float v) { return 1.0f / std::sqrt(v); });
      })
      .Case([&](SigmoidOp) {
        y = x.logistic();
        // 1 / (1 + e^-x) = e^x to float precision down there.
        fixBelow(input.data(), result.data(), input.numElements(),
                 kExpSubnormal, [](float v) { return std::exp(v); });
      })
      // 0 at 0 and for NaN: the comparison is false there.
      .Case([&](StepOp) { y = (x > 0.0f).cast<float>(); })
      .Default([&](Operation *) { handled = false; });
  if (!handled)
    return op->emitError() << "'" << op->getName()
                           << "' is not a unary elementwise op";
  return success();
}

LogicalResult shardc::detail::evalBinary(Operation *op, const Tensor &lhs,
                                         const Tensor &rhs, Tensor &result) {
  if (lhs.shape() != result.shape() || rhs.shape() != result.shape())
    return op->emitError() << "'" << op->getName() << "' operands of shapes "
                           << formatShape(lhs.shape()) << " and "
                           << formatShape(rhs.shape())
                           << " do not match its result shape "
                           << formatShape(result.shape())
                           << " (there is no implicit broadcasting)";
  if (result.numElements() == 0)
    return success();
  ConstArrayMap a(lhs.data(), lhs.numElements());
  ConstArrayMap b(rhs.data(), rhs.numElements());
  ArrayMap y(result.data(), result.numElements());
  bool handled = true;
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](AddOp) { y = a + b; })
      .Case([&](SubOp) { y = a - b; })
      .Case([&](MulOp) { y = a * b; })
      .Case([&](DivOp) { y = a / b; })
      .Case([&](MaxOp) { y = a.max(b); })
      .Default([&](Operation *) { handled = false; });
  if (!handled)
    return op->emitError() << "'" << op->getName()
                           << "' is not a binary elementwise op";
  return success();
}

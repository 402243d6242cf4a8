//===- ElementTypeKernels.cpp - iota, compare, select and convert ---------===//
//
// Kernels over every computed dtype: each is a template on the C++ element
// types, dispatched on the tensors' dtypes (withComputedType).
//
//===----------------------------------------------------------------------===//

#include "KernelImpl.h"

#include <cmath>
#include <limits>
#include <type_traits>

using namespace mlir;
using namespace shardc;
using llvm::ArrayRef;

/// Calls `f(tag)` with the element type of `t`, after checking that `t` is
/// of a computed dtype.
template <typename Fn> static void withElements(const Tensor &t, Fn &&f) {
  withComputedType(t.dtype(), std::forward<Fn>(f));
}

//===----------------------------------------------------------------------===//
// iota
//===----------------------------------------------------------------------===//

static LogicalResult evalIota(IotaOp op, Tensor &result) {
  int64_t dim = op.getDimension();
  if (dim < 0 || dim >= result.rank())
    return op.emitError() << "iota dimension " << dim
                          << " is out of range for " << result.describe();
  // Row-major: the index along `dim` is (i / inner) % size.
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < result.rank(); ++d)
    inner *= result.dim(d);
  int64_t size = result.dim(dim);
  withElements(result, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    T *out = result.dataAs<T>();
    for (int64_t i = 0, e = result.numElements(); i < e; ++i)
      out[i] = static_cast<T>((i / inner) % size);
  });
  return success();
}

//===----------------------------------------------------------------------===//
// compare
//===----------------------------------------------------------------------===//

template <typename T>
static void compareElements(const T *a, const T *b, uint8_t *out, int64_t n,
                            CompareDirection dir) {
  for (int64_t i = 0; i < n; ++i) {
    bool r = false;
    switch (dir) {
    case CompareDirection::EQ:
      r = a[i] == b[i];
      break;
    case CompareDirection::NE:
      r = a[i] != b[i];
      break;
    case CompareDirection::LT:
      r = a[i] < b[i];
      break;
    case CompareDirection::LE:
      r = a[i] <= b[i];
      break;
    case CompareDirection::GT:
      r = a[i] > b[i];
      break;
    case CompareDirection::GE:
      r = a[i] >= b[i];
      break;
    }
    out[i] = r;
  }
}

static LogicalResult evalCompare(CompareOp op, const Tensor &lhs,
                                 const Tensor &rhs, Tensor &result) {
  std::optional<CompareDirection> dir =
      symbolizeCompareDirection(op.getDirection());
  if (!dir || lhs.dtype() != rhs.dtype() || lhs.shape() != rhs.shape() ||
      result.dtype() != DType::I1)
    return op.emitError() << "compare of " << lhs.describe() << " and "
                          << rhs.describe() << " with direction \""
                          << op.getDirection() << "\" is not supported";
  withElements(lhs, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    compareElements(lhs.dataAs<T>(), rhs.dataAs<T>(),
                    result.dataAs<uint8_t>(), result.numElements(), *dir);
  });
  return success();
}

//===----------------------------------------------------------------------===//
// select
//===----------------------------------------------------------------------===//

static LogicalResult evalSelect(SelectOp op, const Tensor &pred,
                                const Tensor &onTrue, const Tensor &onFalse,
                                Tensor &result) {
  if (pred.dtype() != DType::I1 || onTrue.dtype() != onFalse.dtype() ||
      onTrue.dtype() != result.dtype() ||
      pred.numElements() != result.numElements() ||
      onTrue.numElements() != result.numElements() ||
      onFalse.numElements() != result.numElements())
    return op.emitError() << "select of " << pred.describe() << ", "
                          << onTrue.describe() << ", " << onFalse.describe()
                          << " cannot produce " << result.describe();
  const uint8_t *p = pred.dataAs<uint8_t>();
  withElements(result, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T *t = onTrue.dataAs<T>(), *f = onFalse.dataAs<T>();
    T *out = result.dataAs<T>();
    for (int64_t i = 0, e = result.numElements(); i < e; ++i)
      out[i] = p[i] ? t[i] : f[i];
  });
  return success();
}

//===----------------------------------------------------------------------===//
// convert
//===----------------------------------------------------------------------===//

/// One element of type From as To: see ConvertOp's description.
template <typename To, typename From> static To convertElement(From x) {
  if constexpr (std::is_same_v<To, uint8_t>) {
    return x != From(0);
  } else if constexpr (std::is_floating_point_v<From> &&
                       std::is_integral_v<To>) {
    if (std::isnan(x))
      return 0;
    // Saturate: the bounds as floats round up for i32/i64 maxima, so compare
    // with >= and return the exact bound.
    if (x >= static_cast<From>(std::numeric_limits<To>::max()))
      return std::numeric_limits<To>::max();
    if (x <= static_cast<From>(std::numeric_limits<To>::min()))
      return std::numeric_limits<To>::min();
    return static_cast<To>(x); // truncates toward zero
  } else {
    return static_cast<To>(x);
  }
}

static LogicalResult evalConvert(ConvertOp op, const Tensor &input,
                                 Tensor &result) {
  if (input.numElements() != result.numElements())
    return op.emitError() << "convert of " << input.describe()
                          << " cannot produce " << result.describe();
  withElements(input, [&](auto *fromTag) {
    using From = std::remove_pointer_t<decltype(fromTag)>;
    withElements(result, [&](auto *toTag) {
      using To = std::remove_pointer_t<decltype(toTag)>;
      const From *in = input.dataAs<From>();
      To *out = result.dataAs<To>();
      for (int64_t i = 0, e = result.numElements(); i < e; ++i)
        out[i] = convertElement<To>(in[i]);
    });
  });
  return success();
}

namespace {
struct IotaKernel : shardc::detail::KernelModel<IotaKernel, IotaOp> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *>,
                               Tensor &result, uint64_t) const {
    return evalIota(cast<IotaOp>(op), result);
  }
};
struct CompareKernel : shardc::detail::KernelModel<CompareKernel, CompareOp> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *> in,
                               Tensor &result, uint64_t) const {
    return evalCompare(cast<CompareOp>(op), *in[0], *in[1], result);
  }
};
struct SelectKernel : shardc::detail::KernelModel<SelectKernel, SelectOp> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *> in,
                               Tensor &result, uint64_t) const {
    return evalSelect(cast<SelectOp>(op), *in[0], *in[1], *in[2], result);
  }
};
struct ConvertKernel : shardc::detail::KernelModel<ConvertKernel, ConvertOp> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *> in,
                               Tensor &result, uint64_t) const {
    return evalConvert(cast<ConvertOp>(op), *in[0], result);
  }
};
} // namespace

void shardc::detail::attachElementTypeKernels(MLIRContext *ctx) {
  IotaOp::attachInterface<IotaKernel>(*ctx);
  CompareOp::attachInterface<CompareKernel>(*ctx);
  SelectOp::attachInterface<SelectKernel>(*ctx);
  ConvertOp::attachInterface<ConvertKernel>(*ctx);
}

//===- ElementTypeKernels.cpp - iota, compare, select and convert ---------===//
//
// Kernels over every computed dtype: each is a template on the C++ element
// types, dispatched on the tensors' dtypes (withComputedType).
//
//===----------------------------------------------------------------------===//

#include "ElementwiseFusion.h"
#include "KernelImpl.h"

#include <algorithm>
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

/// Elements `begin` .. `begin + count - 1` of iota `op`'s result (of
/// `shape` and `dtype`) into `out`.
static void iotaElements(IotaOp op, ArrayRef<int64_t> shape, DType dtype,
                         void *out, int64_t begin, int64_t count) {
  int64_t dim = op.getDimension();
  // Row-major: the index along `dim` is (i / inner) % size.
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < static_cast<int64_t>(shape.size()); ++d)
    inner *= shape[d];
  int64_t size = shape[dim];
  withComputedType(dtype, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    T *o = static_cast<T *>(out);
    // Divisions only for the first element: then runs of `inner` equal
    // values (or, along the innermost dim, ramps up to `size`), each run
    // one vector loop.
    int64_t value = (begin / inner) % size, step = begin % inner;
    while (count > 0) {
      if (inner == 1) {
        int64_t run = std::min(count, size - value);
        for (int64_t k = 0; k < run; ++k)
          o[k] = static_cast<T>(value + k);
        o += run;
        count -= run;
        value = 0;
        continue;
      }
      int64_t run = std::min(count, inner - step);
      std::fill_n(o, run, static_cast<T>(value));
      o += run;
      count -= run;
      step = 0;
      if (++value == size)
        value = 0;
    }
  });
}

static LogicalResult evalIota(IotaOp op, Tensor &result) {
  int64_t dim = op.getDimension();
  if (dim < 0 || dim >= result.rank())
    return op.emitError() << "iota dimension " << dim << " is out of range for "
                          << result.describe();
  iotaElements(op, result.shape(), result.dtype(), result.rawData(), 0,
               result.numElements());
  return success();
}

//===----------------------------------------------------------------------===//
// compare
//===----------------------------------------------------------------------===//

/// One loop per direction (the direction chosen once, not per element), so
/// that each is a vector loop.
template <typename T>
static void compareElements(const T *a, const T *b, uint8_t *out, int64_t n,
                            CompareDirection dir) {
  auto each = [&](auto holds) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = holds(a[i], b[i]) ? 1 : 0;
  };
  switch (dir) {
  case CompareDirection::EQ:
    return each([](T x, T y) { return x == y; });
  case CompareDirection::NE:
    return each([](T x, T y) { return x != y; });
  case CompareDirection::LT:
    return each([](T x, T y) { return x < y; });
  case CompareDirection::LE:
    return each([](T x, T y) { return x <= y; });
  case CompareDirection::GT:
    return each([](T x, T y) { return x > y; });
  case CompareDirection::GE:
    return each([](T x, T y) { return x >= y; });
  }
}

/// compareElements on operands of `dtype` given as raw storage.
static void compareRange(DType dtype, CompareDirection dir, const void *lhs,
                         const void *rhs, void *out, int64_t n) {
  withComputedType(dtype, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    compareElements(static_cast<const T *>(lhs), static_cast<const T *>(rhs),
                    static_cast<uint8_t *>(out), n, dir);
  });
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
  compareRange(lhs.dtype(), *dir, lhs.rawData(), rhs.rawData(),
               result.rawData(), result.numElements());
  return success();
}

//===----------------------------------------------------------------------===//
// select
//===----------------------------------------------------------------------===//

/// `n` elements of select: pred (one byte each) ? onTrue : onFalse, the
/// values of `dtype`.
static void selectRange(DType dtype, const void *pred, const void *onTrue,
                        const void *onFalse, void *out, int64_t n) {
  const uint8_t *p = static_cast<const uint8_t *>(pred);
  withComputedType(dtype, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T *t = static_cast<const T *>(onTrue);
    const T *f = static_cast<const T *>(onFalse);
    T *o = static_cast<T *>(out);
    // Both values are read whatever the predicate, so the loop is a vector
    // blend rather than a branch per element.
    for (int64_t i = 0; i < n; ++i) {
      T onT = t[i], onF = f[i];
      o[i] = p[i] ? onT : onF;
    }
  });
}

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
  selectRange(result.dtype(), pred.rawData(), onTrue.rawData(),
              onFalse.rawData(), result.rawData(), result.numElements());
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

/// `n` elements of `from` converted to `to`.
static void convertRange(DType from, DType to, const void *input, void *out,
                         int64_t n) {
  withComputedType(from, [&](auto *fromTag) {
    using From = std::remove_pointer_t<decltype(fromTag)>;
    withComputedType(to, [&](auto *toTag) {
      using To = std::remove_pointer_t<decltype(toTag)>;
      const From *in = static_cast<const From *>(input);
      To *o = static_cast<To *>(out);
      for (int64_t i = 0; i < n; ++i)
        o[i] = convertElement<To>(in[i]);
    });
  });
}

static LogicalResult evalConvert(ConvertOp op, const Tensor &input,
                                 Tensor &result) {
  if (input.numElements() != result.numElements())
    return op.emitError() << "convert of " << input.describe()
                          << " cannot produce " << result.describe();
  convertRange(input.dtype(), result.dtype(), input.rawData(), result.rawData(),
               result.numElements());
  return success();
}

namespace {
using shardc::detail::dtypeOf;

struct IotaKernel : shardc::detail::KernelModel<IotaKernel, IotaOp> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *>,
                               Tensor &result, uint64_t) const {
    return evalIota(cast<IotaOp>(op), result);
  }
  static bool computesElementwise(Operation *op) {
    auto iota = cast<IotaOp>(op);
    int64_t rank = cast<RankedTensorType>(iota.getType()).getRank();
    int64_t dim = iota.getDimension();
    return dim >= 0 && dim < rank;
  }
  static void evaluateElements(Operation *op, ArrayRef<const void *>, void *out,
                               int64_t begin, int64_t count) {
    auto iota = cast<IotaOp>(op);
    iotaElements(iota, cast<RankedTensorType>(iota.getType()).getShape(),
                 dtypeOf(iota), out, begin, count);
  }
};
struct CompareKernel : shardc::detail::KernelModel<CompareKernel, CompareOp> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *> in,
                               Tensor &result, uint64_t) const {
    return evalCompare(cast<CompareOp>(op), *in[0], *in[1], result);
  }
  static bool computesElementwise(Operation *op) {
    return symbolizeCompareDirection(cast<CompareOp>(op).getDirection())
        .has_value();
  }
  static void evaluateElements(Operation *op, ArrayRef<const void *> in,
                               void *out, int64_t, int64_t count) {
    auto compare = cast<CompareOp>(op);
    compareRange(dtypeOf(compare.getLhs()),
                 *symbolizeCompareDirection(compare.getDirection()), in[0],
                 in[1], out, count);
  }
};
struct SelectKernel : shardc::detail::KernelModel<SelectKernel, SelectOp> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *> in,
                               Tensor &result, uint64_t) const {
    return evalSelect(cast<SelectOp>(op), *in[0], *in[1], *in[2], result);
  }
  static bool computesElementwise(Operation *) { return true; }
  static void evaluateElements(Operation *op, ArrayRef<const void *> in,
                               void *out, int64_t, int64_t count) {
    selectRange(dtypeOf(op->getResult(0)), in[0], in[1], in[2], out, count);
  }
};
struct ConvertKernel : shardc::detail::KernelModel<ConvertKernel, ConvertOp> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *> in,
                               Tensor &result, uint64_t) const {
    return evalConvert(cast<ConvertOp>(op), *in[0], result);
  }
  static bool computesElementwise(Operation *) { return true; }
  static void evaluateElements(Operation *op, ArrayRef<const void *> in,
                               void *out, int64_t, int64_t count) {
    convertRange(dtypeOf(op->getOperand(0)), dtypeOf(op->getResult(0)), in[0],
                 out, count);
  }
};
} // namespace

void shardc::detail::attachElementTypeKernels(MLIRContext *ctx) {
  IotaOp::attachInterface<IotaKernel>(*ctx);
  CompareOp::attachInterface<CompareKernel>(*ctx);
  SelectOp::attachInterface<SelectKernel>(*ctx);
  ConvertOp::attachInterface<ConvertKernel>(*ctx);
  registerElementwiseHooks<IotaOp, IotaKernel>();
  registerElementwiseHooks<CompareOp, CompareKernel>();
  registerElementwiseHooks<SelectOp, SelectKernel>();
  registerElementwiseHooks<ConvertOp, ConvertKernel>();
}

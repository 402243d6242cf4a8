//===- ConstantKernel.cpp - shardc.constant -------------------------------===//

#include "ElementwiseFusion.h"
#include "KernelImpl.h"

#include "shardc/Support/HalfFloat.h"

#include <algorithm>
#include <cstring>
#include <optional>

using namespace mlir;
using namespace shardc;

static LogicalResult evalConstant(ConstantOp op, Tensor &result) {
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return op.emitError() << "constant value of kind " << op.getValue()
                          << " is not supported; use a "
                          << "dense elements attribute";
  auto type = dyn_cast<RankedTensorType>(dense.getType());
  std::optional<DType> dtype =
      type ? executableDType(type.getElementType()) : std::nullopt;
  if (!type || type.getShape() != result.shape() || !dtype ||
      computeDType(*dtype) != result.dtype())
    return op.emitError() << "constant value of type " << dense.getType()
                          << " does not match the result " << result.describe();
  if (result.numElements() == 0)
    return success();
  // Integers go element by element: MLIR packs i1 data as bits, so the raw
  // bytes are not the one-byte-per-element storage.
  switch (result.dtype()) {
  case DType::I1:
    llvm::copy(dense.getValues<bool>(), result.dataAs<uint8_t>());
    return success();
  case DType::I32:
    llvm::copy(dense.getValues<int32_t>(), result.dataAs<int32_t>());
    return success();
  case DType::I64:
    llvm::copy(dense.getValues<int64_t>(), result.dataAs<int64_t>());
    return success();
  default:
    break;
  }
  // bf16 and f16 values are computed in f32 (evaluateTensorOp rounds the
  // result back, which gives the attribute's values exactly).
  if (isHalfDType(*dtype)) {
    float *out = result.data();
    for (APFloat value : dense.getValues<APFloat>()) {
      bool losesInfo = false;
      value.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven,
                    &losesInfo);
      *out++ = value.convertToFloat();
    }
    return success();
  }
  if (dense.isSplat()) {
    std::fill_n(result.data(), result.numElements(),
                dense.getSplatValue<float>());
    return success();
  }
  // Raw data of a non-splat f32 attribute is the row-major element array.
  ArrayRef<char> raw = dense.getRawData();
  if (raw.size() != result.byteSize())
    return op.emitError("constant data size does not match its type");
  std::memcpy(result.data(), raw.data(), raw.size());
  return success();
}

/// The splat f32 value of constant `op`, if it has one.
static std::optional<float> splatFloat(ConstantOp op) {
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense || !dense.isSplat() || !dense.getElementType().isF32())
    return std::nullopt;
  return dense.getSplatValue<float>();
}

namespace {
/// An f32 splat is an elementwise op without operands: inside a fused pass
/// it fills one block instead of a tensor of the full size.
struct ConstantKernel : shardc::detail::KernelModel<ConstantKernel, ConstantOp> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *>,
                               Tensor &result, uint64_t) const {
    return evalConstant(cast<ConstantOp>(op), result);
  }
  static bool computesElementwise(Operation *op) {
    return splatFloat(cast<ConstantOp>(op)).has_value();
  }
  static void evaluateElements(Operation *op, ArrayRef<const void *>, void *out,
                               int64_t, int64_t count) {
    std::fill_n(static_cast<float *>(out), count,
                *splatFloat(cast<ConstantOp>(op)));
  }
};
} // namespace

void shardc::detail::attachConstantKernel(MLIRContext *ctx) {
  ConstantOp::attachInterface<ConstantKernel>(*ctx);
  registerElementwiseHooks<ConstantOp, ConstantKernel>();
}

//===- ConstantKernel.cpp - shardc.constant -------------------------------===//

#include "KernelImpl.h"

#include <algorithm>
#include <cstring>

using namespace mlir;
using namespace shardc;

static LogicalResult evalConstant(ConstantOp op, Tensor &result) {
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return op.emitError() << "constant value of kind " << op.getValue()
                          << " is not supported; use a "
                          << "dense elements attribute";
  auto type = dyn_cast<RankedTensorType>(dense.getType());
  if (!type || type.getShape() != result.shape() ||
      executableDType(type.getElementType()) != result.dtype())
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

namespace {
struct ConstantKernel : shardc::detail::KernelModel<ConstantKernel, ConstantOp> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *>,
                               Tensor &result, uint64_t) const {
    return evalConstant(cast<ConstantOp>(op), result);
  }
};
} // namespace

void shardc::detail::attachConstantKernel(MLIRContext *ctx) {
  ConstantOp::attachInterface<ConstantKernel>(*ctx);
}

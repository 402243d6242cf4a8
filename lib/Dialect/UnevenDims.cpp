//===- UnevenDims.cpp - filling the padding of uneven dims ----------------===//
//
// The mask the partitioner puts in front of an op that would fold the
// padding of an uneven dim into real elements (UnevenDims.h).
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/UnevenDims.h"

#include "TensorOpHelpers.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/TensorOpBuilders.h"

#include "llvm/ADT/APFloat.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;

/// A splat of `type` holding `fill` (Zero or Lowest) of its element type.
static Value buildFillConstant(OpBuilder &b, Location loc,
                               RankedTensorType type, PaddingFill fill) {
  Type element = type.getElementType();
  Attribute value;
  if (auto f = dyn_cast<FloatType>(element)) {
    APFloat v = fill == PaddingFill::Lowest
                    ? APFloat::getInf(f.getFloatSemantics(), /*Negative=*/true)
                    : APFloat::getZero(f.getFloatSemantics());
    value = FloatAttr::get(element, v);
  } else {
    unsigned width = element.getIntOrFloatBitWidth();
    // i1 is unsigned (false is its lowest); wider integers are signed.
    APInt v = fill == PaddingFill::Lowest && width > 1
                  ? APInt::getSignedMinValue(width)
                  : APInt::getZero(width);
    value = IntegerAttr::get(element, v);
  }
  return buildConstant(
      b, loc, cast<ElementsAttr>(DenseElementsAttr::get(type, value)));
}

Value shardc::buildPaddingFill(OpBuilder &b, Location loc, Value local,
                               int64_t dim, int64_t globalSize,
                               FlatSymbolRefAttr mesh, ArrayRef<StringRef> axes,
                               PaddingFill fill) {
  if (fill == PaddingFill::Any)
    return local;
  auto type = cast<RankedTensorType>(local.getType());
  int64_t block = type.getDimSize(dim);
  // Global positions of this device's elements along `dim`, computed on one
  // row and broadcast: the block starts at axis_index(axes) * block.
  auto i64 = b.getI64Type();
  auto rowType = RankedTensorType::get({block}, i64);
  Value offset = buildBlockOffset(b, loc, mesh, axes, block, i64);
  Value positions =
      buildAdd(b, loc, buildIota(b, loc, rowType, 0),
               buildBroadcastInDim(b, loc, rowType, offset, {}));
  Value size = buildConstant(
      b, loc,
      cast<ElementsAttr>(DenseElementsAttr::get(
          rowType, b.getIntegerAttr(i64, globalSize))));
  Value isReal = buildCompare(b, loc, positions, size, "LT");
  auto predType = RankedTensorType::get(type.getShape(), b.getI1Type());
  Value pred = buildBroadcastInDim(b, loc, predType, isReal, {dim});
  return buildSelect(b, loc, pred, local, buildFillConstant(b, loc, type, fill));
}

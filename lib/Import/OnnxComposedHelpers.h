//===- OnnxComposedHelpers.h - builders of composed ONNX ops ----*- C++ -*-===//
//
// The small builders the ONNX ops read as compositions of shardc ops
// (OnnxComposedOps.cpp, OnnxSelectionOps.cpp, OnnxScatterGatherOps.cpp,
// OnnxConvOps.cpp, OnnxEinsum.cpp) share: naming each built op after the
// node's output, comparisons, iotas, broadcasts and the import-time
// integer attributes and inputs.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_IMPORT_ONNXCOMPOSEDHELPERS_H
#define SHARDC_LIB_IMPORT_ONNXCOMPOSEDHELPERS_H

#include "OnnxImport.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace shardc::onnximport::composed {
using namespace mlir;
using llvm::SmallVector;
using llvm::StringRef;

/// A scalar host tensor of `type` holding `v`.
inline HostTensor scalarOf(double v, Type type) {
  HostTensor t = HostTensor::zeros({}, type);
  if (t.isFloat())
    t.floats[0] = v;
  else
    t.ints[0] = static_cast<int64_t>(v);
  return t;
}

/// Builds op `name` named `<output 0>.<suffix>`; an empty suffix names it
/// after the node's output.
inline FailureOr<Value> make(NodeContext &nc, StringRef name,
                             ValueRange operands,
                             ArrayRef<NamedAttribute> attrs = {},
                             Type resultType = {}, StringRef suffix = "") {
  return nc.build(name, operands, attrs, resultType,
                  suffix.empty() ? nc.loc() : nc.loc(0, "." + suffix.str()));
}

inline FailureOr<Value> compareOf(NodeContext &nc, Value a, Value b,
                                  StringRef direction, StringRef suffix) {
  return make(nc, "shardc.compare", {a, b},
              {named(nc, "direction", nc.builder.getStringAttr(direction))}, {},
              suffix);
}

inline FailureOr<Value> iotaOf(NodeContext &nc, ArrayRef<int64_t> shape,
                               int64_t dim, Type type, StringRef suffix) {
  return make(nc, "shardc.iota", {},
              {named(nc, "dimension", nc.builder.getI64IntegerAttr(dim))},
              RankedTensorType::get(shape, type), suffix);
}

/// `v` (whose dims are `shape` without `dim`) broadcast along `dim`.
inline FailureOr<Value> broadcastAlong(NodeContext &nc, Value v,
                                       ArrayRef<int64_t> shape, int64_t dim,
                                       StringRef suffix) {
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    if (d != dim)
      dims.push_back(d);
  auto type = cast<RankedTensorType>(v.getType());
  return make(nc, "shardc.broadcast_in_dim", {v}, {dimsAttr(nc, "dims", dims)},
              RankedTensorType::get(shape, type.getElementType()), suffix);
}

inline llvm::SmallVector<int64_t> without(ArrayRef<int64_t> shape,
                                          int64_t dim) {
  SmallVector<int64_t> out(shape);
  out.erase(out.begin() + dim);
  return out;
}

/// An integer attribute, `fallback` when absent.
inline FailureOr<int64_t> intAttrOr(NodeContext &nc, StringRef name,
                                    int64_t fallback) {
  FailureOr<std::optional<int64_t>> v = nc.intAttr(name);
  if (failed(v))
    return failure();
  return v->value_or(fallback);
}

/// A scalar integer input known at import (Trilu's k, TopK's K, ...).
inline FailureOr<int64_t> scalarInput(NodeContext &nc, size_t i,
                                      StringRef what) {
  FailureOr<SmallVector<int64_t>> list = nc.intList(i, what);
  if (failed(list))
    return failure();
  if (list->size() != 1)
    return nc.error() << what << " (input " << i << ") must be one integer";
  return list->front();
}

/// Input 0 as f32 (integers converted: exact below 2^24).
inline FailureOr<Value> asF32(NodeContext &nc, StringRef suffix) {
  Value x = nc.value(0);
  auto type = cast<RankedTensorType>(x.getType());
  if (type.getElementType().isF32())
    return x;
  return make(nc, "shardc.convert", {x},
              {named(nc, "dtype", TypeAttr::get(nc.builder.getF32Type()))}, {},
              suffix);
}

/// Converters of each family, registered by addComposedConverters.
void addSelectionConverters(llvm::StringMap<Converter> &table);
void addScatterGatherConverters(llvm::StringMap<Converter> &table);
void addConvConverters(llvm::StringMap<Converter> &table);
void addEinsumConverters(llvm::StringMap<Converter> &table);

} // namespace shardc::onnximport::composed

#endif // SHARDC_LIB_IMPORT_ONNXCOMPOSEDHELPERS_H

//===- OnnxOps.cpp - the table of ONNX op types, and constants ------------===//
//
// The table of converters, one per ONNX op type, gathered from the files
// that implement them by concept (Onnx{Elementwise,NeuralNet,Layout}Ops),
// and the converters of Constant, Identity, Shape, ConstantOfShape and
// Expand, which compute at import.
//
// One converter per ONNX op type (the ONNX operator reference, opsets 13 to
// 17). A converter whose inputs are all known at import folds the node into
// a host tensor when the op is shape arithmetic; otherwise it builds shardc
// ops, the last of them named after the node's output. NumPy broadcasting,
// which shardc's ops do not do, becomes broadcast_in_dim.
//
//===----------------------------------------------------------------------===//

#include "OnnxImport.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

using namespace mlir;
using namespace shardc::onnximport;
using llvm::SmallVector;
using llvm::StringRef;

static LogicalResult constant(NodeContext &nc) {
  if (failed(nc.checkArity(0, 0)) ||
      failed(nc.checkAttrs(
          {"value", "value_float", "value_int", "value_floats", "value_ints"})))
    return failure();
  if (nc.node.attribute_size() != 1)
    return nc.error() << "must have exactly one value attribute";
  const onnx::AttributeProto &a = nc.node.attribute(0);
  HostTensor t;
  switch (a.type()) {
  case onnx::AttributeProto::TENSOR: {
    if (a.name() != "value")
      return nc.error() << "attribute \"" << a.name() << "\" is a tensor";
    llvm::Expected<HostTensor> decoded = decodeTensor(nc.ctx, a.t());
    if (!decoded)
      return nc.error() << "its value " << llvm::toString(decoded.takeError());
    t = std::move(*decoded);
    break;
  }
  case onnx::AttributeProto::FLOAT:
    t = HostTensor::zeros({}, Float32Type::get(nc.ctx));
    t.floats[0] = a.f();
    break;
  case onnx::AttributeProto::INT:
    t = HostTensor::zeros({}, IntegerType::get(nc.ctx, 64));
    t.ints[0] = a.i();
    break;
  case onnx::AttributeProto::FLOATS:
    t.shape = {a.floats_size()};
    t.elementType = Float32Type::get(nc.ctx);
    t.floats.assign(a.floats().begin(), a.floats().end());
    break;
  case onnx::AttributeProto::INTS:
    t.shape = {a.ints_size()};
    t.elementType = IntegerType::get(nc.ctx, 64);
    t.ints.assign(a.ints().begin(), a.ints().end());
    break;
  default:
    return nc.error() << "attribute \"" << a.name()
                      << "\" has a kind shardc does not read";
  }
  nc.setOutput(0, std::move(t));
  return success();
}

static LogicalResult identity(NodeContext &nc) {
  if (failed(nc.checkArity(1, 1)) || failed(nc.checkAttrs({})))
    return failure();
  nc.alias(0, 0);
  return success();
}

static LogicalResult shape(NodeContext &nc) {
  if (failed(nc.checkArity(1, 1)) || failed(nc.checkAttrs({"start", "end"})))
    return failure();
  FailureOr<std::optional<int64_t>> startAttr = nc.intAttr("start"),
                                    endAttr = nc.intAttr("end");
  if (failed(startAttr) || failed(endAttr))
    return failure();
  ArrayRef<int64_t> in = nc.inputType(0).getShape();
  int64_t rank = in.size();
  auto clampIndex = [&](int64_t v) {
    if (v < 0)
      v = std::max<int64_t>(0, v + rank);
    return std::min(v, rank);
  };
  int64_t start = clampIndex(startAttr->value_or(0));
  int64_t end = std::max(start, clampIndex(endAttr->value_or(rank)));
  HostTensor t;
  t.shape = {end - start};
  t.elementType = IntegerType::get(nc.ctx, 64);
  t.ints.assign(in.begin() + start, in.begin() + end);
  nc.setOutput(0, std::move(t));
  return success();
}

static LogicalResult constantOfShape(NodeContext &nc) {
  if (failed(nc.checkArity(1, 1)) || failed(nc.checkAttrs({"value"})))
    return failure();
  FailureOr<SmallVector<int64_t>> dims = nc.intList(0, "the shape");
  if (failed(dims))
    return failure();
  llvm::Expected<SmallVector<int64_t>> shape = checkedShape(*dims);
  if (!shape)
    return nc.error() << "the shape " << llvm::toString(shape.takeError());
  if (product(*shape) > kMaxFoldedElements)
    return nc.error() << "fills " << shapeText(*shape) << ", more than the "
                      << kMaxFoldedElements
                      << " elements a constant folded at import may have";
  HostTensor fill = HostTensor::zeros({}, Float32Type::get(nc.ctx));
  if (const onnx::AttributeProto *a = nc.attr("value")) {
    if (a->type() != onnx::AttributeProto::TENSOR)
      return nc.error() << "attribute \"value\" must be a tensor";
    llvm::Expected<HostTensor> v = decodeTensor(nc.ctx, a->t());
    if (!v)
      return nc.error() << "its value " << llvm::toString(v.takeError());
    if (v->numElements() != 1)
      return nc.error() << "its value must have one element";
    fill = std::move(*v);
    fill.shape.clear();
  }
  nc.setOutput(0, broadcastHost(fill, *shape));
  return success();
}

static LogicalResult expand(NodeContext &nc) {
  if (failed(nc.checkArity(2, 2)) || failed(nc.checkAttrs({})))
    return failure();
  FailureOr<SmallVector<int64_t>> dims = nc.intList(1, "the shape");
  if (failed(dims))
    return failure();
  llvm::Expected<SmallVector<int64_t>> target = checkedShape(*dims);
  if (!target)
    return nc.error() << "the shape " << llvm::toString(target.takeError());
  ArrayRef<int64_t> in = nc.inputType(0).getShape();
  std::optional<SmallVector<int64_t>> shape = broadcastShapes(in, *target);
  if (!shape)
    return nc.error() << "cannot expand " << shapeText(in) << " to "
                      << shapeText(*target);
  if (const HostTensor *t = nc.constant(0);
      t && product(*shape) <= kMaxFoldedElements) {
    nc.setOutput(0, broadcastHost(*t, *shape));
    return success();
  }
  if (ArrayRef<int64_t>(*shape) == in) {
    nc.alias(0, 0);
    return success();
  }
  return done(nc, nc.inputAs(0, *shape, ""));
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

const llvm::StringMap<Converter> &shardc::onnximport::converters() {
  static const llvm::StringMap<Converter> table = [] {
    llvm::StringMap<Converter> t;
    addElementwiseConverters(t);
    addNeuralNetConverters(t);
    addLayoutConverters(t);
    addComposedConverters(t);
    t.insert({"Constant", constant});
    t.insert({"ConstantOfShape", constantOfShape});
    t.insert({"Expand", expand});
    t.insert({"Identity", identity});
    t.insert({"Shape", shape});
    return t;
  }();
  return table;
}

//===- OnnxNodeContext.cpp - what a node's converter reads and builds -----===//
//
// NodeContext is the API every ONNX op converter works through: the node's
// inputs (values or host constants), its attributes checked and typed, the
// shardc ops it builds (located at the node), and its outputs. The model's
// own import (initializers, graph inputs, the node loop) is OnnxImporter.cpp.
//
//===----------------------------------------------------------------------===//

#include "OnnxImport.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ShardcOps.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::onnximport;
using llvm::SmallVector;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

NodeContext::NodeContext(OnnxImporter &importer, const onnx::NodeProto &node,
                         size_t index)
    : node(node), importer(importer), ctx(importer.ctx),
      builder(importer.builder), index(index), opset(importer.opset) {}

static std::string nodeName(const onnx::NodeProto &node, size_t index) {
  if (!node.name().empty())
    return node.name();
  return node.op_type() + "#" + std::to_string(index);
}

InFlightDiagnostic NodeContext::error() {
  // The node is the place: its index, name and op type, which tools print
  // where a text file's line and column would be.
  std::string place = "node " + std::to_string(index) + " \"" +
                      nodeName(node, index) + "\" (" + node.op_type() + ")";
  return emitError(
      NameLoc::get(StringAttr::get(ctx, place), importer.fileLoc()));
}

Location NodeContext::loc(size_t output, StringRef suffix) {
  std::string name = output < static_cast<size_t>(node.output_size())
                         ? node.output(output)
                         : "";
  if (name.empty())
    name = nodeName(node, index);
  Location at = NameLoc::get(StringAttr::get(ctx, nodeName(node, index)),
                             importer.fileLoc());
  return NameLoc::get(StringAttr::get(ctx, name + suffix.str()), at);
}

bool NodeContext::hasInput(size_t i) const {
  return i < static_cast<size_t>(node.input_size()) && !node.input(i).empty();
}

LogicalResult NodeContext::checkArity(size_t min, size_t max, size_t outputs) {
  size_t n = node.input_size();
  if (n < min || n > max)
    return error() << "has " << n << " inputs; " << node.op_type() << " takes "
                   << (min == max ? std::to_string(min)
                                  : std::to_string(min) + " to " +
                                        std::to_string(max));
  for (size_t i = 0; i < min; ++i)
    if (!hasInput(i))
      return error() << "input " << i << " is required";
  size_t given = 0;
  for (const std::string &out : node.output())
    given += !out.empty();
  if (node.output_size() < 1 || node.output(0).empty() ||
      (outputs == 1 && given != 1))
    return error() << "has " << given << " outputs; shardc reads "
                   << node.op_type() << " with " << outputs
                   << (outputs == 1 ? " output" : " outputs");
  return success();
}

const OnnxValue &NodeContext::input(size_t i) {
  return importer.values.find(node.input(i))->second;
}

Value NodeContext::value(size_t i) {
  return importer.materialize(importer.values.find(node.input(i))->second,
                              loc(0, "." + std::to_string(i)));
}

const HostTensor *NodeContext::constant(size_t i) {
  if (!hasInput(i))
    return nullptr;
  const OnnxValue &v = input(i);
  return v.constant ? &*v.constant : nullptr;
}

FailureOr<SmallVector<int64_t>> NodeContext::intList(size_t i, StringRef what) {
  const HostTensor *t = constant(i);
  if (!t)
    return error() << what << " (input " << i << ", \"" << node.input(i)
                   << "\") is computed at run time; shardc folds it only "
                      "when it is known at import (static shapes)";
  if (t->isFloat() || t->shape.size() > 1)
    return error() << what << " (input " << i << ", \"" << node.input(i)
                   << "\") must be a list of integers";
  SmallVector<int64_t> out;
  for (int64_t k = 0, e = t->numElements(); k < e; ++k)
    out.push_back(t->intAt(k));
  return out;
}

const onnx::AttributeProto *NodeContext::attr(StringRef name) const {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

LogicalResult NodeContext::checkAttrs(ArrayRef<StringRef> known) {
  for (const onnx::AttributeProto &a : node.attribute())
    if (!llvm::is_contained(known, StringRef(a.name())))
      return error() << "has attribute \"" << a.name()
                     << "\", which shardc does not support for "
                     << node.op_type();
  return success();
}

FailureOr<std::optional<int64_t>> NodeContext::intAttr(StringRef name) {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return std::optional<int64_t>();
  if (a->type() != onnx::AttributeProto::INT)
    return error() << "attribute \"" << name << "\" must be an integer";
  return std::optional<int64_t>(a->i());
}

FailureOr<std::optional<float>> NodeContext::floatAttr(StringRef name) {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return std::optional<float>();
  if (a->type() != onnx::AttributeProto::FLOAT)
    return error() << "attribute \"" << name << "\" must be a float";
  return std::optional<float>(a->f());
}

FailureOr<std::optional<std::string>> NodeContext::stringAttr(StringRef name) {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return std::optional<std::string>();
  if (a->type() != onnx::AttributeProto::STRING)
    return error() << "attribute \"" << name << "\" must be a string";
  return std::optional<std::string>(a->s());
}

FailureOr<std::optional<SmallVector<int64_t>>>
NodeContext::intsAttr(StringRef name) {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return std::optional<SmallVector<int64_t>>();
  if (a->type() != onnx::AttributeProto::INTS)
    return error() << "attribute \"" << name << "\" must be a list of integers";
  return std::optional<SmallVector<int64_t>>(
      SmallVector<int64_t>(a->ints().begin(), a->ints().end()));
}

FailureOr<int64_t> NodeContext::normalizeAxis(int64_t axis, int64_t rank,
                                              StringRef what) {
  if (axis < -rank || axis >= rank)
    return error() << what << " " << axis << " is out of range for rank "
                   << rank;
  return axis < 0 ? axis + rank : axis;
}

std::optional<HostTensor> NodeContext::fold(StringRef name,
                                            ArrayRef<HostTensor> operands,
                                            Type elementType) {
  std::optional<RegisteredOperationName> opName =
      RegisteredOperationName::lookup(name, ctx);
  if (!opName || operands.empty())
    return std::nullopt;
  // The op is created detached, on the arguments of a scratch block, so
  // folding leaves no IR behind.
  Block scratch;
  SmallVector<Attribute> constants;
  for (const HostTensor &t : operands) {
    constants.push_back(t.toAttr());
    scratch.addArgument(RankedTensorType::get(t.shape, t.elementType), loc());
  }
  OperationState state(loc(), *opName);
  state.addOperands(scratch.getArguments());
  state.addTypes(RankedTensorType::get(operands[0].shape, elementType));
  Operation *op = Operation::create(state);
  SmallVector<OpFoldResult, 1> results;
  std::optional<HostTensor> folded;
  if (succeeded(op->fold(constants, results)) && results.size() == 1)
    if (auto attr = dyn_cast_if_present<DenseElementsAttr>(
            dyn_cast_if_present<Attribute>(results.front())))
      folded = HostTensor::fromAttr(attr);
  op->destroy();
  return folded;
}

FailureOr<Value> NodeContext::build(StringRef name, ValueRange operands,
                                    ArrayRef<NamedAttribute> attrs,
                                    Type resultType,
                                    std::optional<Location> at) {
  std::optional<RegisteredOperationName> opName =
      RegisteredOperationName::lookup(name, ctx);
  if (!opName)
    return error() << "internal error: no op " << name;
  OperationState state(at ? *at : loc(), *opName);
  state.addOperands(operands);
  state.addAttributes(attrs);
  bool infer = !resultType && opName->hasInterface<InferTypeOpInterface>();
  state.addTypes(resultType         ? resultType
                 : operands.empty() ? Type(NoneType::get(ctx))
                                    : operands[0].getType());
  // The op's own checks (type inference, the verifier) report at its
  // location; they are re-emitted as errors about this node.
  SmallVector<std::string> messages;
  LogicalResult ok = success();
  Operation *op;
  {
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
      messages.push_back(diag.str());
      return success();
    });
    op = builder.create(state);
    if (infer) {
      SmallVector<Type, 1> types;
      ok = cast<InferTypeOpInterface>(op).inferReturnTypes(
          ctx, op->getLoc(), op->getOperands(), op->getRawDictionaryAttrs(),
          op->getPropertiesStorage(), op->getRegions(), types);
      if (succeeded(ok) && types.size() == 1)
        op->getResult(0).setType(types.front());
      else
        ok = failure();
    }
    if (succeeded(ok))
      ok = verify(op, /*verifyRecursively=*/false);
  }
  if (failed(ok)) {
    op->erase();
    InFlightDiagnostic diag = error();
    if (messages.empty())
      diag << "cannot build '" << name << "'";
    else
      diag << messages.front();
    return failure();
  }
  return op->getResult(0);
}

NamedAttribute shardc::onnximport::named(NodeContext &nc, StringRef name,
                                         Attribute a) {
  return nc.builder.getNamedAttr(name, a);
}

NamedAttribute shardc::onnximport::dimsAttr(NodeContext &nc, StringRef name,
                                            ArrayRef<int64_t> dims) {
  return named(nc, name, nc.builder.getDenseI64ArrayAttr(dims));
}

LogicalResult shardc::onnximport::done(NodeContext &nc, FailureOr<Value> v,
                                       size_t output) {
  if (failed(v))
    return failure();
  nc.setOutput(output, *v);
  return success();
}

FailureOr<SmallVector<int64_t>>
shardc::onnximport::normalizeAxes(NodeContext &nc, ArrayRef<int64_t> axes,
                                  int64_t rank) {
  SmallVector<int64_t> out;
  for (int64_t a : axes) {
    FailureOr<int64_t> axis = nc.normalizeAxis(a, rank, "axis");
    if (failed(axis))
      return failure();
    if (llvm::is_contained(out, *axis))
      return nc.error() << "axis " << a << " is listed twice";
    out.push_back(*axis);
  }
  return out;
}

FailureOr<Value> NodeContext::broadcastTo(Value v, ArrayRef<int64_t> shape,
                                          StringRef suffix) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getShape() == shape)
    return v;
  std::optional<SmallVector<int64_t>> common =
      broadcastShapes(type.getShape(), shape);
  if (!common || ArrayRef<int64_t>(*common) != shape)
    return error() << "cannot broadcast a tensor of shape "
                   << shapeText(type.getShape()) << " to " << shapeText(shape);
  SmallVector<int64_t> dims;
  int64_t offset = shape.size() - type.getRank();
  for (int64_t d = 0; d < type.getRank(); ++d)
    dims.push_back(offset + d);
  return build(
      "shardc.broadcast_in_dim", {v},
      {builder.getNamedAttr("dims", builder.getDenseI64ArrayAttr(dims))},
      RankedTensorType::get(shape, type.getElementType()), loc(0, suffix));
}

FailureOr<Value> NodeContext::constantAs(const HostTensor &t,
                                         ArrayRef<int64_t> shape,
                                         StringRef suffix) {
  int64_t n = t.numElements();
  bool splat = n > 0;
  for (int64_t k = 1; k < n && splat; ++k)
    splat = t.isFloat() ? t.floats[k] == t.floats[0] : t.ints[k] == t.ints[0];
  if (!splat ||
      broadcastShapes(t.shape, shape) != SmallVector<int64_t>(shape)) {
    OnnxValue v{RankedTensorType::get(t.shape, t.elementType), Value(), t};
    return broadcastTo(importer.materialize(v, loc(0, suffix)), shape,
                       suffix.str() + ".broadcast");
  }
  auto type = RankedTensorType::get(shape, t.elementType);
  DenseElementsAttr attr =
      t.isFloat()
          ? DenseElementsAttr::get(type,
                                   FloatAttr::get(t.elementType, t.floats[0]))
          : DenseElementsAttr::get(type,
                                   IntegerAttr::get(t.elementType, t.ints[0]));
  return build("shardc.constant", {}, {builder.getNamedAttr("value", attr)},
               type, loc(0, suffix));
}

FailureOr<Value> NodeContext::inputAs(size_t i, ArrayRef<int64_t> shape,
                                      StringRef suffix) {
  // A splat (a scalar Constant: 1/sqrt(d), -inf) becomes a constant of the
  // shape it is used at, not a broadcast of a scalar.
  if (const HostTensor *t = constant(i)) {
    bool splat = t->numElements() > 0;
    for (int64_t k = 1, n = t->numElements(); k < n && splat; ++k)
      splat = t->isFloat() ? t->floats[k] == t->floats[0]
                           : t->ints[k] == t->ints[0];
    if (splat)
      return constantAs(*t, shape, suffix);
  }
  return broadcastTo(value(i), shape, suffix);
}

FailureOr<Value> NodeContext::reshape(Value v, ArrayRef<int64_t> shape,
                                      std::optional<Location> at) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getShape() == shape)
    return v;
  return build("shardc.reshape", {v}, {},
               RankedTensorType::get(shape, type.getElementType()), at);
}

void NodeContext::setOutput(size_t i, Value v) {
  importer.values[node.output(i)] =
      OnnxValue{cast<RankedTensorType>(v.getType()), v, std::nullopt};
}

void NodeContext::setOutput(size_t i, HostTensor t) {
  auto type = RankedTensorType::get(t.shape, t.elementType);
  importer.values[node.output(i)] = OnnxValue{type, Value(), std::move(t)};
}

void NodeContext::alias(size_t i, size_t j) {
  OnnxValue copy = importer.values.find(node.input(j))->second;
  importer.values[node.output(i)] = std::move(copy);
}

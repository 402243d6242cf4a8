//===- OnnxElementwiseOps.cpp - elementwise ONNX ops ----------------------===//
//
// Unary and binary arithmetic, comparisons, Not, Where and Cast: NumPy
// broadcasting becomes broadcast_in_dim, and operands known at import are
// folded (shape arithmetic): arithmetic through the shardc op's own fold,
// which runs its kernel; comparisons, Not, Where and Cast on the host
// tensors, as their ops (compare, select, convert) do not fold.
//
//===----------------------------------------------------------------------===//

#include "OnnxImport.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <limits>

using namespace mlir;
using namespace shardc::onnximport;
using llvm::SmallVector;
using llvm::StringRef;

/// The shape inputs `0..n-1` broadcast to (NumPy rules); fails naming
/// their shapes.
static FailureOr<SmallVector<int64_t>> broadcastInputs(NodeContext &nc,
                                                       size_t n) {
  std::optional<SmallVector<int64_t>> shape(nc.inputType(0).getShape());
  for (size_t i = 1; i < n && shape; ++i)
    shape = broadcastShapes(*shape, nc.inputType(i).getShape());
  if (shape)
    return *shape;
  InFlightDiagnostic diag = nc.error() << "operands of shapes ";
  for (size_t i = 0; i < n; ++i)
    diag << (i == 0       ? ""
             : i + 1 == n ? " and "
                          : ", ")
         << shapeText(nc.inputType(i).getShape());
  return diag << " do not broadcast";
}

/// An op of the shardc elementwise family, folded through the op itself
/// where its operand is known (its kernel gives the bits a run would).
static LogicalResult unary(NodeContext &nc, StringRef mnemonic) {
  if (failed(nc.checkArity(1, 1)) || failed(nc.checkAttrs({})))
    return failure();
  std::string name = ("shardc." + mnemonic).str();
  if (const HostTensor *t = nc.constant(0); t && t->isFloat())
    if (std::optional<HostTensor> out = nc.fold(name, {*t}, t->elementType)) {
      nc.setOutput(0, std::move(*out));
      return success();
    }
  return done(nc, nc.build(name, {nc.value(0)}));
}

template <StringLiteral const &Mnemonic>
static LogicalResult unaryOp(NodeContext &nc) {
  return unary(nc, Mnemonic);
}

enum class Binary { Add, Sub, Mul, Div, Pow, Max, Min };

static StringRef mnemonicOf(Binary kind) {
  static const char *names[] = {"add", "sub", "mul", "div",
                                "pow", "max", "min"};
  return names[static_cast<int>(kind)];
}

/// `a <kind> b` (broadcast already) folded through the shardc op; what
/// ONNX leaves undefined on integers (a division by zero, the overflowing
/// quotient, Pow) is an error about the node, as it was before folding.
static FailureOr<HostTensor> foldBinary(NodeContext &nc, Binary kind,
                                        const HostTensor &a,
                                        const HostTensor &b) {
  if (!a.isFloat()) {
    if (kind == Binary::Pow)
      return nc.error() << "integer Pow is not supported";
    for (int64_t i = 0, n = a.numElements(); kind == Binary::Div && i < n; ++i)
      if (b.ints[i] == 0 ||
          (a.ints[i] == std::numeric_limits<int64_t>::min() && b.ints[i] == -1))
        return nc.error() << "divides the integer " << a.ints[i] << " by "
                          << b.ints[i];
  }
  std::optional<HostTensor> out =
      nc.fold(("shardc." + mnemonicOf(kind)).str(), {a, b}, a.elementType);
  if (!out)
    return nc.error() << "cannot fold " << mnemonicOf(kind) << " on "
                      << a.elementType << " operands";
  return std::move(*out);
}

static LogicalResult binary(NodeContext &nc, Binary kind) {
  if (failed(nc.checkArity(2, 2)) || failed(nc.checkAttrs({})))
    return failure();
  RankedTensorType a = nc.inputType(0), b = nc.inputType(1);
  FailureOr<SmallVector<int64_t>> shape = broadcastInputs(nc, 2);
  if (failed(shape))
    return failure();
  const HostTensor *ca = nc.constant(0), *cb = nc.constant(1);
  // Pow's exponent may have another type; a known one is converted.
  std::optional<HostTensor> exponent;
  if (a.getElementType() != b.getElementType()) {
    if (kind != Binary::Pow || !cb || !isa<FloatType>(a.getElementType()))
      return nc.error() << "operands have element types " << a.getElementType()
                        << " and " << b.getElementType();
    exponent = HostTensor::zeros(cb->shape, a.getElementType());
    for (int64_t i = 0, n = cb->numElements(); i < n; ++i)
      exponent->floats[i] = cb->floatAt(i);
    cb = &*exponent;
  }
  if (ca && cb && product(*shape) <= kMaxFoldedElements) {
    FailureOr<HostTensor> r = foldBinary(nc, kind, broadcastHost(*ca, *shape),
                                         broadcastHost(*cb, *shape));
    if (failed(r))
      return failure();
    nc.setOutput(0, std::move(*r));
    return success();
  }
  FailureOr<Value> lhs = nc.inputAs(0, *shape, ".lhs");
  FailureOr<Value> rhs = exponent ? nc.constantAs(*exponent, *shape, ".rhs")
                                  : nc.inputAs(1, *shape, ".rhs");
  if (failed(lhs) || failed(rhs))
    return failure();
  return done(nc, nc.build(("shardc." + mnemonicOf(kind)).str(), {*lhs, *rhs}));
}

template <Binary Kind> static LogicalResult binaryOp(NodeContext &nc) {
  return binary(nc, Kind);
}

static LogicalResult compare(NodeContext &nc, StringRef direction) {
  if (failed(nc.checkArity(2, 2)) || failed(nc.checkAttrs({})))
    return failure();
  RankedTensorType a = nc.inputType(0), b = nc.inputType(1);
  FailureOr<SmallVector<int64_t>> shape = broadcastInputs(nc, 2);
  if (failed(shape))
    return failure();
  if (a.getElementType() != b.getElementType())
    return nc.error() << "operands have element types " << a.getElementType()
                      << " and " << b.getElementType();
  const HostTensor *ca = nc.constant(0), *cb = nc.constant(1);
  if (ca && cb && product(*shape) <= kMaxFoldedElements) {
    HostTensor x = broadcastHost(*ca, *shape), y = broadcastHost(*cb, *shape);
    HostTensor out = HostTensor::zeros(*shape, IntegerType::get(nc.ctx, 1));
    for (int64_t i = 0, n = out.numElements(); i < n; ++i) {
      double l = x.floatAt(i), r = y.floatAt(i);
      bool v = direction == "EQ"   ? l == r
               : direction == "LT" ? l < r
               : direction == "LE" ? l <= r
               : direction == "GT" ? l > r
                                   : l >= r;
      out.ints[i] = v;
    }
    nc.setOutput(0, std::move(out));
    return success();
  }
  FailureOr<Value> lhs = nc.inputAs(0, *shape, ".lhs");
  FailureOr<Value> rhs = nc.inputAs(1, *shape, ".rhs");
  if (failed(lhs) || failed(rhs))
    return failure();
  return done(nc, nc.build("shardc.compare", {*lhs, *rhs},
                           {named(nc, "direction",
                                  nc.builder.getStringAttr(direction))}));
}

template <StringLiteral const &Direction>
static LogicalResult compareOp(NodeContext &nc) {
  return compare(nc, Direction);
}

static LogicalResult logicalNot(NodeContext &nc) {
  if (failed(nc.checkArity(1, 1)) || failed(nc.checkAttrs({})))
    return failure();
  RankedTensorType x = nc.inputType(0);
  if (!x.getElementType().isInteger(1))
    return nc.error() << "its operand must be BOOL";
  if (const HostTensor *t = nc.constant(0)) {
    HostTensor out = *t;
    for (int64_t &v : out.ints)
      v = !v;
    nc.setOutput(0, std::move(out));
    return success();
  }
  // shardc.compare takes no booleans: !x is (i32)x == 0.
  Type i32 = IntegerType::get(nc.ctx, 32);
  FailureOr<Value> asInt =
      nc.build("shardc.convert", {nc.value(0)},
               {named(nc, "dtype", TypeAttr::get(i32))}, {}, nc.loc(0, ".int"));
  if (failed(asInt))
    return failure();
  FailureOr<Value> zero =
      nc.constantAs(HostTensor::zeros({}, i32), x.getShape(), ".zero");
  if (failed(zero))
    return failure();
  return done(
      nc, nc.build("shardc.compare", {*asInt, *zero},
                   {named(nc, "direction", nc.builder.getStringAttr("EQ"))}));
}

static LogicalResult where(NodeContext &nc) {
  if (failed(nc.checkArity(3, 3)) || failed(nc.checkAttrs({})))
    return failure();
  FailureOr<SmallVector<int64_t>> shape = broadcastInputs(nc, 3);
  if (failed(shape))
    return failure();
  const HostTensor *c = nc.constant(0), *x = nc.constant(1),
                   *y = nc.constant(2);
  if (c && x && y && product(*shape) <= kMaxFoldedElements &&
      x->elementType == y->elementType) {
    HostTensor cc = broadcastHost(*c, *shape), xx = broadcastHost(*x, *shape),
               yy = broadcastHost(*y, *shape);
    for (int64_t i = 0, n = xx.numElements(); i < n; ++i)
      if (!cc.intAt(i)) {
        if (xx.isFloat())
          xx.floats[i] = yy.floats[i];
        else
          xx.ints[i] = yy.ints[i];
      }
    nc.setOutput(0, std::move(xx));
    return success();
  }
  FailureOr<Value> pred = nc.inputAs(0, *shape, ".pred");
  FailureOr<Value> onTrue = nc.inputAs(1, *shape, ".true");
  FailureOr<Value> onFalse = nc.inputAs(2, *shape, ".false");
  if (failed(pred) || failed(onTrue) || failed(onFalse))
    return failure();
  return done(nc, nc.build("shardc.select", {*pred, *onTrue, *onFalse}));
}

static LogicalResult cast(NodeContext &nc) {
  if (failed(nc.checkArity(1, 1)) || failed(nc.checkAttrs({"to"})))
    return failure();
  FailureOr<std::optional<int64_t>> to = nc.intAttr("to");
  if (failed(to))
    return failure();
  if (!*to)
    return nc.error() << "has no attribute \"to\"";
  Type element = elementTypeOf(nc.ctx, static_cast<int32_t>(**to));
  if (!element)
    return nc.error() << "casts to " << dataTypeName(**to)
                      << "; shardc computes in FLOAT, INT64, INT32 and BOOL";
  if (element == nc.inputType(0).getElementType()) {
    nc.alias(0, 0);
    return success();
  }
  if (const HostTensor *t = nc.constant(0)) {
    HostTensor out = HostTensor::zeros(t->shape, element);
    for (int64_t i = 0, n = t->numElements(); i < n; ++i) {
      if (out.isFloat())
        out.floats[i] = static_cast<float>(t->floatAt(i));
      else if (element.isInteger(1))
        out.ints[i] = t->floatAt(i) != 0;
      else if (element.isInteger(32))
        out.ints[i] = static_cast<int32_t>(t->intAt(i));
      else
        out.ints[i] = t->intAt(i);
    }
    nc.setOutput(0, std::move(out));
    return success();
  }
  return done(nc, nc.build("shardc.convert", {nc.value(0)},
                           {named(nc, "dtype", TypeAttr::get(element))}));
}

namespace {
constexpr StringLiteral kRelu("relu"), kTanh("tanh"), kSqrt("sqrt"),
    kErf("erf"), kExp("exp"), kLog("log"), kNeg("neg"), kSigmoid("sigmoid"),
    kAbs("abs"), kSin("sin"), kCos("cos"), kTan("tan");
constexpr StringLiteral kEq("EQ"), kLt("LT"), kLe("LE"), kGt("GT"), kGe("GE");
} // namespace

void shardc::onnximport::addElementwiseConverters(
    llvm::StringMap<Converter> &table) {
  table.insert({"Abs", unaryOp<kAbs>});
  table.insert({"Add", binaryOp<Binary::Add>});
  table.insert({"Cast", cast});
  table.insert({"Cos", unaryOp<kCos>});
  table.insert({"Div", binaryOp<Binary::Div>});
  table.insert({"Equal", compareOp<kEq>});
  table.insert({"Erf", unaryOp<kErf>});
  table.insert({"Exp", unaryOp<kExp>});
  table.insert({"Greater", compareOp<kGt>});
  table.insert({"GreaterOrEqual", compareOp<kGe>});
  table.insert({"Less", compareOp<kLt>});
  table.insert({"LessOrEqual", compareOp<kLe>});
  table.insert({"Log", unaryOp<kLog>});
  table.insert({"Max", binaryOp<Binary::Max>});
  table.insert({"Min", binaryOp<Binary::Min>});
  table.insert({"Mul", binaryOp<Binary::Mul>});
  table.insert({"Neg", unaryOp<kNeg>});
  table.insert({"Not", logicalNot});
  table.insert({"Pow", binaryOp<Binary::Pow>});
  table.insert({"Relu", unaryOp<kRelu>});
  table.insert({"Sigmoid", unaryOp<kSigmoid>});
  table.insert({"Sin", unaryOp<kSin>});
  table.insert({"Sqrt", unaryOp<kSqrt>});
  table.insert({"Sub", binaryOp<Binary::Sub>});
  table.insert({"Tan", unaryOp<kTan>});
  table.insert({"Tanh", unaryOp<kTanh>});
  table.insert({"Where", where});
}

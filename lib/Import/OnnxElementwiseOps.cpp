//===- OnnxElementwiseOps.cpp - elementwise ONNX ops ----------------------===//
//
// Unary and binary arithmetic, comparisons, Not, Where and Cast: NumPy
// broadcasting becomes broadcast_in_dim, and operands known at import are
// folded on the host (shape arithmetic).
//
//===----------------------------------------------------------------------===//

#include "OnnxImport.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

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

static LogicalResult unary(NodeContext &nc, StringRef mnemonic,
                           double (*fold)(double)) {
  if (failed(nc.checkArity(1, 1)) || failed(nc.checkAttrs({})))
    return failure();
  if (const HostTensor *t = nc.constant(0); t && t->isFloat()) {
    HostTensor out = *t;
    for (double &v : out.floats)
      v = static_cast<float>(fold(v));
    nc.setOutput(0, std::move(out));
    return success();
  }
  return done(nc, nc.build(("shardc." + mnemonic).str(), {nc.value(0)}));
}

template <StringLiteral const &Mnemonic, double (*Fold)(double)>
static LogicalResult unaryOp(NodeContext &nc) {
  return unary(nc, Mnemonic, Fold);
}

enum class Binary { Add, Sub, Mul, Div, Pow, Max, Min };

static StringRef mnemonicOf(Binary kind) {
  static const char *names[] = {"add", "sub", "mul", "div",
                                "pow", "max", "min"};
  return names[static_cast<int>(kind)];
}

/// Folds `a <kind> b` (broadcast already) on the host.
static FailureOr<HostTensor> foldBinary(NodeContext &nc, Binary kind,
                                        const HostTensor &a,
                                        const HostTensor &b) {
  HostTensor out = HostTensor::zeros(a.shape, a.elementType);
  for (int64_t i = 0, n = out.numElements(); i < n; ++i) {
    if (out.isFloat()) {
      double x = a.floatAt(i), y = b.floatAt(i), r = 0;
      switch (kind) {
      case Binary::Add:
        r = x + y;
        break;
      case Binary::Sub:
        r = x - y;
        break;
      case Binary::Mul:
        r = x * y;
        break;
      case Binary::Div:
        r = x / y;
        break;
      case Binary::Pow:
        r = std::pow(x, y);
        break;
      case Binary::Max:
        r = std::max(x, y);
        break;
      case Binary::Min:
        r = std::min(x, y);
        break;
      }
      out.floats[i] = static_cast<float>(r);
      continue;
    }
    // Shape arithmetic: sizes, never near overflow in a valid model; the
    // unsigned arithmetic keeps a hostile one defined.
    uint64_t x = a.ints[i], y = b.ints[i];
    int64_t r = 0;
    switch (kind) {
    case Binary::Add:
      r = static_cast<int64_t>(x + y);
      break;
    case Binary::Sub:
      r = static_cast<int64_t>(x - y);
      break;
    case Binary::Mul:
      r = static_cast<int64_t>(x * y);
      break;
    case Binary::Div:
      if (b.ints[i] == 0 ||
          (a.ints[i] == std::numeric_limits<int64_t>::min() && b.ints[i] == -1))
        return nc.error() << "divides the integer " << a.ints[i] << " by "
                          << b.ints[i];
      r = a.ints[i] / b.ints[i];
      break;
    case Binary::Max:
      r = std::max(a.ints[i], b.ints[i]);
      break;
    case Binary::Min:
      r = std::min(a.ints[i], b.ints[i]);
      break;
    case Binary::Pow:
      return nc.error() << "integer Pow is not supported";
    }
    out.ints[i] = r;
  }
  return out;
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
    kAbs("abs"), kSin("sin"), kCos("cos");
constexpr StringLiteral kEq("EQ"), kLt("LT"), kLe("LE"), kGt("GT"), kGe("GE");
double reluOf(double x) { return x > 0 ? x : 0; }
double tanhOf(double x) { return std::tanh(x); }
double sqrtOf(double x) { return std::sqrt(x); }
double erfOf(double x) { return std::erf(x); }
double expOf(double x) { return std::exp(x); }
double logOf(double x) { return std::log(x); }
double negOf(double x) { return -x; }
double sigmoidOf(double x) { return 1 / (1 + std::exp(-x)); }
double absOf(double x) { return std::fabs(x); }
double sinOf(double x) { return std::sin(x); }
double cosOf(double x) { return std::cos(x); }
} // namespace

void shardc::onnximport::addElementwiseConverters(
    llvm::StringMap<Converter> &table) {
  table.insert({"Abs", unaryOp<kAbs, absOf>});
  table.insert({"Add", binaryOp<Binary::Add>});
  table.insert({"Cast", cast});
  table.insert({"Cos", unaryOp<kCos, cosOf>});
  table.insert({"Div", binaryOp<Binary::Div>});
  table.insert({"Equal", compareOp<kEq>});
  table.insert({"Erf", unaryOp<kErf, erfOf>});
  table.insert({"Exp", unaryOp<kExp, expOf>});
  table.insert({"Greater", compareOp<kGt>});
  table.insert({"GreaterOrEqual", compareOp<kGe>});
  table.insert({"Less", compareOp<kLt>});
  table.insert({"LessOrEqual", compareOp<kLe>});
  table.insert({"Log", unaryOp<kLog, logOf>});
  table.insert({"Max", binaryOp<Binary::Max>});
  table.insert({"Min", binaryOp<Binary::Min>});
  table.insert({"Mul", binaryOp<Binary::Mul>});
  table.insert({"Neg", unaryOp<kNeg, negOf>});
  table.insert({"Not", logicalNot});
  table.insert({"Pow", binaryOp<Binary::Pow>});
  table.insert({"Relu", unaryOp<kRelu, reluOf>});
  table.insert({"Sigmoid", unaryOp<kSigmoid, sigmoidOf>});
  table.insert({"Sin", unaryOp<kSin, sinOf>});
  table.insert({"Sqrt", unaryOp<kSqrt, sqrtOf>});
  table.insert({"Sub", binaryOp<Binary::Sub>});
  table.insert({"Tanh", unaryOp<kTanh, tanhOf>});
  table.insert({"Where", where});
}

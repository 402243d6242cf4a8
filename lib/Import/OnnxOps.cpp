//===- OnnxOps.cpp - ONNX op types to shardc ops --------------------------===//
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

static std::string shapeText(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

static int64_t product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

static NamedAttribute named(NodeContext &nc, StringRef name, Attribute a) {
  return nc.builder.getNamedAttr(name, a);
}

static NamedAttribute dimsAttr(NodeContext &nc, StringRef name,
                               ArrayRef<int64_t> dims) {
  return named(nc, name, nc.builder.getDenseI64ArrayAttr(dims));
}

static LogicalResult done(NodeContext &nc, FailureOr<Value> v,
                          size_t output = 0) {
  if (failed(v))
    return failure();
  nc.setOutput(output, *v);
  return success();
}

/// `axes` made non-negative against `rank`, each once.
static FailureOr<SmallVector<int64_t>>
normalizeAxes(NodeContext &nc, ArrayRef<int64_t> axes, int64_t rank) {
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

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

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
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(a.getShape(), b.getShape());
  if (!shape)
    return nc.error() << "operands of shapes " << shapeText(a.getShape())
                      << " and " << shapeText(b.getShape())
                      << " do not broadcast";
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
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(a.getShape(), b.getShape());
  if (!shape)
    return nc.error() << "operands of shapes " << shapeText(a.getShape())
                      << " and " << shapeText(b.getShape())
                      << " do not broadcast";
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
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(nc.inputType(0).getShape(), nc.inputType(1).getShape());
  if (shape)
    shape = broadcastShapes(*shape, nc.inputType(2).getShape());
  if (!shape)
    return nc.error() << "the shapes of its operands do not broadcast";
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

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

static LogicalResult matmul(NodeContext &nc) {
  if (failed(nc.checkArity(2, 2)) || failed(nc.checkAttrs({})))
    return failure();
  Value a = nc.value(0), b = nc.value(1);
  auto ta = cast<RankedTensorType>(a.getType());
  auto tb = cast<RankedTensorType>(b.getType());
  if (ta.getRank() == 0 || tb.getRank() == 0)
    return nc.error() << "operands must have rank at least 1, got "
                      << shapeText(ta.getShape()) << " and "
                      << shapeText(tb.getShape());
  // NumPy's matmul: a vector operand is a matrix of one row (lhs) or one
  // column (rhs), and that dim is dropped from the result.
  bool lhsVector = ta.getRank() == 1, rhsVector = tb.getRank() == 1;
  FailureOr<Value> lhs =
      lhsVector ? nc.reshape(a, {1, ta.getDimSize(0)}, nc.loc(0, ".lhs"))
                : FailureOr<Value>(a);
  FailureOr<Value> rhs =
      rhsVector ? nc.reshape(b, {tb.getDimSize(0), 1}, nc.loc(0, ".rhs"))
                : FailureOr<Value>(b);
  if (failed(lhs) || failed(rhs))
    return failure();
  ta = cast<RankedTensorType>(lhs->getType());
  tb = cast<RankedTensorType>(rhs->getType());
  int64_t ra = ta.getRank(), rb = tb.getRank();
  if (ta.getDimSize(ra - 1) != tb.getDimSize(rb - 2))
    return nc.error() << "cannot multiply " << shapeText(ta.getShape())
                      << " by " << shapeText(tb.getShape())
                      << ": the contracting sizes differ";
  bool reshaped = lhsVector || rhsVector;
  Location at = reshaped ? nc.loc(0, ".matmul") : nc.loc();
  FailureOr<Value> product;
  if (rb == 2) {
    // x[..., K] times a weight [K, N]: a linear layer, contracted without
    // flattening or broadcasting the weight (which a plan shards as is).
    product = nc.build("shardc.dot_general", {*lhs, *rhs},
                       {dimsAttr(nc, "lhs_batch_dims", {}),
                        dimsAttr(nc, "rhs_batch_dims", {}),
                        dimsAttr(nc, "lhs_contracting_dims", {ra - 1}),
                        dimsAttr(nc, "rhs_contracting_dims", {0})},
                       {}, at);
  } else {
    std::optional<SmallVector<int64_t>> batch =
        broadcastShapes(ta.getShape().drop_back(2), tb.getShape().drop_back(2));
    if (!batch)
      return nc.error() << "the batch dims of " << shapeText(ta.getShape())
                        << " and " << shapeText(tb.getShape())
                        << " do not broadcast";
    SmallVector<int64_t> lhsShape(*batch), rhsShape(*batch);
    lhsShape.append(ta.getShape().take_back(2).begin(),
                    ta.getShape().take_back(2).end());
    rhsShape.append(tb.getShape().take_back(2).begin(),
                    tb.getShape().take_back(2).end());
    lhs = nc.broadcastTo(*lhs, lhsShape, ".lhs");
    rhs = nc.broadcastTo(*rhs, rhsShape, ".rhs");
    if (failed(lhs) || failed(rhs))
      return failure();
    product = nc.build("shardc.matmul", {*lhs, *rhs}, {}, {}, at);
  }
  if (failed(product))
    return failure();
  if (!reshaped)
    return done(nc, product);
  SmallVector<int64_t> shape(
      cast<RankedTensorType>(product->getType()).getShape());
  if (rhsVector)
    shape.pop_back();
  if (lhsVector)
    shape.erase(shape.end() - (rhsVector ? 1 : 2));
  return done(nc, nc.reshape(*product, shape, nc.loc()));
}

static LogicalResult gemm(NodeContext &nc) {
  if (failed(nc.checkArity(2, 3)) ||
      failed(nc.checkAttrs({"alpha", "beta", "transA", "transB"})))
    return failure();
  FailureOr<std::optional<float>> alpha = nc.floatAttr("alpha"),
                                  beta = nc.floatAttr("beta");
  FailureOr<std::optional<int64_t>> transA = nc.intAttr("transA"),
                                    transB = nc.intAttr("transB");
  if (failed(alpha) || failed(beta) || failed(transA) || failed(transB))
    return failure();
  Value a = nc.value(0), b = nc.value(1);
  auto ta = cast<RankedTensorType>(a.getType());
  auto tb = cast<RankedTensorType>(b.getType());
  if (ta.getRank() != 2 || tb.getRank() != 2)
    return nc.error() << "operands must be matrices, got "
                      << shapeText(ta.getShape()) << " and "
                      << shapeText(tb.getShape());
  bool tA = transA->value_or(0), tB = transB->value_or(0);
  float al = alpha->value_or(1.0f), be = beta->value_or(1.0f);
  bool bias = nc.hasInput(2);
  // A transposed weight (nn.Linear's [out, in]) is contracted on its dim 1
  // rather than transposed, so a plan shards it in the layout it is stored.
  FailureOr<Value> r = nc.build(
      "shardc.dot_general", {a, b},
      {dimsAttr(nc, "lhs_batch_dims", {}), dimsAttr(nc, "rhs_batch_dims", {}),
       dimsAttr(nc, "lhs_contracting_dims", {tA ? 0 : 1}),
       dimsAttr(nc, "rhs_contracting_dims", {tB ? 1 : 0})},
      {}, al != 1.0f || bias ? nc.loc(0, ".product") : nc.loc());
  if (failed(r))
    return failure();
  auto shape = cast<RankedTensorType>(r->getType()).getShape();
  Type f32 = Float32Type::get(nc.ctx);
  auto scaled = [&](Value v, float factor, StringRef suffix,
                    Location at) -> FailureOr<Value> {
    HostTensor s = HostTensor::zeros({}, f32);
    s.floats[0] = factor;
    FailureOr<Value> c = nc.constantAs(s, shape, suffix.str() + ".factor");
    if (failed(c))
      return failure();
    return nc.build("shardc.mul", {v, *c}, {}, {}, at);
  };
  if (al != 1.0f)
    r = scaled(*r, al, ".alpha", bias ? nc.loc(0, ".scaled") : nc.loc());
  if (failed(r) || !bias)
    return done(nc, r);
  FailureOr<Value> c = nc.inputAs(2, shape, ".bias");
  if (succeeded(c) && be != 1.0f)
    c = scaled(*c, be, ".beta", nc.loc(0, ".bias.scaled"));
  if (failed(c))
    return failure();
  return done(nc, nc.build("shardc.add", {*r, *c}));
}

//===----------------------------------------------------------------------===//
// Normalization, softmax, loss, reductions
//===----------------------------------------------------------------------===//

static LogicalResult softmax(NodeContext &nc, StringRef mnemonic) {
  if (failed(nc.checkArity(1, 1)) || failed(nc.checkAttrs({"axis"})))
    return failure();
  FailureOr<std::optional<int64_t>> axis = nc.intAttr("axis");
  if (failed(axis))
    return failure();
  FailureOr<int64_t> a =
      nc.normalizeAxis(axis->value_or(-1), nc.inputType(0).getRank(), "axis");
  if (failed(a))
    return failure();
  return done(nc,
              nc.build(("shardc." + mnemonic).str(), {nc.value(0)},
                       {named(nc, "axis", nc.builder.getI64IntegerAttr(*a))}));
}

static LogicalResult softmaxOp(NodeContext &nc) {
  return softmax(nc, "softmax");
}
static LogicalResult logSoftmaxOp(NodeContext &nc) {
  return softmax(nc, "log_softmax");
}

static LogicalResult layerNorm(NodeContext &nc) {
  if (failed(nc.checkArity(2, 3)) ||
      failed(nc.checkAttrs({"axis", "epsilon", "stash_type"})))
    return failure();
  FailureOr<std::optional<int64_t>> axis = nc.intAttr("axis");
  FailureOr<std::optional<float>> epsilon = nc.floatAttr("epsilon");
  if (failed(axis) || failed(epsilon))
    return failure();
  RankedTensorType x = nc.inputType(0);
  FailureOr<int64_t> first =
      nc.normalizeAxis(axis->value_or(-1), x.getRank(), "axis");
  if (failed(first))
    return failure();
  SmallVector<int64_t> axes, normShape;
  for (int64_t d = *first; d < x.getRank(); ++d) {
    axes.push_back(d);
    normShape.push_back(x.getDimSize(d));
  }
  // Scale and bias have the normalized shape, or one that broadcasts to it.
  auto affine = [&](size_t i, StringRef suffix) -> FailureOr<Value> {
    if (!nc.hasInput(i)) {
      HostTensor zero = HostTensor::zeros({}, x.getElementType());
      return nc.constantAs(zero, normShape, suffix);
    }
    return nc.inputAs(i, normShape, suffix);
  };
  FailureOr<Value> gamma = affine(1, ".scale"), beta = affine(2, ".bias");
  if (failed(gamma) || failed(beta))
    return failure();
  return done(
      nc,
      nc.build("shardc.layer_norm", {nc.value(0), *gamma, *beta},
               {dimsAttr(nc, "axes", axes),
                named(nc, "epsilon",
                      nc.builder.getF32FloatAttr(epsilon->value_or(1e-5f)))}));
}

static LogicalResult crossEntropy(NodeContext &nc) {
  if (failed(nc.checkArity(2, 2)) ||
      failed(nc.checkAttrs({"reduction", "ignore_index"})))
    return failure();
  FailureOr<std::optional<std::string>> reduction = nc.stringAttr("reduction");
  FailureOr<std::optional<int64_t>> ignore = nc.intAttr("ignore_index");
  if (failed(reduction) || failed(ignore))
    return failure();
  if (reduction->value_or("mean") != "mean")
    return nc.error() << "has reduction \"" << **reduction
                      << "\"; shardc's cross_entropy takes the mean";
  RankedTensorType scores = nc.inputType(0);
  if (scores.getRank() < 2)
    return nc.error() << "scores must be [N, C, ...], got "
                      << shapeText(scores.getShape());
  Value logits = nc.value(0);
  // ONNX puts the classes in dim 1, shardc in the last dim.
  if (scores.getRank() > 2) {
    SmallVector<int64_t> perm = {0};
    for (int64_t d = 2; d < scores.getRank(); ++d)
      perm.push_back(d);
    perm.push_back(1);
    FailureOr<Value> t =
        nc.build("shardc.transpose", {logits},
                 {dimsAttr(nc, "permutation", perm)}, {}, nc.loc(0, ".logits"));
    if (failed(t))
      return failure();
    logits = *t;
  }
  if (*ignore)
    emitWarning(nc.loc())
        << "node " << nc.index << " (SoftmaxCrossEntropyLoss) has "
        << "ignore_index=" << **ignore
        << ": shardc's cross_entropy averages over every label, so targets "
           "must not hold that value";
  return done(nc, nc.build("shardc.cross_entropy", {logits, nc.value(1)}));
}

/// ReduceMean, ReduceSum, ReduceMax: `axesFromInput` for ReduceSum (its axes
/// are an input from opset 13), the others' are an attribute until 18.
static LogicalResult reduce(NodeContext &nc, StringRef mnemonic,
                            StringRef dimsName, bool axesFromInput) {
  if (failed(nc.checkArity(1, axesFromInput ? 2 : 1)) ||
      failed(nc.checkAttrs(
          axesFromInput
              ? ArrayRef<StringRef>{"keepdims", "noop_with_empty_axes"}
              : ArrayRef<StringRef>{"axes", "keepdims"})))
    return failure();
  RankedTensorType x = nc.inputType(0);
  SmallVector<int64_t> axes;
  if (axesFromInput) {
    if (nc.hasInput(1)) {
      FailureOr<SmallVector<int64_t>> list = nc.intList(1, "axes");
      if (failed(list))
        return failure();
      axes = *list;
    }
    FailureOr<std::optional<int64_t>> noop = nc.intAttr("noop_with_empty_axes");
    if (failed(noop))
      return failure();
    if (axes.empty() && noop->value_or(0)) {
      nc.alias(0, 0);
      return success();
    }
  } else {
    FailureOr<std::optional<SmallVector<int64_t>>> list = nc.intsAttr("axes");
    if (failed(list))
      return failure();
    if (*list)
      axes = **list;
  }
  if (axes.empty())
    for (int64_t d = 0; d < x.getRank(); ++d)
      axes.push_back(d);
  FailureOr<SmallVector<int64_t>> dims = normalizeAxes(nc, axes, x.getRank());
  FailureOr<std::optional<int64_t>> keep = nc.intAttr("keepdims");
  if (failed(dims) || failed(keep))
    return failure();
  llvm::sort(*dims);
  bool keepDims = keep->value_or(1);
  FailureOr<Value> r = nc.build(("shardc." + mnemonic).str(), {nc.value(0)},
                                {dimsAttr(nc, dimsName, *dims)}, {},
                                keepDims ? nc.loc(0, ".reduced") : nc.loc());
  if (failed(r) || !keepDims)
    return done(nc, r);
  SmallVector<int64_t> shape(x.getShape());
  for (int64_t d : *dims)
    shape[d] = 1;
  return done(nc, nc.reshape(*r, shape, nc.loc()));
}

static LogicalResult reduceMean(NodeContext &nc) {
  return reduce(nc, "mean", "dims", false);
}
static LogicalResult reduceMax(NodeContext &nc) {
  return reduce(nc, "reduce_max", "dims", false);
}
static LogicalResult reduceSum(NodeContext &nc) {
  return reduce(nc, "reduce_sum", "dims", true);
}

//===----------------------------------------------------------------------===//
// Layout: reshapes, transposes, slices, concatenation
//===----------------------------------------------------------------------===//

/// A host tensor with the same elements in a new shape.
static HostTensor reshaped(const HostTensor &t, ArrayRef<int64_t> shape) {
  HostTensor out = t;
  out.shape.assign(shape.begin(), shape.end());
  return out;
}

/// Output 0 is input 0 in `shape` (folded when it is known).
static LogicalResult reshapeTo(NodeContext &nc, ArrayRef<int64_t> shape) {
  RankedTensorType x = nc.inputType(0);
  if (product(shape) != product(x.getShape()))
    return nc.error() << "cannot reshape " << shapeText(x.getShape()) << " to "
                      << shapeText(shape);
  if (const HostTensor *t = nc.constant(0)) {
    nc.setOutput(0, reshaped(*t, shape));
    return success();
  }
  return done(nc, nc.reshape(nc.value(0), shape, nc.loc()));
}

static LogicalResult reshape(NodeContext &nc) {
  if (failed(nc.checkArity(2, 2)) || failed(nc.checkAttrs({"allowzero"})))
    return failure();
  FailureOr<SmallVector<int64_t>> target = nc.intList(1, "the target shape");
  FailureOr<std::optional<int64_t>> allowZero = nc.intAttr("allowzero");
  if (failed(target) || failed(allowZero))
    return failure();
  RankedTensorType x = nc.inputType(0);
  SmallVector<int64_t> shape;
  int64_t inferred = -1, known = 1;
  for (auto [i, d] : llvm::enumerate(*target)) {
    if (d == 0 && !allowZero->value_or(0)) {
      if (static_cast<int64_t>(i) >= x.getRank())
        return nc.error() << "target dim " << i
                          << " is 0 (copy the input's), but the input has rank "
                          << x.getRank();
      d = x.getDimSize(i);
    }
    if (d == -1) {
      if (inferred >= 0)
        return nc.error() << "the target shape " << shapeText(*target)
                          << " has more than one -1";
      inferred = i;
      shape.push_back(1);
      continue;
    }
    if (d < 0)
      return nc.error() << "the target shape " << shapeText(*target)
                        << " has a negative dim";
    if (d != 0 && known > std::numeric_limits<int64_t>::max() / d)
      return nc.error() << "the target shape " << shapeText(*target)
                        << " has more elements than fit in int64";
    known *= d;
    shape.push_back(d);
  }
  if (inferred >= 0) {
    int64_t total = product(x.getShape());
    if (known == 0 || total % known != 0)
      return nc.error() << "cannot reshape " << shapeText(x.getShape())
                        << " to " << shapeText(*target);
    shape[inferred] = total / known;
  }
  return reshapeTo(nc, shape);
}

static LogicalResult unsqueeze(NodeContext &nc) {
  if (failed(nc.checkArity(2, 2)) || failed(nc.checkAttrs({})))
    return failure();
  FailureOr<SmallVector<int64_t>> axes = nc.intList(1, "axes");
  if (failed(axes))
    return failure();
  ArrayRef<int64_t> in = nc.inputType(0).getShape();
  int64_t rank = in.size() + axes->size();
  FailureOr<SmallVector<int64_t>> dims = normalizeAxes(nc, *axes, rank);
  if (failed(dims))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d = 0, next = 0; d < rank; ++d)
    shape.push_back(llvm::is_contained(*dims, d) ? 1 : in[next++]);
  return reshapeTo(nc, shape);
}

static LogicalResult squeeze(NodeContext &nc) {
  if (failed(nc.checkArity(1, 2)) || failed(nc.checkAttrs({})))
    return failure();
  ArrayRef<int64_t> in = nc.inputType(0).getShape();
  SmallVector<int64_t> dims;
  if (nc.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> axes = nc.intList(1, "axes");
    if (failed(axes))
      return failure();
    FailureOr<SmallVector<int64_t>> normalized =
        normalizeAxes(nc, *axes, in.size());
    if (failed(normalized))
      return failure();
    dims = *normalized;
    for (int64_t d : dims)
      if (in[d] != 1)
        return nc.error() << "squeezes dim " << d << " of size " << in[d];
  } else {
    for (auto [d, size] : llvm::enumerate(in))
      if (size == 1)
        dims.push_back(d);
  }
  SmallVector<int64_t> shape;
  for (auto [d, size] : llvm::enumerate(in))
    if (!llvm::is_contained(dims, static_cast<int64_t>(d)))
      shape.push_back(size);
  return reshapeTo(nc, shape);
}

static LogicalResult transpose(NodeContext &nc) {
  if (failed(nc.checkArity(1, 1)) || failed(nc.checkAttrs({"perm"})))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> perm = nc.intsAttr("perm");
  if (failed(perm))
    return failure();
  int64_t rank = nc.inputType(0).getRank();
  SmallVector<int64_t> p;
  if (*perm)
    p = **perm;
  else
    for (int64_t d = rank - 1; d >= 0; --d)
      p.push_back(d);
  return done(nc, nc.build("shardc.transpose", {nc.value(0)},
                           {dimsAttr(nc, "permutation", p)}));
}

/// The elements of host tensor `t` in the window start/limit/stride.
static HostTensor sliceHost(const HostTensor &t, ArrayRef<int64_t> start,
                            ArrayRef<int64_t> limit, ArrayRef<int64_t> stride) {
  SmallVector<int64_t> shape;
  for (size_t d = 0; d < t.shape.size(); ++d)
    shape.push_back((limit[d] - start[d] + stride[d] - 1) / stride[d]);
  HostTensor out = HostTensor::zeros(shape, t.elementType);
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t linear = 0, n = out.numElements(); linear < n; ++linear) {
    int64_t src = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      src = src * t.shape[d] + start[d] + index[d] * stride[d];
    if (out.isFloat())
      out.floats[linear] = t.floats[src];
    else
      out.ints[linear] = t.ints[src];
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

/// Output `output` is the window of input 0 (folded when it is known).
static LogicalResult sliceTo(NodeContext &nc, size_t output,
                             ArrayRef<int64_t> start, ArrayRef<int64_t> limit,
                             ArrayRef<int64_t> stride) {
  if (const HostTensor *t = nc.constant(0)) {
    nc.setOutput(output, sliceHost(*t, start, limit, stride));
    return success();
  }
  return done(
      nc,
      nc.build("shardc.slice", {nc.value(0)},
               {dimsAttr(nc, "start", start), dimsAttr(nc, "limit", limit),
                dimsAttr(nc, "stride", stride)},
               {}, nc.loc(output)),
      output);
}

static LogicalResult slice(NodeContext &nc) {
  if (failed(nc.checkArity(3, 5)) || failed(nc.checkAttrs({})))
    return failure();
  ArrayRef<int64_t> in = nc.inputType(0).getShape();
  FailureOr<SmallVector<int64_t>> starts = nc.intList(1, "starts"),
                                  ends = nc.intList(2, "ends");
  if (failed(starts) || failed(ends))
    return failure();
  SmallVector<int64_t> axes, steps(starts->size(), 1);
  for (size_t i = 0; i < starts->size(); ++i)
    axes.push_back(i);
  if (nc.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> list = nc.intList(3, "axes");
    if (failed(list))
      return failure();
    axes = *list;
  }
  if (nc.hasInput(4)) {
    FailureOr<SmallVector<int64_t>> list = nc.intList(4, "steps");
    if (failed(list))
      return failure();
    steps = *list;
  }
  if (ends->size() != starts->size() || axes.size() != starts->size() ||
      steps.size() != starts->size())
    return nc.error() << "starts, ends, axes and steps have different lengths";
  FailureOr<SmallVector<int64_t>> dims = normalizeAxes(nc, axes, in.size());
  if (failed(dims))
    return failure();
  SmallVector<int64_t> start(in.size(), 0), limit(in), stride(in.size(), 1);
  for (size_t i = 0; i < dims->size(); ++i) {
    int64_t d = (*dims)[i];
    if (steps[i] <= 0)
      return nc.error() << "has step " << steps[i] << " on axis " << d
                        << "; shardc slices with positive steps";
    // ONNX clamps starts and ends into [0, size] after counting negative
    // ones from the end.
    int64_t size = in[d];
    auto clampIndex = [size](int64_t v) {
      if (v < 0)
        v = v < -size ? 0 : v + size;
      return std::min(v, size);
    };
    start[d] = clampIndex((*starts)[i]);
    limit[d] = std::max(start[d], clampIndex((*ends)[i]));
    stride[d] = steps[i];
  }
  return sliceTo(nc, 0, start, limit, stride);
}

static LogicalResult split(NodeContext &nc) {
  size_t outputs = nc.node.output_size();
  if (failed(nc.checkArity(1, 2, outputs)) || failed(nc.checkAttrs({"axis"})))
    return failure();
  FailureOr<std::optional<int64_t>> axisAttr = nc.intAttr("axis");
  if (failed(axisAttr))
    return failure();
  ArrayRef<int64_t> in = nc.inputType(0).getShape();
  FailureOr<int64_t> axis =
      nc.normalizeAxis(axisAttr->value_or(0), in.size(), "axis");
  if (failed(axis))
    return failure();
  SmallVector<int64_t> sizes;
  if (nc.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> list = nc.intList(1, "split");
    if (failed(list))
      return failure();
    sizes = *list;
  } else {
    if (in[*axis] % static_cast<int64_t>(outputs) != 0)
      return nc.error() << "splits dim " << *axis << " of size " << in[*axis]
                        << " into " << outputs << " equal parts";
    sizes.assign(outputs, in[*axis] / outputs);
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0 || s > in[*axis])
      return nc.error() << "has a split of size " << s;
    total += s;
  }
  if (sizes.size() != outputs || total != in[*axis])
    return nc.error() << "splits " << shapeText(sizes) << " do not make the "
                      << outputs << " outputs of dim " << *axis << " (size "
                      << in[*axis] << ")";
  int64_t offset = 0;
  for (size_t i = 0; i < outputs; ++i) {
    SmallVector<int64_t> start(in.size(), 0), limit(in), stride(in.size(), 1);
    start[*axis] = offset;
    limit[*axis] = offset + sizes[i];
    offset += sizes[i];
    if (nc.node.output(i).empty())
      continue;
    if (failed(sliceTo(nc, i, start, limit, stride)))
      return failure();
  }
  return success();
}

static LogicalResult concat(NodeContext &nc) {
  if (failed(nc.checkArity(1, std::numeric_limits<size_t>::max())) ||
      failed(nc.checkAttrs({"axis"})))
    return failure();
  FailureOr<std::optional<int64_t>> axisAttr = nc.intAttr("axis");
  if (failed(axisAttr))
    return failure();
  if (!*axisAttr)
    return nc.error() << "has no attribute \"axis\"";
  size_t n = nc.node.input_size();
  RankedTensorType first = nc.inputType(0);
  FailureOr<int64_t> axis =
      nc.normalizeAxis(**axisAttr, first.getRank(), "axis");
  if (failed(axis))
    return failure();
  bool known = true;
  for (size_t i = 0; i < n; ++i) {
    RankedTensorType t = nc.inputType(i);
    if (t.getRank() != first.getRank() ||
        t.getElementType() != first.getElementType())
      return nc.error() << "operands differ in rank or element type";
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (d != *axis && t.getDimSize(d) != first.getDimSize(d))
        return nc.error() << "operands of shapes "
                          << shapeText(first.getShape()) << " and "
                          << shapeText(t.getShape()) << " differ outside dim "
                          << *axis;
    known &= nc.constant(i) != nullptr;
  }
  if (known) {
    // Concatenation along `axis`: blocks of `inner` elements per outer index.
    SmallVector<int64_t> shape(first.getShape());
    shape[*axis] = 0;
    for (size_t i = 0; i < n; ++i)
      shape[*axis] += nc.inputType(i).getDimSize(*axis);
    if (product(shape) <= kMaxFoldedElements) {
      HostTensor out;
      out.shape = shape;
      out.elementType = first.getElementType();
      int64_t outer = product(ArrayRef<int64_t>(shape).take_front(*axis));
      for (int64_t o = 0; o < outer; ++o)
        for (size_t i = 0; i < n; ++i) {
          const HostTensor &t = *nc.constant(i);
          int64_t block = product(ArrayRef<int64_t>(t.shape).drop_front(*axis));
          for (int64_t k = o * block; k < (o + 1) * block; ++k) {
            if (out.isFloat())
              out.floats.push_back(t.floats[k]);
            else
              out.ints.push_back(t.ints[k]);
          }
        }
      nc.setOutput(0, std::move(out));
      return success();
    }
  }
  SmallVector<Value> operands;
  for (size_t i = 0; i < n; ++i)
    operands.push_back(nc.value(i));
  return done(nc, nc.build("shardc.concatenate", operands,
                           {named(nc, "dimension",
                                  nc.builder.getI64IntegerAttr(*axis))}));
}

static LogicalResult gather(NodeContext &nc) {
  if (failed(nc.checkArity(2, 2)) || failed(nc.checkAttrs({"axis"})))
    return failure();
  FailureOr<std::optional<int64_t>> axisAttr = nc.intAttr("axis");
  if (failed(axisAttr))
    return failure();
  RankedTensorType table = nc.inputType(0), ids = nc.inputType(1);
  if (!ids.getElementType().isInteger(64) &&
      !ids.getElementType().isInteger(32))
    return nc.error() << "indices must be INT64 or INT32";
  FailureOr<int64_t> axis =
      nc.normalizeAxis(axisAttr->value_or(0), table.getRank(), "axis");
  if (failed(axis))
    return failure();
  int64_t size = table.getDimSize(*axis);
  const HostTensor *knownIds = nc.constant(1);
  // Known ids: negative ones count from the end, as ONNX says.
  std::optional<HostTensor> normalized;
  if (knownIds) {
    normalized = *knownIds;
    for (int64_t &id : normalized->ints) {
      if (id < -size || id >= size)
        return nc.error() << "index " << id << " is out of range for dim "
                          << *axis << " of size " << size;
      if (id < 0)
        id += size;
    }
  }
  SmallVector<int64_t> shape(table.getShape().take_front(*axis));
  shape.append(ids.getShape().begin(), ids.getShape().end());
  shape.append(table.getShape().drop_front(*axis + 1).begin(),
               table.getShape().end());
  if (const HostTensor *t = nc.constant(0);
      t && knownIds && product(shape) <= kMaxFoldedElements) {
    HostTensor out = HostTensor::zeros(shape, t->elementType);
    int64_t outer = product(table.getShape().take_front(*axis));
    int64_t inner = product(table.getShape().drop_front(*axis + 1));
    int64_t count = normalized->numElements(), linear = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < count; ++k)
        for (int64_t j = 0; j < inner; ++j, ++linear) {
          int64_t src = (o * size + normalized->ints[k]) * inner + j;
          if (out.isFloat())
            out.floats[linear] = t->floats[src];
          else
            out.ints[linear] = t->ints[src];
        }
    nc.setOutput(0, std::move(out));
    return success();
  }
  FailureOr<Value> idsValue =
      normalized ? nc.constantAs(*normalized, normalized->shape, ".indices")
                 : FailureOr<Value>(nc.value(1));
  if (failed(idsValue))
    return failure();
  return done(
      nc, nc.build("shardc.gather", {nc.value(0), *idsValue},
                   {named(nc, "axis", nc.builder.getI64IntegerAttr(*axis))}));
}

//===----------------------------------------------------------------------===//
// Constants and shapes
//===----------------------------------------------------------------------===//

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

namespace {
constexpr StringLiteral kRelu("relu"), kTanh("tanh"), kSqrt("sqrt"),
    kErf("erf"), kExp("exp"), kLog("log"), kNeg("neg"), kSigmoid("sigmoid"),
    kAbs("abs");
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
} // namespace

const llvm::StringMap<Converter> &shardc::onnximport::converters() {
  static const llvm::StringMap<Converter> table = {
      {"Abs", unaryOp<kAbs, absOf>},
      {"Add", binaryOp<Binary::Add>},
      {"Cast", cast},
      {"Concat", concat},
      {"Constant", constant},
      {"ConstantOfShape", constantOfShape},
      {"Div", binaryOp<Binary::Div>},
      {"Equal", compareOp<kEq>},
      {"Erf", unaryOp<kErf, erfOf>},
      {"Exp", unaryOp<kExp, expOf>},
      {"Expand", expand},
      {"Gather", gather},
      {"Gemm", gemm},
      {"Greater", compareOp<kGt>},
      {"GreaterOrEqual", compareOp<kGe>},
      {"Identity", identity},
      {"LayerNormalization", layerNorm},
      {"Less", compareOp<kLt>},
      {"LessOrEqual", compareOp<kLe>},
      {"Log", unaryOp<kLog, logOf>},
      {"LogSoftmax", logSoftmaxOp},
      {"MatMul", matmul},
      {"Max", binaryOp<Binary::Max>},
      {"Min", binaryOp<Binary::Min>},
      {"Mul", binaryOp<Binary::Mul>},
      {"Neg", unaryOp<kNeg, negOf>},
      {"Not", logicalNot},
      {"Pow", binaryOp<Binary::Pow>},
      {"ReduceMax", reduceMax},
      {"ReduceMean", reduceMean},
      {"ReduceSum", reduceSum},
      {"Relu", unaryOp<kRelu, reluOf>},
      {"Reshape", reshape},
      {"Shape", shape},
      {"Sigmoid", unaryOp<kSigmoid, sigmoidOf>},
      {"Slice", slice},
      {"Softmax", softmaxOp},
      {"SoftmaxCrossEntropyLoss", crossEntropy},
      {"Split", split},
      {"Sqrt", unaryOp<kSqrt, sqrtOf>},
      {"Squeeze", squeeze},
      {"Sub", binaryOp<Binary::Sub>},
      {"Tanh", unaryOp<kTanh, tanhOf>},
      {"Transpose", transpose},
      {"Unsqueeze", unsqueeze},
      {"Where", where},
  };
  return table;
}

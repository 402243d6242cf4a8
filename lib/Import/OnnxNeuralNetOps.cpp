//===- OnnxNeuralNetOps.cpp - contractions, norms, losses -----------------===//
//
// MatMul and Gemm (a weight is contracted in the layout it is stored, so a
// plan shards it as the file names it), Softmax, LayerNormalization,
// SoftmaxCrossEntropyLoss and the reductions.
//
//===----------------------------------------------------------------------===//

#include "OnnxImport.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

using namespace mlir;
using namespace shardc::onnximport;
using llvm::SmallVector;
using llvm::StringRef;

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

/// SoftmaxCrossEntropyLoss with `ignore_index` (torch writes -100, the
/// default of F.cross_entropy): the mean over the rows whose label is not
/// `ignored`, as torch takes it. shardc's cross_entropy averages every row,
/// so an ignored row is made to add 0 to its sum, and the mean rescaled:
/// its logits become [0, v, ..., v] with exp(v) = 0 in f32 (logsumexp 0)
/// and its label -1 (which selects nothing), and the mean of all N rows is
/// multiplied by N / kept. Every
/// step is elementwise or cross_entropy itself, so a vocab-parallel layout
/// stays vocab-parallel; counting the kept rows is one more sum over the
/// labels' dims.
/// A logit whose exp is 0 in f32, finite so that no gradient meets inf.
static constexpr double kVanishingLogit = -1e30;

static LogicalResult ignoringLabel(NodeContext &nc, Value logits,
                                   int64_t ignored) {
  auto logitsType = cast<RankedTensorType>(logits.getType());
  Value labels = nc.value(1);
  auto labelsType = cast<RankedTensorType>(labels.getType());
  Type f32 = logitsType.getElementType();
  int64_t rank = labelsType.getRank();
  int64_t classes = logitsType.getShape().back();
  auto scalar = [&](double v, Type type) {
    HostTensor t = HostTensor::zeros({}, type);
    if (t.isFloat())
      t.floats[0] = v;
    else
      t.ints[0] = static_cast<int64_t>(v);
    return t;
  };
  Type labelType = labelsType.getElementType();
  FailureOr<Value> ignoredLabel =
      nc.constantAs(scalar(static_cast<double>(ignored), labelType),
                    labelsType.getShape(), ".ignore_index");
  if (failed(ignoredLabel))
    return failure();
  FailureOr<Value> keep =
      nc.build("shardc.compare", {labels, *ignoredLabel},
               {named(nc, "direction", nc.builder.getStringAttr("NE"))}, {},
               nc.loc(0, ".kept"));
  if (failed(keep))
    return failure();
  SmallVector<int64_t> rowDims;
  for (int64_t d = 0; d < rank; ++d)
    rowDims.push_back(d);
  FailureOr<Value> keepRows = nc.build(
      "shardc.broadcast_in_dim", {*keep}, {dimsAttr(nc, "dims", rowDims)},
      RankedTensorType::get(logitsType.getShape(), nc.builder.getI1Type()),
      nc.loc(0, ".kept.rows"));
  // cross_entropy takes logsumexp after subtracting the row's maximum, so
  // a row adds 0 when its maximum is its only non-vanishing term.
  // Built from iota and splats, so that each device makes its block of the
  // classes where it is.
  Type i32 = nc.builder.getI32Type();
  ArrayRef<int64_t> shape = logitsType.getShape();
  FailureOr<Value> classIds =
      nc.build("shardc.iota", {},
               {named(nc, "dimension", nc.builder.getI64IntegerAttr(rank))},
               RankedTensorType::get(shape, i32), nc.loc(0, ".class_ids"));
  FailureOr<Value> zeroId = nc.constantAs(scalar(0, i32), shape, ".class0");
  FailureOr<Value> zero = nc.constantAs(scalar(0, f32), shape, ".zero");
  FailureOr<Value> vanishing =
      nc.constantAs(scalar(kVanishingLogit, f32), shape, ".vanishing");
  if (failed(keepRows) || failed(classIds) || failed(zeroId) || failed(zero) ||
      failed(vanishing))
    return failure();
  FailureOr<Value> firstClass =
      nc.build("shardc.compare", {*classIds, *zeroId},
               {named(nc, "direction", nc.builder.getStringAttr("EQ"))}, {},
               nc.loc(0, ".first_class"));
  if (failed(firstClass))
    return failure();
  FailureOr<Value> neutral =
      nc.build("shardc.select", {*firstClass, *zero, *vanishing}, {}, {},
               nc.loc(0, ".ignored.logits"));
  if (failed(neutral))
    return failure();
  FailureOr<Value> masked =
      nc.build("shardc.select", {*keepRows, logits, *neutral}, {}, {},
               nc.loc(0, ".logits.kept"));
  if (failed(masked))
    return failure();
  // A label in [0, C) would still select its class: the ignored rows get -1.
  if (ignored >= 0 && ignored < classes) {
    FailureOr<Value> none = nc.constantAs(scalar(-1, labelType),
                                          labelsType.getShape(), ".no_label");
    if (failed(none))
      return failure();
    FailureOr<Value> relabeled =
        nc.build("shardc.select", {*keep, labels, *none}, {}, {},
                 nc.loc(0, ".labels.kept"));
    if (failed(relabeled))
      return failure();
    labels = *relabeled;
  }
  FailureOr<Value> meanOfAll =
      nc.build("shardc.cross_entropy", {*masked, labels}, {}, {},
               nc.loc(0, ".all_rows"));
  FailureOr<Value> keptF = nc.build("shardc.convert", {*keep},
                                    {named(nc, "dtype", TypeAttr::get(f32))},
                                    {}, nc.loc(0, ".kept.f32"));
  if (failed(meanOfAll) || failed(keptF))
    return failure();
  FailureOr<Value> kept =
      nc.build("shardc.reduce_sum", {*keptF}, {dimsAttr(nc, "dims", rowDims)},
               {}, nc.loc(0, ".kept.count"));
  FailureOr<Value> rows = nc.constantAs(
      scalar(static_cast<double>(labelsType.getNumElements()), f32), {},
      ".rows");
  if (failed(kept) || failed(rows))
    return failure();
  FailureOr<Value> scale =
      nc.build("shardc.div", {*rows, *kept}, {}, {}, nc.loc(0, ".rescale"));
  if (failed(scale))
    return failure();
  return done(nc, nc.build("shardc.mul", {*meanOfAll, *scale}));
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
  if (!*ignore)
    return done(nc, nc.build("shardc.cross_entropy", {logits, nc.value(1)}));
  return ignoringLabel(nc, logits, **ignore);
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

void shardc::onnximport::addNeuralNetConverters(
    llvm::StringMap<Converter> &table) {
  table.insert({"Gemm", gemm});
  table.insert({"LayerNormalization", layerNorm});
  table.insert({"LogSoftmax", logSoftmaxOp});
  table.insert({"MatMul", matmul});
  table.insert({"ReduceMax", reduceMax});
  table.insert({"ReduceMean", reduceMean});
  table.insert({"ReduceSum", reduceSum});
  table.insert({"Softmax", softmaxOp});
  table.insert({"SoftmaxCrossEntropyLoss", crossEntropy});
}

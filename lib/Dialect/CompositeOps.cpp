//===- CompositeOps.cpp - softmax, norms, mean, cross_entropy -------------===//
//
// Verifiers, type inference and the expansion into primitive ops
// (DecomposableOpInterface) of the composite ops. A composite has no rule,
// kernel or cost: --shardc-decompose replaces it by what `decompose`
// builds, and the primitives have them all. Softmax, log_softmax, the
// norms and mean also have a gradient rule of their own, written in
// primitives, which a training step applies before expanding them (see
// "Gradient rules" below).
//
// The expansions are written so that a sharded reduced dim stays sharded:
// each reduction over it is a reduce_sum or a reduce_max of the reduced
// size, and nothing gathers or indexes along it (cross_entropy picks the
// label's logit with a one-hot mask, not a gather).
//
//===----------------------------------------------------------------------===//

#include "TensorOpHelpers.h"

#include "shardc/Dialect/GradientBuilder.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/TensorOpBuilders.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;

#include "shardc/Dialect/DecomposableOpInterface.cpp.inc"

//===----------------------------------------------------------------------===//
// Axes (negative ones count from the end, as in PyTorch)
//===----------------------------------------------------------------------===//

/// Checks that `axes` are distinct dims of a rank-`rank` tensor, each in
/// `[-rank, rank)`, and returns them non-negative and ascending.
static FailureOr<SmallVector<int64_t>>
normalizeAxes(std::optional<Location> loc, ArrayRef<int64_t> axes, int64_t rank,
              StringRef what) {
  SmallVector<int64_t> out;
  for (int64_t a : axes) {
    if (a < -rank || a >= rank)
      return failInference(loc, what + " axis " + Twine(a) +
                                    " is out of range for rank " + Twine(rank));
    out.push_back(a < 0 ? a + rank : a);
  }
  llvm::sort(out);
  for (size_t i = 1; i < out.size(); ++i)
    if (out[i] == out[i - 1])
      return failInference(loc,
                           what + " names dim " + Twine(out[i]) + " twice");
  return out;
}

/// The normalized axes of an op that verified.
static SmallVector<int64_t> axesOf(ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> out;
  for (int64_t a : axes)
    out.push_back(a < 0 ? a + rank : a);
  llvm::sort(out);
  return out;
}

static LogicalResult verifyAxis(Operation *op, int64_t axis, Type type) {
  int64_t rank = cast<RankedTensorType>(type).getRank();
  if (axis < -rank || axis >= rank)
    return op->emitOpError()
           << "axis " << axis << " is out of range for " << type;
  return success();
}

namespace {
/// Builds an expansion's primitives at one place. Each intermediate value
/// is named `<result name>.<part>` (`h.max`, `h.sum`), so that the expanded
/// IR and its diagnostics still say which composite a value came from; the
/// last op keeps the composite's own location and name.
class Expansion {
public:
  Expansion(OpBuilder &b, Operation *op) : b(b), loc(op->getLoc()) {
    name = getNameFromLoc(loc).str();
  }

  Location at(StringRef part) const {
    if (name.empty())
      return loc;
    return NameLoc::get(b.getStringAttr(name + "." + part), loc);
  }
  Location final() const { return loc; }

  /// Builds elementwise ops whose value is the part `part`.
  GradientBuilder ops(StringRef part) { return GradientBuilder(b, at(part)); }
  /// Builds the last op, which keeps the composite's location.
  GradientBuilder last() { return GradientBuilder(b, loc); }
  Value splat(StringRef part, Type type, double v) {
    return buildSplatConstant(b, at(part), type, v);
  }
  Value reduceSum(StringRef part, Value x, ArrayRef<int64_t> dims) {
    return buildReduceSum(b, at(part), x, dims);
  }
  Value reduceMax(StringRef part, Value x, ArrayRef<int64_t> dims) {
    return ReduceMaxOp::create(b, at(part), x, b.getDenseI64ArrayAttr(dims));
  }
  /// `x` (the reduction of `like` over `reduced`) broadcast back to `like`.
  Value expand(StringRef part, Value x, Value like, ArrayRef<int64_t> reduced) {
    return buildBroadcastInDim(b, at((part + "_bcast").str()), like.getType(),
                               x, otherDims(rankOf(like), reduced));
  }
  /// `x` (of the shape of `like`'s dims `dims`) broadcast to `like`.
  Value broadcastOn(StringRef part, Value x, Value like,
                    ArrayRef<int64_t> dims) {
    return buildBroadcastInDim(b, at((part + "_bcast").str()), like.getType(),
                               x, dims);
  }
  /// The mean of `x` over `dims`, broadcast back to `x`'s shape.
  Value meanLike(StringRef part, Value x, ArrayRef<int64_t> dims) {
    Value sum = reduceSum((part + "_sum").str(), x, dims);
    double count = 1;
    for (int64_t d : dims)
      count *= static_cast<double>(shapeOf(x)[d]);
    Value mean = ops(part).div(
        sum, splat((part + "_count").str(), sum.getType(), count));
    return expand(part, mean, x, dims);
  }

private:
  OpBuilder &b;
  Location loc;
  std::string name;
};
} // namespace

/// `x - stop_gradient(max(x))` over `axis`: the shifted operand of softmax,
/// log_softmax and cross_entropy. The shift keeps exp finite; detached, it
/// carries no gradient (their values do not depend on it).
static Value shiftByMax(Expansion &e, Value x, int64_t axis) {
  Value max = e.reduceMax("max", x, {axis});
  Value fixed = e.ops("max_detached").stopGradient(max);
  return e.ops("shifted").sub(x, e.expand("max", fixed, x, {axis}));
}

//===----------------------------------------------------------------------===//
// softmax, log_softmax
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::verify() {
  return verifyAxis(*this, static_cast<int64_t>(getAxis()), getType());
}

LogicalResult LogSoftmaxOp::verify() {
  return verifyAxis(*this, static_cast<int64_t>(getAxis()), getType());
}

Value SoftmaxOp::decompose(OpBuilder &b) {
  Expansion e(b, *this);
  int64_t axis =
      axesOf({static_cast<int64_t>(getAxis())}, rankOf(getInput()))[0];
  Value exps = e.ops("exp").exp(shiftByMax(e, getInput(), axis));
  Value sum = e.reduceSum("sum", exps, {axis});
  return e.last().div(exps, e.expand("sum", sum, exps, {axis}));
}

Value LogSoftmaxOp::decompose(OpBuilder &b) {
  Expansion e(b, *this);
  int64_t axis =
      axesOf({static_cast<int64_t>(getAxis())}, rankOf(getInput()))[0];
  Value shifted = shiftByMax(e, getInput(), axis);
  Value sum = e.reduceSum("sum", e.ops("exp").exp(shifted), {axis});
  Value lse = e.ops("logsumexp").log(sum);
  return e.last().sub(shifted, e.expand("logsumexp", lse, shifted, {axis}));
}

//===----------------------------------------------------------------------===//
// layer_norm, rms_norm
//===----------------------------------------------------------------------===//

/// Checks a normalization's `axes`, `epsilon` and that each of `params`
/// (gamma, beta) has the normalized dims' shape; the result is `input`'s
/// type.
static LogicalResult inferNorm(std::optional<Location> loc, StringRef what,
                               Value inputValue, ArrayRef<int64_t> axes,
                               double epsilon, ArrayRef<Value> params,
                               ArrayRef<StringRef> paramNames,
                               SmallVectorImpl<Type> &types) {
  auto input = asTensor(inputValue);
  if (!input)
    return failInference(loc, what + " operand must be a ranked tensor");
  if (axes.empty())
    return failInference(loc, what + " needs at least one axis");
  FailureOr<SmallVector<int64_t>> dims =
      normalizeAxes(loc, axes, input.getRank(), what);
  if (failed(dims))
    return failure();
  if (!(epsilon >= 0))
    return failInference(loc, what + " epsilon must be >= 0");
  SmallVector<int64_t> shape;
  for (int64_t d : *dims)
    shape.push_back(input.getDimSize(d));
  auto expected = RankedTensorType::get(shape, input.getElementType());
  for (auto [param, paramName] : llvm::zip(params, paramNames)) {
    auto type = asTensor(param);
    if (type != expected) {
      std::string got, want;
      llvm::raw_string_ostream(got) << param.getType();
      llvm::raw_string_ostream(want) << expected;
      return failInference(loc, what + " " + paramName + " must be " + want +
                                    " (the normalized dims of " +
                                    "the operand), not " + got);
    }
  }
  types.push_back(input);
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  return inferNorm(loc, "layer_norm", adaptor.getInput(), adaptor.getAxes(),
                   adaptor.getEpsilon().convertToDouble(),
                   {adaptor.getGamma(), adaptor.getBeta()}, {"gamma", "beta"},
                   types);
}

LogicalResult RmsNormOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferNorm(loc, "rms_norm", adaptor.getInput(), adaptor.getAxes(),
                   adaptor.getEpsilon().convertToDouble(), {adaptor.getGamma()},
                   {"gamma"}, types);
}

// (x - mean) * rsqrt(var + eps) * gamma + beta, with the biased variance
// mean((x - mean)^2), as PyTorch computes it.
Value LayerNormOp::decompose(OpBuilder &b) {
  Expansion e(b, *this);
  Value x = getInput();
  SmallVector<int64_t> axes = axesOf(getAxes(), rankOf(x));
  Value centered = e.ops("centered").sub(x, e.meanLike("mean", x, axes));
  Value var = e.meanLike("var", e.ops("square").mul(centered, centered), axes);
  Value eps = e.splat("epsilon", x.getType(), getEpsilon().convertToDouble());
  Value scale = e.ops("rstd").rsqrt(e.ops("var_eps").add(var, eps));
  Value normalized = e.ops("normalized").mul(centered, scale);
  Value gamma = e.broadcastOn("gamma", getGamma(), x, axes);
  Value beta = e.broadcastOn("beta", getBeta(), x, axes);
  return e.last().add(e.ops("scaled").mul(normalized, gamma), beta);
}

// x * rsqrt(mean(x^2) + eps) * gamma.
Value RmsNormOp::decompose(OpBuilder &b) {
  Expansion e(b, *this);
  Value x = getInput();
  SmallVector<int64_t> axes = axesOf(getAxes(), rankOf(x));
  Value meanSquare = e.meanLike("ms", e.ops("square").mul(x, x), axes);
  Value eps = e.splat("epsilon", x.getType(), getEpsilon().convertToDouble());
  Value scale = e.ops("rrms").rsqrt(e.ops("ms_eps").add(meanSquare, eps));
  Value normalized = e.ops("normalized").mul(x, scale);
  return e.last().mul(normalized, e.broadcastOn("gamma", getGamma(), x, axes));
}

//===----------------------------------------------------------------------===//
// mean
//===----------------------------------------------------------------------===//

LogicalResult MeanOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  auto input = asTensor(adaptor.getInput());
  if (!input)
    return failInference(loc, "mean operand must be a ranked tensor");
  FailureOr<SmallVector<int64_t>> dims =
      normalizeAxes(loc, adaptor.getDims(), input.getRank(), "mean");
  if (failed(dims))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < input.getRank(); ++d)
    if (!llvm::is_contained(*dims, d))
      shape.push_back(input.getDimSize(d));
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

Value MeanOp::decompose(OpBuilder &b) {
  Expansion e(b, *this);
  Value x = getInput();
  SmallVector<int64_t> dims = axesOf(getDims(), rankOf(x));
  Value sum = e.reduceSum("sum", x, dims);
  double count = 1;
  for (int64_t d : dims)
    count *= static_cast<double>(shapeOf(x)[d]);
  return e.last().div(sum, e.splat("count", sum.getType(), count));
}

//===----------------------------------------------------------------------===//
// cross_entropy
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &types) {
  auto logits = asTensor(adaptor.getLogits());
  auto labels = asTensor(adaptor.getLabels());
  if (!logits || !labels)
    return failInference(loc, "cross_entropy operands must be ranked tensors");
  if (logits.getRank() < 1)
    return failInference(loc, "cross_entropy logits need a class dim (rank "
                              ">= 1)");
  Type element = labels.getElementType();
  if (!element.isSignlessInteger(32) && !element.isSignlessInteger(64))
    return failInference(loc, "cross_entropy labels must be i32 or i64 class "
                              "ids");
  if (labels.getShape() != logits.getShape().drop_back()) {
    std::string got, want;
    llvm::raw_string_ostream(got) << labels;
    llvm::raw_string_ostream(want) << logits;
    return failInference(loc, "cross_entropy labels must have the shape of "
                              "the logits without the class dim: " +
                                  got + " does not fit logits " + want);
  }
  types.push_back(RankedTensorType::get({}, logits.getElementType()));
  return success();
}

// mean over positions of logsumexp(logits) - logits[label]. Both terms are
// taken from the shifted logits s = logits - max (the shift cancels), and
// s[label] = sum(select(iota == label, s, 0)) over the class dim: with the
// class dim sharded, each device sums its block and the three reductions
// over it (max, sum of exp, the picked logit) are of the labels' size.
Value CrossEntropyOp::decompose(OpBuilder &b) {
  Expansion e(b, *this);
  Value logits = getLogits(), labels = getLabels();
  int64_t classDim = rankOf(logits) - 1;
  Value shifted = shiftByMax(e, logits, classDim);
  Value sum = e.reduceSum("sum", e.ops("exp").exp(shifted), {classDim});
  Value lse = e.ops("logsumexp").log(sum);

  auto labelType = cast<RankedTensorType>(labels.getType());
  auto classIdType =
      RankedTensorType::get(shapeOf(logits), labelType.getElementType());
  Value classIds = buildIota(b, e.at("class_ids"), classIdType, classDim);
  Value labelsWide = buildBroadcastInDim(b, e.at("labels"), classIdType, labels,
                                         iota(0, classDim));
  Value oneHot = buildCompare(b, e.at("one_hot"), classIds, labelsWide, "EQ");
  Value zeros = e.splat("zeros", logits.getType(), 0.0);
  Value picked = e.reduceSum(
      "picked", buildSelect(b, e.at("masked"), oneHot, shifted, zeros),
      {classDim});
  Value perPosition = e.ops("per_position").sub(lse, picked);
  SmallVector<int64_t> all = iota(0, classDim);
  Value total = e.reduceSum("total", perPosition, all);
  double count = static_cast<double>(
      cast<RankedTensorType>(perPosition.getType()).getNumElements());
  return e.last().div(total, e.splat("count", total.getType(), count));
}

//===----------------------------------------------------------------------===//
// Gradient rules
//===----------------------------------------------------------------------===//
// What a fused kernel's backward pass reads, and no more: softmax's and
// log_softmax's read their output, the norms' their input and gamma (their
// row statistics are recomputed from the input: they are a row's size,
// and the full-size values of the expansion are not kept). Differentiating
// the expansion instead would keep its intermediates until the backward
// pass (softmax's exp and output; a layer norm's centered, normalized and
// broadcast statistics).
//
// No op a rule builds equals one of the expansion's (each reads the
// cotangent, or the negated input), so that the partitioner's
// common-subexpression elimination, which merges equal ops, cannot fold
// the backward pass's statistics into the forward pass's values and keep
// those alive until the backward pass; and the step is the same program
// whether activation recomputation runs before or after that elimination.
// Negating is exact, so the statistics have the expansion's bits.

/// The number of elements of `x` over `dims`.
static double countOver(Value x, ArrayRef<int64_t> dims) {
  double count = 1;
  for (int64_t d : dims)
    count *= static_cast<double>(shapeOf(x)[d]);
  return count;
}

/// `x` (reduced over `dims`) divided by their element count: a row mean.
static Value rowMean(GradientBuilder &gb, Value x, ArrayRef<int64_t> dims,
                     double count) {
  Value sum = gb.reduceSum(x, dims);
  return gb.div(sum, gb.splat(sum, count));
}

// dx = y * (g - sum(g * y)) over `axis`.
LogicalResult SoftmaxOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                                Value g, ArrayRef<bool> wanted,
                                                SmallVectorImpl<Value> &out) {
  clearCotangents(*this, out);
  if (!want(wanted, 0))
    return success();
  GradientBuilder gb(b, loc);
  Value y = getResult();
  int64_t axis = axesOf({static_cast<int64_t>(getAxis())}, rankOf(y))[0];
  Value dot = gb.reduceSum(gb.mul(g, y), {axis});
  out[0] =
      gb.mul(y, gb.sub(g, gb.broadcast(dot, y, otherDims(rankOf(y), {axis}))));
  return success();
}

// dx = g - exp(y) * sum(g) over `axis` (exp(y) is the softmax).
LogicalResult
LogSoftmaxOp::buildOperandCotangents(OpBuilder &b, Location loc, Value g,
                                     ArrayRef<bool> wanted,
                                     SmallVectorImpl<Value> &out) {
  clearCotangents(*this, out);
  if (!want(wanted, 0))
    return success();
  GradientBuilder gb(b, loc);
  Value y = getResult();
  int64_t axis = axesOf({static_cast<int64_t>(getAxis())}, rankOf(y))[0];
  Value total =
      gb.broadcast(gb.reduceSum(g, {axis}), y, otherDims(rankOf(y), {axis}));
  out[0] = gb.sub(g, gb.mul(gb.exp(y), total));
  return success();
}

namespace {
/// What the two norms' gradient rules share: the dims a row spans (`axes`)
/// and the others (`kept`), its element count, and, once `normalize` has
/// run, the reciprocal scale broadcast over the rows and the normalized
/// input.
struct NormRows {
  NormRows(Value x, ArrayRef<int64_t> normAxes)
      : axes(axesOf(normAxes, rankOf(x))), kept(otherDims(rankOf(x), axes)),
        count(countOver(x, axes)) {}

  /// `base * rsqrt(statistic + epsilon)`, the row statistic (a variance,
  /// a mean square) broadcast back over its row.
  void normalize(GradientBuilder &gb, Value base, Value statistic,
                 double epsilon) {
    Value rstd = gb.rsqrt(gb.add(statistic, gb.splat(statistic, epsilon)));
    rscale = gb.broadcast(rstd, base, kept);
    xhat = gb.mul(base, rscale);
  }

  SmallVector<int64_t> axes, kept;
  double count;
  Value rscale, xhat;
};
} // namespace

/// The cotangents of a norm's input (out[0]) and gamma (out[1]), where
/// wanted, given its normalized rows, the result cotangent `g` and whether
/// the norm subtracts the mean. With `dy = g * gamma`:
/// d input = rscale * (dy - [mean(dy)] - xhat * mean(dy * xhat)),
/// d gamma = the sum of `g * xhat` over the rows.
static void normCotangents(GradientBuilder &gb, const NormRows &rows, Value g,
                           Value gamma, bool centered, ArrayRef<bool> wanted,
                           SmallVectorImpl<Value> &out) {
  Value xhat = rows.xhat;
  if (want(wanted, 0)) {
    Value dy = gb.mul(g, gb.broadcast(gamma, xhat, rows.axes));
    Value projection = gb.broadcast(
        rowMean(gb, gb.mul(dy, xhat), rows.axes, rows.count), xhat, rows.kept);
    Value inner = dy;
    if (centered)
      inner = gb.sub(dy, gb.broadcast(rowMean(gb, dy, rows.axes, rows.count),
                                      xhat, rows.kept));
    out[0] = gb.mul(gb.sub(inner, gb.mul(xhat, projection)), rows.rscale);
  }
  if (want(wanted, 1))
    out[1] = gb.reduceSum(gb.mul(g, xhat), rows.kept);
}

LogicalResult LayerNormOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                                  Value g,
                                                  ArrayRef<bool> wanted,
                                                  SmallVectorImpl<Value> &out) {
  clearCotangents(*this, out);
  GradientBuilder gb(b, loc);
  Value x = getInput();
  NormRows rows(x, getAxes());
  // x - mean as x + mean(-x): the expansion's `centered`, by other ops
  // (see above).
  Value negatedMean = rowMean(gb, gb.neg(x), rows.axes, rows.count);
  Value centered = gb.add(x, gb.broadcast(negatedMean, x, rows.kept));
  Value var = rowMean(gb, gb.mul(centered, centered), rows.axes, rows.count);
  rows.normalize(gb, centered, var, getEpsilon().convertToDouble());
  normCotangents(gb, rows, g, getGamma(), /*centered=*/true, wanted, out);
  if (want(wanted, 2))
    out[2] = gb.reduceSum(g, rows.kept);
  return success();
}

LogicalResult RmsNormOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                                Value g, ArrayRef<bool> wanted,
                                                SmallVectorImpl<Value> &out) {
  clearCotangents(*this, out);
  GradientBuilder gb(b, loc);
  Value x = getInput();
  NormRows rows(x, getAxes());
  // mean(x * x) as sum(x * -x) / -count: the expansion's bits, by other
  // ops (see above).
  Value negatedSum = gb.reduceSum(gb.mul(x, gb.neg(x)), rows.axes);
  Value meanSquare = gb.div(negatedSum, gb.splat(negatedSum, -rows.count));
  rows.normalize(gb, x, meanSquare, getEpsilon().convertToDouble());
  normCotangents(gb, rows, g, getGamma(), /*centered=*/false, wanted, out);
  return success();
}

// Every averaged element gets g / count: the expansion's own gradient
// (div, then reduce_sum's broadcast), in the same ops.
LogicalResult MeanOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                             Value g, ArrayRef<bool> wanted,
                                             SmallVectorImpl<Value> &out) {
  clearCotangents(*this, out);
  if (!want(wanted, 0))
    return success();
  GradientBuilder gb(b, loc);
  Value x = getInput();
  SmallVector<int64_t> dims = axesOf(getDims(), rankOf(x));
  Value share = gb.div(g, gb.splat(g, countOver(x, dims)));
  out[0] = gb.broadcast(share, x, otherDims(rankOf(x), dims));
  return success();
}

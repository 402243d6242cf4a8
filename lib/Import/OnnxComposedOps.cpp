//===- OnnxComposedOps.cpp - ONNX ops read as compositions of shardc ops --===//
//
// ONNX ops that shardc has no op of its own for, rewritten at import into
// ops it has, so that each keeps its one home (its rule, gradient, kernel
// and cost stay those of the ops it is made of):
//
//   Trilu          select(mask, x, 0), the mask a constant of the last two
//                  dims (folded when x is known: Meta's Llama mask
//                  `torch.triu(torch.full(..., -inf), 1)` is);
//   Clip           max(x, min), then min(., max) (torch.clamp);
//   Reciprocal     1 / x;
//   Softplus       relu(x) + log(1 + exp(-|x|)), which does not overflow;
//   OneHot         select(indices == iota, on, off);
//   ArgMax         the first position holding reduce_max (compare, iota,
//                  select, a min as -max(-.)), converted to INT64;
//   TopK           K rounds of ArgMax, each masking its pick with -inf; a
//                  value is the sum of x where its pick is, so the gradient
//                  reaches x through the values (indices have none);
//   CumSum         a product with a triangular constant of 0 and 1;
//   GatherElements the sum over a dim of x where indices == iota;
//   ScatterElements the same one-hot sum of the updates, in data's layout,
//                  added to data or selected where an update lands;
//   Conv           im2col out of slices (or, for patches, a reshape) and a
//                  dot_general with groups as a batch dim;
//   Einsum         dot_general, left to right, each step contracting the
//                  labels no later operand and not the result has; a label
//                  of one operand only that is not kept, reduce_sum; the
//                  result's order, a transpose.
//
// Each is exact: the values it selects or sums with zeros are x's own.
//
//===----------------------------------------------------------------------===//

#include "OnnxImport.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace shardc::onnximport;
using llvm::SmallVector;
using llvm::StringRef;

/// A scalar host tensor of `type` holding `v`.
static HostTensor scalarOf(double v, Type type) {
  HostTensor t = HostTensor::zeros({}, type);
  if (t.isFloat())
    t.floats[0] = v;
  else
    t.ints[0] = static_cast<int64_t>(v);
  return t;
}

/// Builds op `name` named `<output 0>.<suffix>`; an empty suffix names it
/// after the node's output.
static FailureOr<Value> make(NodeContext &nc, StringRef name,
                             ValueRange operands,
                             ArrayRef<NamedAttribute> attrs = {},
                             Type resultType = {}, StringRef suffix = "") {
  return nc.build(name, operands, attrs, resultType,
                  suffix.empty() ? nc.loc() : nc.loc(0, "." + suffix.str()));
}

static FailureOr<Value> compareOf(NodeContext &nc, Value a, Value b,
                                  StringRef direction, StringRef suffix) {
  return make(nc, "shardc.compare", {a, b},
              {named(nc, "direction", nc.builder.getStringAttr(direction))}, {},
              suffix);
}

static FailureOr<Value> iotaOf(NodeContext &nc, ArrayRef<int64_t> shape,
                               int64_t dim, Type type, StringRef suffix) {
  return make(nc, "shardc.iota", {},
              {named(nc, "dimension", nc.builder.getI64IntegerAttr(dim))},
              RankedTensorType::get(shape, type), suffix);
}

/// `v` (whose dims are `shape` without `dim`) broadcast along `dim`.
static FailureOr<Value> broadcastAlong(NodeContext &nc, Value v,
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

static SmallVector<int64_t> without(ArrayRef<int64_t> shape, int64_t dim) {
  SmallVector<int64_t> out(shape);
  out.erase(out.begin() + dim);
  return out;
}

/// An integer attribute, `fallback` when absent.
static FailureOr<int64_t> intAttrOr(NodeContext &nc, StringRef name,
                                    int64_t fallback) {
  FailureOr<std::optional<int64_t>> v = nc.intAttr(name);
  if (failed(v))
    return failure();
  return v->value_or(fallback);
}

/// A scalar integer input known at import (Trilu's k, TopK's K, ...).
static FailureOr<int64_t> scalarInput(NodeContext &nc, size_t i,
                                      StringRef what) {
  FailureOr<SmallVector<int64_t>> list = nc.intList(i, what);
  if (failed(list))
    return failure();
  if (list->size() != 1)
    return nc.error() << what << " (input " << i << ") must be one integer";
  return list->front();
}

//===----------------------------------------------------------------------===//
// Trilu
//===----------------------------------------------------------------------===//

static LogicalResult trilu(NodeContext &nc) {
  if (failed(nc.checkArity(1, 2)) || failed(nc.checkAttrs({"upper"})))
    return failure();
  FailureOr<int64_t> upper = intAttrOr(nc, "upper", 1);
  if (failed(upper))
    return failure();
  int64_t k = 0;
  if (nc.hasInput(1)) {
    FailureOr<int64_t> given = scalarInput(nc, 1, "the diagonal k");
    if (failed(given))
      return failure();
    k = *given;
  }
  RankedTensorType type = nc.inputType(0);
  if (type.getRank() < 2)
    return nc.error() << "its input has rank " << type.getRank()
                      << "; Trilu takes matrices (rank 2 or more)";
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  // The mask is built at import.
  if (rows > 0 && cols > kMaxFoldedElements / rows)
    return nc.error() << "masks a " << rows << "x" << cols
                      << " matrix, more than the " << kMaxFoldedElements
                      << " elements a constant built at import may have";
  auto keeps = [&](int64_t i, int64_t j) {
    return *upper ? j - i >= k : j - i <= k;
  };
  HostTensor mask = HostTensor::zeros({rows, cols}, nc.builder.getI1Type());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      mask.ints[i * cols + j] = keeps(i, j);
  if (const HostTensor *t = nc.constant(0)) {
    HostTensor out = *t;
    for (int64_t e = 0, n = out.numElements(); e < n; ++e)
      if (!mask.ints[e % (rows * cols)]) {
        if (out.isFloat())
          out.floats[e] = 0;
        else
          out.ints[e] = 0;
      }
    nc.setOutput(0, std::move(out));
    return success();
  }
  FailureOr<Value> keep = nc.constantAs(mask, shape, ".mask");
  FailureOr<Value> zero =
      nc.constantAs(scalarOf(0, type.getElementType()), shape, ".zero");
  if (failed(keep) || failed(zero))
    return failure();
  return done(nc, make(nc, "shardc.select", {*keep, nc.value(0), *zero}));
}

//===----------------------------------------------------------------------===//
// Clip, Reciprocal, Softplus
//===----------------------------------------------------------------------===//

static LogicalResult clip(NodeContext &nc) {
  if (failed(nc.checkArity(1, 3)) || failed(nc.checkAttrs({})))
    return failure();
  RankedTensorType type = nc.inputType(0);
  if (!isa<FloatType>(type.getElementType()))
    return nc.error() << "clips a tensor of " << type.getElementType()
                      << "; shardc clips FLOAT tensors";
  ArrayRef<int64_t> shape = type.getShape();
  for (size_t i = 1; i < 3; ++i)
    if (nc.hasInput(i) && nc.inputType(i).getRank() != 0)
      return nc.error() << "its bound (input " << i << ") must be a scalar";
  const HostTensor *x = nc.constant(0);
  if (x && (!nc.hasInput(1) || nc.constant(1)) &&
      (!nc.hasInput(2) || nc.constant(2))) {
    HostTensor out = *x;
    for (double &v : out.floats) {
      if (nc.hasInput(1))
        v = std::max(v, nc.constant(1)->floatAt(0));
      if (nc.hasInput(2))
        v = std::min(v, nc.constant(2)->floatAt(0));
    }
    nc.setOutput(0, std::move(out));
    return success();
  }
  Value v = nc.value(0);
  if (!nc.hasInput(1) && !nc.hasInput(2)) {
    nc.alias(0, 0);
    return success();
  }
  if (nc.hasInput(1)) {
    FailureOr<Value> lo = nc.inputAs(1, shape, ".min");
    if (failed(lo))
      return failure();
    FailureOr<Value> r = make(nc, "shardc.max", {v, *lo}, {}, {},
                              nc.hasInput(2) ? "above_min" : "");
    if (failed(r))
      return failure();
    v = *r;
  }
  if (nc.hasInput(2)) {
    FailureOr<Value> hi = nc.inputAs(2, shape, ".max");
    if (failed(hi))
      return failure();
    return done(nc, make(nc, "shardc.min", {v, *hi}));
  }
  nc.setOutput(0, v);
  return success();
}

static LogicalResult reciprocal(NodeContext &nc) {
  if (failed(nc.checkArity(1, 1)) || failed(nc.checkAttrs({})))
    return failure();
  RankedTensorType type = nc.inputType(0);
  if (!isa<FloatType>(type.getElementType()))
    return nc.error() << "its operand must be FLOAT";
  if (const HostTensor *t = nc.constant(0)) {
    HostTensor out = *t;
    for (double &v : out.floats)
      v = static_cast<float>(1.0 / v);
    nc.setOutput(0, std::move(out));
    return success();
  }
  FailureOr<Value> one = nc.constantAs(scalarOf(1, type.getElementType()),
                                       type.getShape(), ".one");
  if (failed(one))
    return failure();
  return done(nc, make(nc, "shardc.div", {*one, nc.value(0)}));
}

static LogicalResult softplus(NodeContext &nc) {
  if (failed(nc.checkArity(1, 1)) || failed(nc.checkAttrs({})))
    return failure();
  RankedTensorType type = nc.inputType(0);
  if (!isa<FloatType>(type.getElementType()))
    return nc.error() << "its operand must be FLOAT";
  Value x = nc.value(0);
  // log(1 + e^x) = max(x, 0) + log(1 + e^-|x|): e^-|x| <= 1 never
  // overflows where e^x would (x > 88).
  FailureOr<Value> one = nc.constantAs(scalarOf(1, type.getElementType()),
                                       type.getShape(), ".one");
  FailureOr<Value> pos = make(nc, "shardc.relu", {x}, {}, {}, "positive");
  FailureOr<Value> mag = make(nc, "shardc.abs", {x}, {}, {}, "abs");
  if (failed(one) || failed(pos) || failed(mag))
    return failure();
  FailureOr<Value> negMag = make(nc, "shardc.neg", {*mag}, {}, {}, "neg_abs");
  if (failed(negMag))
    return failure();
  FailureOr<Value> e = make(nc, "shardc.exp", {*negMag}, {}, {}, "exp");
  if (failed(e))
    return failure();
  FailureOr<Value> sum = make(nc, "shardc.add", {*one, *e}, {}, {}, "one_plus");
  if (failed(sum))
    return failure();
  FailureOr<Value> log = make(nc, "shardc.log", {*sum}, {}, {}, "log");
  if (failed(log))
    return failure();
  return done(nc, make(nc, "shardc.add", {*pos, *log}));
}

//===----------------------------------------------------------------------===//
// OneHot
//===----------------------------------------------------------------------===//

static LogicalResult oneHot(NodeContext &nc) {
  if (failed(nc.checkArity(3, 3)) || failed(nc.checkAttrs({"axis"})))
    return failure();
  FailureOr<int64_t> depth = scalarInput(nc, 1, "the depth");
  FailureOr<int64_t> axisAttr = intAttrOr(nc, "axis", -1);
  if (failed(depth) || failed(axisAttr))
    return failure();
  const HostTensor *values = nc.constant(2);
  if (!values || values->numElements() != 2)
    return nc.error() << "its values (input 2) must be two elements [off, on] "
                         "known at import";
  RankedTensorType idx = nc.inputType(0);
  if (!isa<IntegerType>(idx.getElementType()) ||
      idx.getElementType().isInteger(1))
    return nc.error() << "its indices must be integers";
  if (*depth < 1 || *depth > kMaxFoldedElements)
    return nc.error() << "has depth " << *depth;
  int64_t rank = idx.getRank() + 1;
  FailureOr<int64_t> axis = nc.normalizeAxis(*axisAttr, rank, "axis");
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(idx.getShape());
  shape.insert(shape.begin() + *axis, *depth);
  if (llvm::Expected<SmallVector<int64_t>> ok = checkedShape(shape); !ok)
    return nc.error() << "its result " << llvm::toString(ok.takeError());
  Type out = values->elementType;
  HostTensor off = scalarOf(values->floatAt(0), out),
             on = scalarOf(values->floatAt(1), out);
  FailureOr<Value> ids =
      broadcastAlong(nc, nc.value(0), shape, *axis, "indices");
  FailureOr<Value> pos =
      iotaOf(nc, shape, *axis, idx.getElementType(), "positions");
  FailureOr<Value> offV = nc.constantAs(off, shape, ".off");
  FailureOr<Value> onV = nc.constantAs(on, shape, ".on");
  if (failed(ids) || failed(pos) || failed(offV) || failed(onV))
    return failure();
  FailureOr<Value> hit = compareOf(nc, *ids, *pos, "EQ", "hit");
  if (failed(hit))
    return failure();
  return done(nc, make(nc, "shardc.select", {*hit, *onV, *offV}));
}

//===----------------------------------------------------------------------===//
// ArgMax, TopK
//===----------------------------------------------------------------------===//

/// The first position along `axis` of the maximum of `x` (f32), as f32
/// positions of shape `x` without `axis`; `last` takes the last one.
static FailureOr<Value> argMaxPositions(NodeContext &nc, Value x, int64_t axis,
                                        bool last, const std::string &tag) {
  auto type = cast<RankedTensorType>(x.getType());
  ArrayRef<int64_t> shape = type.getShape();
  Type f32 = type.getElementType();
  FailureOr<Value> max = make(nc, "shardc.reduce_max", {x},
                              {dimsAttr(nc, "dims", {axis})}, {}, tag + "max");
  if (failed(max))
    return failure();
  FailureOr<Value> maxB = broadcastAlong(nc, *max, shape, axis, tag + "max.b");
  FailureOr<Value> pos = iotaOf(nc, shape, axis, f32, tag + "positions");
  if (failed(maxB) || failed(pos))
    return failure();
  FailureOr<Value> atMax = compareOf(nc, x, *maxB, "EQ", tag + "at_max");
  // Positions elsewhere lose: past the end for the first, -1 for the last.
  FailureOr<Value> never =
      nc.constantAs(scalarOf(last ? -1.0 : double(shape[axis]), f32), shape,
                    "." + tag + "never");
  if (failed(atMax) || failed(never))
    return failure();
  FailureOr<Value> cand = make(nc, "shardc.select", {*atMax, *pos, *never}, {},
                               {}, tag + "candidates");
  if (failed(cand))
    return failure();
  if (last)
    return make(nc, "shardc.reduce_max", {*cand},
                {dimsAttr(nc, "dims", {axis})}, {}, tag + "position");
  FailureOr<Value> neg = make(nc, "shardc.neg", {*cand}, {}, {}, tag + "neg");
  if (failed(neg))
    return failure();
  FailureOr<Value> first =
      make(nc, "shardc.reduce_max", {*neg}, {dimsAttr(nc, "dims", {axis})}, {},
           tag + "neg_position");
  if (failed(first))
    return failure();
  return make(nc, "shardc.neg", {*first}, {}, {}, tag + "position");
}

/// Input 0 as f32 (integers converted: exact below 2^24).
static FailureOr<Value> asF32(NodeContext &nc, StringRef suffix) {
  Value x = nc.value(0);
  auto type = cast<RankedTensorType>(x.getType());
  if (type.getElementType().isF32())
    return x;
  return make(nc, "shardc.convert", {x},
              {named(nc, "dtype", TypeAttr::get(nc.builder.getF32Type()))}, {},
              suffix);
}

static LogicalResult argMax(NodeContext &nc) {
  if (failed(nc.checkArity(1, 1)) ||
      failed(nc.checkAttrs({"axis", "keepdims", "select_last_index"})))
    return failure();
  RankedTensorType type = nc.inputType(0);
  FailureOr<int64_t> axisAttr = intAttrOr(nc, "axis", 0),
                     keep = intAttrOr(nc, "keepdims", 1),
                     last = intAttrOr(nc, "select_last_index", 0);
  if (failed(axisAttr) || failed(keep) || failed(last))
    return failure();
  FailureOr<int64_t> axis = nc.normalizeAxis(*axisAttr, type.getRank(), "axis");
  if (failed(axis))
    return failure();
  if (type.getElementType().isInteger(1))
    return nc.error() << "its operand must be numbers, not BOOL";
  SmallVector<int64_t> reduced = without(type.getShape(), *axis);
  SmallVector<int64_t> kept(type.getShape());
  kept[*axis] = 1;
  Type i64 = nc.builder.getI64Type();
  if (const HostTensor *t = nc.constant(0)) {
    HostTensor out = HostTensor::zeros(reduced, i64);
    ArrayRef<int64_t> shape = t->shape;
    int64_t n = shape[*axis], inner = 1;
    for (size_t d = *axis + 1; d < shape.size(); ++d)
      inner *= shape[d];
    for (int64_t o = 0, e = out.numElements(); o < e; ++o) {
      int64_t outer = o / inner, in = o % inner, best = 0;
      for (int64_t j = 1; j < n; ++j) {
        double v = t->floatAt((outer * n + j) * inner + in),
               b = t->floatAt((outer * n + best) * inner + in);
        if (v > b || (*last && v == b))
          best = j;
      }
      out.ints[o] = best;
    }
    if (*keep)
      out.shape = kept;
    nc.setOutput(0, std::move(out));
    return success();
  }
  FailureOr<Value> x = asF32(nc, "f32");
  if (failed(x))
    return failure();
  FailureOr<Value> pos = argMaxPositions(nc, *x, *axis, *last, "");
  if (failed(pos))
    return failure();
  FailureOr<Value> ids = make(nc, "shardc.convert", {*pos},
                              {named(nc, "dtype", TypeAttr::get(i64))}, {},
                              *keep ? "reduced" : "");
  if (failed(ids) || !*keep)
    return done(nc, ids);
  return done(nc, nc.reshape(*ids, kept, nc.loc()));
}

/// More rounds than this is no top-k of a model (MoE routes to 1 or 2).
static constexpr int64_t kMaxTopK = 64;

static LogicalResult topK(NodeContext &nc) {
  if (failed(nc.checkArity(2, 2, 2)) ||
      failed(nc.checkAttrs({"axis", "largest", "sorted"})))
    return failure();
  RankedTensorType type = nc.inputType(0);
  if (!type.getElementType().isF32())
    return nc.error() << "its operand must be FLOAT";
  FailureOr<int64_t> k = scalarInput(nc, 1, "K");
  FailureOr<int64_t> axisAttr = intAttrOr(nc, "axis", -1),
                     largest = intAttrOr(nc, "largest", 1);
  if (failed(k) || failed(axisAttr) || failed(largest))
    return failure();
  FailureOr<int64_t> axis = nc.normalizeAxis(*axisAttr, type.getRank(), "axis");
  if (failed(axis))
    return failure();
  ArrayRef<int64_t> shape = type.getShape();
  if (*k < 1 || *k > shape[*axis])
    return nc.error() << "K = " << *k << " is not in [1, " << shape[*axis]
                      << "], the size of dim " << *axis;
  if (*k > kMaxTopK)
    return nc.error() << "K = " << *k << ": shardc reads TopK as K rounds of "
                      << "ArgMax, at most " << kMaxTopK;
  if (nc.node.output_size() != 2 || nc.node.output(0).empty())
    return nc.error() << "shardc reads TopK with its values output";
  Type f32 = type.getElementType(), i64 = nc.builder.getI64Type();
  Value x = nc.value(0);
  // The smallest are the largest of -x.
  Value remaining = x;
  if (!*largest) {
    FailureOr<Value> neg = make(nc, "shardc.neg", {x}, {}, {}, "negated");
    if (failed(neg))
      return failure();
    remaining = *neg;
  }
  FailureOr<Value> pos = iotaOf(nc, shape, *axis, f32, "positions");
  FailureOr<Value> zero = nc.constantAs(scalarOf(0, f32), shape, ".zero");
  FailureOr<Value> taken = nc.constantAs(
      scalarOf(-std::numeric_limits<double>::infinity(), f32), shape, ".taken");
  if (failed(pos) || failed(zero) || failed(taken))
    return failure();
  SmallVector<int64_t> kept(shape);
  kept[*axis] = 1;
  SmallVector<Value> values, indices;
  for (int64_t r = 0; r < *k; ++r) {
    std::string tag = "round" + std::to_string(r) + ".";
    FailureOr<Value> at = argMaxPositions(nc, remaining, *axis, false, tag);
    if (failed(at))
      return failure();
    FailureOr<Value> atB =
        broadcastAlong(nc, *at, shape, *axis, tag + "pick.b");
    if (failed(atB))
      return failure();
    FailureOr<Value> pick = compareOf(nc, *pos, *atB, "EQ", tag + "pick");
    if (failed(pick))
      return failure();
    // The value as a sum of x where the pick is: its gradient reaches x.
    FailureOr<Value> only =
        make(nc, "shardc.select", {*pick, x, *zero}, {}, {}, tag + "picked");
    if (failed(only))
      return failure();
    FailureOr<Value> value =
        make(nc, "shardc.reduce_sum", {*only}, {dimsAttr(nc, "dims", {*axis})},
             {}, tag + "value");
    FailureOr<Value> index =
        make(nc, "shardc.convert", {*at},
             {named(nc, "dtype", TypeAttr::get(i64))}, {}, tag + "index");
    if (failed(value) || failed(index))
      return failure();
    FailureOr<Value> valueK =
        nc.reshape(*value, kept, nc.loc(0, "." + tag + "v"));
    FailureOr<Value> indexK =
        nc.reshape(*index, kept, nc.loc(0, "." + tag + "i"));
    if (failed(valueK) || failed(indexK))
      return failure();
    values.push_back(*valueK);
    indices.push_back(*indexK);
    if (r + 1 == *k)
      break;
    FailureOr<Value> next =
        make(nc, "shardc.select", {*pick, *taken, remaining}, {}, {},
             tag + "remaining");
    if (failed(next))
      return failure();
    remaining = *next;
  }
  auto joined = [&](ArrayRef<Value> parts, size_t output) -> FailureOr<Value> {
    if (parts.size() == 1)
      return parts.front();
    return nc.build(
        "shardc.concatenate", parts,
        {named(nc, "dimension", nc.builder.getI64IntegerAttr(*axis))}, {},
        nc.loc(output));
  };
  FailureOr<Value> v = joined(values, 0);
  if (failed(v))
    return failure();
  nc.setOutput(0, *v);
  if (!nc.node.output(1).empty()) {
    FailureOr<Value> i = joined(indices, 1);
    if (failed(i))
      return failure();
    nc.setOutput(1, *i);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// CumSum, GatherElements
//===----------------------------------------------------------------------===//

static LogicalResult cumSum(NodeContext &nc) {
  if (failed(nc.checkArity(2, 2)) ||
      failed(nc.checkAttrs({"exclusive", "reverse"})))
    return failure();
  RankedTensorType type = nc.inputType(0);
  FailureOr<int64_t> axisIn = scalarInput(nc, 1, "the axis");
  FailureOr<int64_t> exclusive = intAttrOr(nc, "exclusive", 0),
                     reverse = intAttrOr(nc, "reverse", 0);
  if (failed(axisIn) || failed(exclusive) || failed(reverse))
    return failure();
  FailureOr<int64_t> axis = nc.normalizeAxis(*axisIn, type.getRank(), "axis");
  if (failed(axis))
    return failure();
  if (type.getElementType().isInteger(1))
    return nc.error() << "its operand must be numbers, not BOOL";
  ArrayRef<int64_t> shape = type.getShape();
  int64_t n = shape[*axis];
  // out[i] = sum of x[j] over the j that `adds` to i.
  auto adds = [&](int64_t j, int64_t i) {
    if (*exclusive && i == j)
      return false;
    return *reverse ? j >= i : j <= i;
  };
  if (const HostTensor *t = nc.constant(0)) {
    HostTensor out = HostTensor::zeros(t->shape, t->elementType);
    int64_t inner = 1;
    for (size_t d = *axis + 1; d < shape.size(); ++d)
      inner *= shape[d];
    for (int64_t e = 0, total = out.numElements(); e < total; ++e) {
      int64_t i = (e / inner) % n, base = e - i * inner;
      for (int64_t j = 0; j < n; ++j)
        if (adds(j, i)) {
          if (out.isFloat())
            out.floats[e] += t->floats[base + j * inner];
          else
            out.ints[e] += t->ints[base + j * inner];
        }
    }
    nc.setOutput(0, std::move(out));
    return success();
  }
  if (n > 0 && n > kMaxFoldedElements / n)
    return nc.error() << "sums " << n << " elements along axis " << *axis
                      << "; its " << n << "x" << n
                      << " triangle is more than the " << kMaxFoldedElements
                      << " elements a constant built at import may have";
  Type f32 = nc.builder.getF32Type();
  HostTensor tri = HostTensor::zeros({n, n}, f32);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i)
      tri.floats[j * n + i] = adds(j, i);
  FailureOr<Value> x = asF32(nc, "f32");
  FailureOr<Value> triV = nc.constantAs(tri, {n, n}, ".triangle");
  if (failed(x) || failed(triV))
    return failure();
  // [dims without axis..., n], then the summed dim back at `axis`.
  FailureOr<Value> sums = make(nc, "shardc.dot_general", {*x, *triV},
                               {dimsAttr(nc, "lhs_batch_dims", {}),
                                dimsAttr(nc, "rhs_batch_dims", {}),
                                dimsAttr(nc, "lhs_contracting_dims", {*axis}),
                                dimsAttr(nc, "rhs_contracting_dims", {0})},
                               {}, "sums");
  if (failed(sums))
    return failure();
  int64_t rank = type.getRank();
  Value result = *sums;
  bool isFloat = type.getElementType().isF32();
  if (*axis != rank - 1) {
    SmallVector<int64_t> perm;
    for (int64_t d = 0; d < rank - 1; ++d) {
      if (d == *axis)
        perm.push_back(rank - 1);
      perm.push_back(d);
    }
    FailureOr<Value> t =
        make(nc, "shardc.transpose", {result},
             {dimsAttr(nc, "permutation", perm)}, {}, isFloat ? "" : "moved");
    if (failed(t))
      return failure();
    result = *t;
  }
  if (isFloat) {
    nc.setOutput(0, result);
    return success();
  }
  return done(nc,
              make(nc, "shardc.convert", {result},
                   {named(nc, "dtype", TypeAttr::get(type.getElementType()))}));
}

static LogicalResult gatherElements(NodeContext &nc) {
  if (failed(nc.checkArity(2, 2)) || failed(nc.checkAttrs({"axis"})))
    return failure();
  RankedTensorType data = nc.inputType(0), idx = nc.inputType(1);
  FailureOr<int64_t> axisAttr = intAttrOr(nc, "axis", 0);
  if (failed(axisAttr))
    return failure();
  int64_t rank = data.getRank();
  FailureOr<int64_t> axis = nc.normalizeAxis(*axisAttr, rank, "axis");
  if (failed(axis))
    return failure();
  if (!data.getElementType().isF32())
    return nc.error() << "gathers from a tensor of " << data.getElementType()
                      << "; shardc gathers elements of FLOAT tensors";
  if (idx.getRank() != rank || !isa<IntegerType>(idx.getElementType()) ||
      idx.getElementType().isInteger(1))
    return nc.error() << "its indices must be integers of the data's rank";
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && idx.getDimSize(d) > data.getDimSize(d))
      return nc.error() << "indices " << shapeText(idx.getShape())
                        << " are larger than the data "
                        << shapeText(data.getShape()) << " in dim " << d;
  int64_t n = data.getDimSize(*axis);
  // out[p] = sum over q of data[p with axis = q] where indices[p] == q, on
  // [indices..., n].
  SmallVector<int64_t> wide(idx.getShape());
  wide.push_back(n);
  if (llvm::Expected<SmallVector<int64_t>> ok = checkedShape(wide); !ok)
    return nc.error() << "its one-hot " << shapeText(wide) << " "
                      << llvm::toString(ok.takeError());
  Value x = nc.value(0);
  SmallVector<int64_t> limit(data.getShape());
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis)
      limit[d] = idx.getDimSize(d);
  if (ArrayRef<int64_t>(limit) != data.getShape()) {
    FailureOr<Value> cut =
        make(nc, "shardc.slice", {x},
             {dimsAttr(nc, "start", SmallVector<int64_t>(rank, 0)),
              dimsAttr(nc, "limit", limit)},
             RankedTensorType::get(limit, data.getElementType()), "data");
    if (failed(cut))
      return failure();
    x = *cut;
  }
  // data's dim `axis` becomes the last one, broadcast along indices' dim
  // `axis`.
  if (*axis != rank - 1) {
    SmallVector<int64_t> perm, shape;
    auto xType = cast<RankedTensorType>(x.getType());
    for (int64_t d = 0; d < rank; ++d)
      if (d != *axis)
        perm.push_back(d);
    perm.push_back(*axis);
    for (int64_t d : perm)
      shape.push_back(xType.getDimSize(d));
    FailureOr<Value> t =
        make(nc, "shardc.transpose", {x}, {dimsAttr(nc, "permutation", perm)},
             RankedTensorType::get(shape, data.getElementType()), "data.moved");
    if (failed(t))
      return failure();
    x = *t;
  }
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d <= rank; ++d)
    if (d != *axis)
      dims.push_back(d);
  FailureOr<Value> dataB =
      make(nc, "shardc.broadcast_in_dim", {x}, {dimsAttr(nc, "dims", dims)},
           RankedTensorType::get(wide, data.getElementType()), "data.b");
  FailureOr<Value> ids =
      make(nc, "shardc.broadcast_in_dim", {nc.value(1)},
           {dimsAttr(nc, "dims", llvm::to_vector(llvm::seq<int64_t>(0, rank)))},
           RankedTensorType::get(wide, idx.getElementType()), "indices.b");
  FailureOr<Value> pos =
      iotaOf(nc, wide, rank, idx.getElementType(), "positions");
  FailureOr<Value> zero =
      nc.constantAs(scalarOf(0, data.getElementType()), wide, ".zero");
  if (failed(dataB) || failed(ids) || failed(pos) || failed(zero))
    return failure();
  FailureOr<Value> hit = compareOf(nc, *ids, *pos, "EQ", "hit");
  if (failed(hit))
    return failure();
  FailureOr<Value> picked =
      make(nc, "shardc.select", {*hit, *dataB, *zero}, {}, {}, "picked");
  if (failed(picked))
    return failure();
  return done(nc, make(nc, "shardc.reduce_sum", {*picked},
                       {dimsAttr(nc, "dims", {rank})}));
}

/// ScatterElements: data with data[p with axis = indices[p]] set to (or,
/// `reduction="add"`, added) updates[p]. The updates land by the same
/// one-hot sum as GatherElements, transposed into data's layout and padded
/// to its shape; where none lands, data is kept.
static LogicalResult scatterElements(NodeContext &nc) {
  if (failed(nc.checkArity(3, 3)) ||
      failed(nc.checkAttrs({"axis", "reduction"})))
    return failure();
  RankedTensorType data = nc.inputType(0), idx = nc.inputType(1),
                   upd = nc.inputType(2);
  FailureOr<int64_t> axisAttr = intAttrOr(nc, "axis", 0);
  FailureOr<std::optional<std::string>> reduction = nc.stringAttr("reduction");
  if (failed(axisAttr) || failed(reduction))
    return failure();
  std::string mode = reduction->value_or("none");
  if (mode != "none" && mode != "add")
    return nc.error() << "has reduction \"" << mode
                      << "\"; shardc reads \"none\" and \"add\"";
  int64_t rank = data.getRank();
  FailureOr<int64_t> axis = nc.normalizeAxis(*axisAttr, rank, "axis");
  if (failed(axis))
    return failure();
  Type f32 = data.getElementType();
  if (!f32.isF32() || upd.getElementType() != f32)
    return nc.error() << "scatters into a tensor of " << f32
                      << "; shardc scatters FLOAT elements";
  if (idx.getRank() != rank || upd.getShape() != idx.getShape() ||
      !isa<IntegerType>(idx.getElementType()) ||
      idx.getElementType().isInteger(1))
    return nc.error() << "its indices must be integers of the data's rank, "
                         "of the updates' shape";
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && idx.getDimSize(d) > data.getDimSize(d))
      return nc.error() << "indices " << shapeText(idx.getShape())
                        << " are larger than the data "
                        << shapeText(data.getShape()) << " in dim " << d;
  int64_t n = data.getDimSize(*axis);
  SmallVector<int64_t> wide(idx.getShape());
  wide.push_back(n);
  if (llvm::Expected<SmallVector<int64_t>> ok = checkedShape(wide); !ok)
    return nc.error() << "its one-hot " << shapeText(wide) << " "
                      << llvm::toString(ok.takeError());
  SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  FailureOr<Value> ids = make(
      nc, "shardc.broadcast_in_dim", {nc.value(1)}, {dimsAttr(nc, "dims", all)},
      RankedTensorType::get(wide, idx.getElementType()), "indices.b");
  FailureOr<Value> upds = make(nc, "shardc.broadcast_in_dim", {nc.value(2)},
                               {dimsAttr(nc, "dims", all)},
                               RankedTensorType::get(wide, f32), "updates.b");
  FailureOr<Value> pos =
      iotaOf(nc, wide, rank, idx.getElementType(), "positions");
  FailureOr<Value> zero = nc.constantAs(scalarOf(0, f32), wide, ".zero");
  FailureOr<Value> one = nc.constantAs(scalarOf(1, f32), wide, ".one");
  if (failed(ids) || failed(upds) || failed(pos) || failed(zero) || failed(one))
    return failure();
  FailureOr<Value> hit = compareOf(nc, *ids, *pos, "EQ", "hit");
  if (failed(hit))
    return failure();
  // Summed over the indices' dim `axis`, the new last dim moved there and
  // the other dims padded to data's: data's layout.
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank - 1; ++d) {
    if (d == *axis)
      perm.push_back(rank - 1);
    perm.push_back(d);
  }
  if (*axis == rank - 1)
    perm.push_back(rank - 1);
  SmallVector<int64_t> high;
  for (int64_t d = 0; d < rank; ++d)
    high.push_back(d == *axis ? 0 : data.getDimSize(d) - idx.getDimSize(d));
  FailureOr<Value> padZero = nc.constantAs(scalarOf(0, f32), {}, ".pad");
  if (failed(padZero))
    return failure();
  auto land = [&](Value wideValue, StringRef tag) -> FailureOr<Value> {
    FailureOr<Value> picked =
        make(nc, "shardc.select", {*hit, wideValue, *zero}, {}, {},
             (tag + ".picked").str());
    if (failed(picked))
      return failure();
    FailureOr<Value> summed =
        make(nc, "shardc.reduce_sum", {*picked},
             {dimsAttr(nc, "dims", {*axis})}, {}, (tag + ".summed").str());
    if (failed(summed))
      return failure();
    Value v = *summed;
    if (!llvm::equal(perm, llvm::seq<int64_t>(0, rank))) {
      FailureOr<Value> t =
          make(nc, "shardc.transpose", {v}, {dimsAttr(nc, "permutation", perm)},
               {}, (tag + ".moved").str());
      if (failed(t))
        return failure();
      v = *t;
    }
    if (llvm::any_of(high, [](int64_t h) { return h != 0; })) {
      FailureOr<Value> p = make(
          nc, "shardc.pad", {v, *padZero},
          {dimsAttr(nc, "low", SmallVector<int64_t>(rank, 0)),
           dimsAttr(nc, "high", high)},
          RankedTensorType::get(data.getShape(), f32), (tag + ".padded").str());
      if (failed(p))
        return failure();
      v = *p;
    }
    return v;
  };
  FailureOr<Value> scattered = land(*upds, "updates");
  if (failed(scattered))
    return failure();
  if (mode == "add")
    return done(nc, make(nc, "shardc.add", {nc.value(0), *scattered}));
  FailureOr<Value> count = land(*one, "count");
  FailureOr<Value> none =
      nc.constantAs(scalarOf(0, f32), data.getShape(), ".none");
  if (failed(count) || failed(none))
    return failure();
  FailureOr<Value> landed = compareOf(nc, *count, *none, "GT", "landed");
  if (failed(landed))
    return failure();
  return done(nc,
              make(nc, "shardc.select", {*landed, *scattered, nc.value(0)}));
}

//===----------------------------------------------------------------------===//
// Conv
//===----------------------------------------------------------------------===//

/// Conv as im2col and a GEMM, out of slice, reshape, transpose and
/// dot_general. x [B, C, S...] (zero-padded by `pads` first) gives, for
/// each kernel position k, the strided slice of the windows' k-th
/// elements [B, C, O...]; stacked as [B, C, K..., O...] they contract
/// with the weight [M, C/G, K...] over (C, K...), groups as a batch dim.
/// Where the windows tile the input (stride = kernel, no dilation: a
/// ViT's patch embedding) the columns are x itself, reshaped
/// [B, C, O1, K1, ...] and transposed: no slices, and a spatial dim split
/// over devices stays split without halos.
/// More slices than this is no kernel of a model (7x7 is 49).
static constexpr int64_t kMaxConvPositions = 1024;

static LogicalResult conv(NodeContext &nc) {
  if (failed(nc.checkArity(2, 3)) ||
      failed(nc.checkAttrs({"auto_pad", "dilations", "group", "kernel_shape",
                            "pads", "strides"})))
    return failure();
  RankedTensorType xType = nc.inputType(0), wType = nc.inputType(1);
  int64_t rank = xType.getRank(), n = rank - 2;
  if (rank < 3 || wType.getRank() != rank || !xType.getElementType().isF32() ||
      !wType.getElementType().isF32())
    return nc.error() << "takes FLOAT x [B, C, spatial...] and a weight of "
                         "its rank, got "
                      << shapeText(xType.getShape()) << " and "
                      << shapeText(wType.getShape());
  FailureOr<std::optional<std::string>> autoPad = nc.stringAttr("auto_pad");
  FailureOr<int64_t> groupAttr = intAttrOr(nc, "group", 1);
  FailureOr<std::optional<SmallVector<int64_t>>> stridesAttr =
      nc.intsAttr("strides");
  FailureOr<std::optional<SmallVector<int64_t>>> dilationsAttr =
      nc.intsAttr("dilations");
  FailureOr<std::optional<SmallVector<int64_t>>> padsAttr = nc.intsAttr("pads");
  FailureOr<std::optional<SmallVector<int64_t>>> kernelAttr =
      nc.intsAttr("kernel_shape");
  if (failed(autoPad) || failed(groupAttr) || failed(stridesAttr) ||
      failed(dilationsAttr) || failed(padsAttr) || failed(kernelAttr))
    return failure();
  if (autoPad->value_or("NOTSET") != "NOTSET")
    return nc.error() << "has auto_pad \"" << **autoPad
                      << "\"; shardc reads explicit pads (torch writes them)";
  ArrayRef<int64_t> xs = xType.getShape(), ws = wType.getShape();
  int64_t batch = xs[0], channels = xs[1], outChannels = ws[0],
          groups = *groupAttr;
  SmallVector<int64_t> kernel(ws.drop_front(2));
  SmallVector<int64_t> strides =
      stridesAttr->value_or(SmallVector<int64_t>(n, 1));
  SmallVector<int64_t> dilations =
      dilationsAttr->value_or(SmallVector<int64_t>(n, 1));
  SmallVector<int64_t> pads =
      padsAttr->value_or(SmallVector<int64_t>(2 * n, 0));
  if (static_cast<int64_t>(strides.size()) != n ||
      static_cast<int64_t>(dilations.size()) != n ||
      static_cast<int64_t>(pads.size()) != 2 * n ||
      (*kernelAttr && ArrayRef<int64_t>(**kernelAttr) != ArrayRef(kernel)))
    return nc.error() << "its strides, dilations, pads or kernel_shape do not "
                         "fit "
                      << n << " spatial dims of kernel " << shapeText(kernel);
  if (groups < 1 || channels % groups || outChannels % groups ||
      ws[1] * groups != channels)
    return nc.error() << "groups " << groups << " do not divide " << channels
                      << " input channels into the weight's " << ws[1]
                      << " per group, or its " << outChannels
                      << " output channels";
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) {
    if (strides[i] < 1 || dilations[i] < 1 || pads[i] < 0 || pads[n + i] < 0)
      return nc.error() << "has a stride or dilation below 1 or a negative pad";
    int64_t span = dilations[i] * (kernel[i] - 1) + 1;
    int64_t padded = xs[2 + i] + pads[i] + pads[n + i];
    if (padded < span)
      return nc.error() << "its kernel spans " << span << " of spatial dim "
                        << i << ", which has " << padded;
    out.push_back((padded - span) / strides[i] + 1);
  }
  Value x = nc.value(0);
  Type f32 = xType.getElementType();
  auto shapeOf = [](Value v) {
    return SmallVector<int64_t>(cast<RankedTensorType>(v.getType()).getShape());
  };
  if (llvm::any_of(pads, [](int64_t p) { return p != 0; })) {
    SmallVector<int64_t> low(2, 0), high(2, 0), shape(xs.take_front(2));
    for (int64_t i = 0; i < n; ++i) {
      low.push_back(pads[i]);
      high.push_back(pads[n + i]);
      shape.push_back(xs[2 + i] + pads[i] + pads[n + i]);
    }
    FailureOr<Value> zero = nc.constantAs(scalarOf(0, f32), {}, ".pad_value");
    if (failed(zero))
      return failure();
    FailureOr<Value> padded =
        make(nc, "shardc.pad", {x, *zero},
             {dimsAttr(nc, "low", low), dimsAttr(nc, "high", high)},
             RankedTensorType::get(shape, f32), "padded");
    if (failed(padded))
      return failure();
    x = *padded;
  }
  // The columns [B, C, K..., O...].
  SmallVector<int64_t> columnShape{batch, channels};
  llvm::append_range(columnShape, kernel);
  llvm::append_range(columnShape, out);
  if (llvm::Expected<SmallVector<int64_t>> ok = checkedShape(columnShape); !ok)
    return nc.error() << "its columns " << shapeText(columnShape) << " "
                      << llvm::toString(ok.takeError());
  Value columns;
  bool tiles = true;
  for (int64_t i = 0; i < n; ++i)
    tiles &= strides[i] == kernel[i] && dilations[i] == 1;
  if (tiles) {
    SmallVector<int64_t> used(shapeOf(x));
    for (int64_t i = 0; i < n; ++i)
      used[2 + i] = out[i] * kernel[i];
    if (used != shapeOf(x)) {
      FailureOr<Value> cut =
          make(nc, "shardc.slice", {x},
               {dimsAttr(nc, "start", SmallVector<int64_t>(rank, 0)),
                dimsAttr(nc, "limit", used)},
               RankedTensorType::get(used, f32), "tiled");
      if (failed(cut))
        return failure();
      x = *cut;
    }
    // [B, C, O1, K1, O2, K2, ...] -> [B, C, K1, K2, ..., O1, O2, ...]
    SmallVector<int64_t> split{batch, channels}, perm{0, 1};
    for (int64_t i = 0; i < n; ++i) {
      split.push_back(out[i]);
      split.push_back(kernel[i]);
    }
    for (int64_t i = 0; i < n; ++i)
      perm.push_back(3 + 2 * i);
    for (int64_t i = 0; i < n; ++i)
      perm.push_back(2 + 2 * i);
    FailureOr<Value> patches = nc.reshape(x, split, nc.loc(0, ".patches"));
    if (failed(patches))
      return failure();
    FailureOr<Value> moved =
        make(nc, "shardc.transpose", {*patches},
             {dimsAttr(nc, "permutation", perm)}, {}, "columns");
    if (failed(moved))
      return failure();
    columns = *moved;
  } else {
    int64_t positions = product(kernel);
    if (positions > kMaxConvPositions)
      return nc.error() << "has a kernel of " << positions
                        << " positions; shardc reads Conv as one slice per "
                           "position, at most "
                        << kMaxConvPositions;
    SmallVector<Value> slices;
    SmallVector<int64_t> one{batch, channels, 1};
    llvm::append_range(one, out);
    for (int64_t k = 0; k < positions; ++k) {
      SmallVector<int64_t> start(rank, 0), limit(shapeOf(x)), step(rank, 1);
      for (int64_t i = n - 1, rest = k; i >= 0; --i) {
        int64_t at = rest % kernel[i];
        rest /= kernel[i];
        start[2 + i] = at * dilations[i];
        limit[2 + i] = start[2 + i] + (out[i] - 1) * strides[i] + 1;
        step[2 + i] = strides[i];
      }
      SmallVector<int64_t> shape{batch, channels};
      llvm::append_range(shape, out);
      std::string tag = "position" + std::to_string(k);
      FailureOr<Value> cut =
          make(nc, "shardc.slice", {x},
               {dimsAttr(nc, "start", start), dimsAttr(nc, "limit", limit),
                dimsAttr(nc, "stride", step)},
               RankedTensorType::get(shape, f32), tag);
      if (failed(cut))
        return failure();
      FailureOr<Value> lifted =
          nc.reshape(*cut, one, nc.loc(0, "." + tag + ".lifted"));
      if (failed(lifted))
        return failure();
      slices.push_back(*lifted);
    }
    Value stacked = slices.front();
    if (slices.size() > 1) {
      FailureOr<Value> joined =
          make(nc, "shardc.concatenate", slices,
               {named(nc, "dimension", nc.builder.getI64IntegerAttr(2))}, {},
               "positions");
      if (failed(joined))
        return failure();
      stacked = *joined;
    }
    SmallVector<int64_t> shape{batch, channels};
    llvm::append_range(shape, kernel);
    llvm::append_range(shape, out);
    FailureOr<Value> cols = nc.reshape(stacked, shape, nc.loc(0, ".columns"));
    if (failed(cols))
      return failure();
    columns = *cols;
  }
  // Groups: [B, G, C/G, K..., O...] x [G, M/G, C/G, K...], batched over G,
  // gives [G, B, O..., M/G].
  int64_t cg = channels / groups, mg = outChannels / groups;
  SmallVector<int64_t> colShape{batch, groups, cg};
  llvm::append_range(colShape, kernel);
  llvm::append_range(colShape, out);
  SmallVector<int64_t> wShape{groups, mg, cg};
  llvm::append_range(wShape, kernel);
  FailureOr<Value> cols = nc.reshape(columns, colShape, nc.loc(0, ".grouped"));
  FailureOr<Value> w = nc.reshape(nc.value(1), wShape, nc.loc(0, ".weight"));
  if (failed(cols) || failed(w))
    return failure();
  SmallVector<int64_t> lc{2}, rc{2};
  for (int64_t i = 0; i < n; ++i) {
    lc.push_back(3 + i);
    rc.push_back(3 + i);
  }
  FailureOr<Value> gemm = make(nc, "shardc.dot_general", {*cols, *w},
                               {dimsAttr(nc, "lhs_batch_dims", {1}),
                                dimsAttr(nc, "rhs_batch_dims", {0}),
                                dimsAttr(nc, "lhs_contracting_dims", lc),
                                dimsAttr(nc, "rhs_contracting_dims", rc)},
                               {}, "product");
  if (failed(gemm))
    return failure();
  // [G, B, O..., M/G] -> [B, G, M/G, O...] -> [B, M, O...]
  SmallVector<int64_t> perm{1, 0, n + 2};
  for (int64_t i = 0; i < n; ++i)
    perm.push_back(2 + i);
  SmallVector<int64_t> shape{batch, outChannels};
  llvm::append_range(shape, out);
  FailureOr<Value> moved =
      make(nc, "shardc.transpose", {*gemm}, {dimsAttr(nc, "permutation", perm)},
           {}, "moved");
  if (failed(moved))
    return failure();
  bool bias = nc.hasInput(2);
  FailureOr<Value> y =
      nc.reshape(*moved, shape, bias ? nc.loc(0, ".unbiased") : nc.loc());
  if (failed(y) || !bias)
    return done(nc, y);
  if (nc.inputType(2).getShape() != ArrayRef<int64_t>{outChannels})
    return nc.error() << "its bias has shape "
                      << shapeText(nc.inputType(2).getShape()) << ", not ["
                      << outChannels << "]";
  FailureOr<Value> b = make(nc, "shardc.broadcast_in_dim", {nc.value(2)},
                            {dimsAttr(nc, "dims", {1})},
                            RankedTensorType::get(shape, f32), "bias");
  if (failed(b))
    return failure();
  return done(nc, make(nc, "shardc.add", {*y, *b}));
}

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//

namespace {
/// An operand of an einsum as it is lowered: its value and one label per
/// dim.
struct Labeled {
  Value value;
  std::string labels;
};
} // namespace

/// Sums `x` over its labels not in `keep`.
static FailureOr<Labeled> sumOut(NodeContext &nc, Labeled x, StringRef keep,
                                 const std::string &tag) {
  SmallVector<int64_t> dims;
  std::string left;
  for (auto [d, c] : llvm::enumerate(x.labels)) {
    if (keep.contains(c))
      left.push_back(c);
    else
      dims.push_back(d);
  }
  if (dims.empty())
    return x;
  FailureOr<Value> r = make(nc, "shardc.reduce_sum", {x.value},
                            {dimsAttr(nc, "dims", dims)}, {}, tag + "summed");
  if (failed(r))
    return failure();
  return Labeled{*r, left};
}

/// `a` times `b`, keeping the labels in `keep`: shared ones kept are batch
/// dims, shared ones not kept are contracted.
static FailureOr<Labeled> contract(NodeContext &nc, Labeled a, Labeled b,
                                   StringRef keep, const std::string &tag) {
  // A label of one operand only that is not kept is summed out first.
  std::string keepA = keep.str() + b.labels, keepB = keep.str() + a.labels;
  FailureOr<Labeled> sa = sumOut(nc, a, keepA, tag + "lhs.");
  FailureOr<Labeled> sb = sumOut(nc, b, keepB, tag + "rhs.");
  if (failed(sa) || failed(sb))
    return failure();
  a = *sa;
  b = *sb;
  SmallVector<int64_t> lb, rb, lc, rc;
  std::string labels;
  for (auto [d, c] : llvm::enumerate(a.labels)) {
    size_t e = b.labels.find(c);
    if (e == std::string::npos)
      continue;
    if (keep.contains(c)) {
      lb.push_back(d);
      rb.push_back(e);
      labels.push_back(c);
    } else {
      lc.push_back(d);
      rc.push_back(e);
    }
  }
  for (char c : a.labels)
    if (b.labels.find(c) == std::string::npos)
      labels.push_back(c);
  for (char c : b.labels)
    if (a.labels.find(c) == std::string::npos)
      labels.push_back(c);
  FailureOr<Value> r = make(nc, "shardc.dot_general", {a.value, b.value},
                            {dimsAttr(nc, "lhs_batch_dims", lb),
                             dimsAttr(nc, "rhs_batch_dims", rb),
                             dimsAttr(nc, "lhs_contracting_dims", lc),
                             dimsAttr(nc, "rhs_contracting_dims", rc)},
                            {}, tag + "product");
  if (failed(r))
    return failure();
  return Labeled{*r, labels};
}

static LogicalResult einsum(NodeContext &nc) {
  if (failed(nc.checkArity(1, 8)) || failed(nc.checkAttrs({"equation"})))
    return failure();
  FailureOr<std::optional<std::string>> eq = nc.stringAttr("equation");
  if (failed(eq))
    return failure();
  if (!*eq)
    return nc.error() << "has no attribute \"equation\"";
  std::string text;
  for (char c : **eq)
    if (c != ' ')
      text.push_back(c);
  StringRef lhs = text, out;
  bool explicitOut = StringRef(text).contains("->");
  if (explicitOut)
    std::tie(lhs, out) = StringRef(text).split("->");
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  size_t n = nc.node.input_size();
  if (terms.size() != n)
    return nc.error() << "its equation \"" << **eq << "\" has " << terms.size()
                      << " operands, the node " << n;
  if (text.find("...") != std::string::npos)
    return nc.error() << "its equation \"" << **eq
                      << "\" has an ellipsis; shardc reads einsums whose every "
                         "dim has a letter";
  // Each label's size, checked across operands.
  llvm::DenseMap<char, int64_t> sizes;
  llvm::DenseMap<char, int> count;
  SmallVector<Labeled> operands;
  for (auto [i, term] : llvm::enumerate(terms)) {
    RankedTensorType type = nc.inputType(i);
    if (!type.getElementType().isF32())
      return nc.error() << "operand " << i << " must be FLOAT";
    if (static_cast<int64_t>(term.size()) != type.getRank())
      return nc.error() << "operand " << i << " has rank " << type.getRank()
                        << " but \"" << term << "\" names " << term.size()
                        << " dims";
    for (auto [d, c] : llvm::enumerate(term)) {
      if (!llvm::isAlpha(c))
        return nc.error() << "its equation \"" << **eq << "\" has '" << c
                          << "', not a letter";
      if (term.take_front(d).contains(c))
        return nc.error() << "operand " << i << " repeats label '" << c
                          << "' (a diagonal), which shardc does not read";
      auto [it, fresh] = sizes.try_emplace(c, type.getDimSize(d));
      if (!fresh && it->second != type.getDimSize(d))
        return nc.error() << "label '" << c << "' has sizes " << it->second
                          << " and " << type.getDimSize(d);
      ++count[c];
    }
    operands.push_back({nc.value(i), term.str()});
  }
  std::string result;
  if (explicitOut) {
    result = out.str();
    for (auto [d, c] : llvm::enumerate(result))
      if (!sizes.count(c) || StringRef(result).take_front(d).contains(c))
        return nc.error() << "its output \"" << out << "\" has label '" << c
                          << "', which no operand has or which it repeats";
  } else {
    // Implicit: the labels used once, in alphabetical order.
    for (auto &entry : count)
      if (entry.second == 1)
        result.push_back(entry.first);
    llvm::sort(result);
  }
  // Left to right, each step keeping the labels the result or a later
  // operand still needs.
  Labeled acc = operands.front();
  for (size_t i = 1; i < operands.size(); ++i) {
    std::string keep = result;
    for (size_t j = i + 1; j < operands.size(); ++j)
      keep += operands[j].labels;
    FailureOr<Labeled> next =
        contract(nc, acc, operands[i], keep, "step" + std::to_string(i) + ".");
    if (failed(next))
      return failure();
    acc = *next;
  }
  FailureOr<Labeled> summed = sumOut(nc, acc, result, "");
  if (failed(summed))
    return failure();
  acc = *summed;
  if (acc.labels == result) {
    nc.setOutput(0, acc.value);
    return success();
  }
  SmallVector<int64_t> perm;
  for (char c : result)
    perm.push_back(acc.labels.find(c));
  return done(nc, make(nc, "shardc.transpose", {acc.value},
                       {dimsAttr(nc, "permutation", perm)}));
}

void shardc::onnximport::addComposedConverters(
    llvm::StringMap<Converter> &table) {
  table.insert({"ArgMax", argMax});
  table.insert({"Clip", clip});
  table.insert({"Conv", conv});
  table.insert({"CumSum", cumSum});
  table.insert({"Einsum", einsum});
  table.insert({"GatherElements", gatherElements});
  table.insert({"OneHot", oneHot});
  table.insert({"Reciprocal", reciprocal});
  table.insert({"ScatterElements", scatterElements});
  table.insert({"Softplus", softplus});
  table.insert({"TopK", topK});
  table.insert({"Trilu", trilu});
}

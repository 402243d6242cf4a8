//===- OnnxSelectionOps.cpp - ONNX OneHot, ArgMax, TopK -------------------===//
//
// ONNX's selection ops rewritten at import into shardc ops:
//
//   OneHot         select(indices == iota, on, off);
//   ArgMax         the first position holding reduce_max (compare, iota,
//                  select, a min as -max(-.)), converted to INT64;
//   TopK           K rounds of ArgMax, each masking its pick with -inf; a
//                  value is the sum of x where its pick is, so the gradient
//                  reaches x through the values (indices have none).
//
//===----------------------------------------------------------------------===//

#include "OnnxComposedHelpers.h"

#include <limits>

using namespace mlir;
using namespace shardc::onnximport;
using namespace shardc::onnximport::composed;
using llvm::SmallVector;
using llvm::StringRef;

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

void shardc::onnximport::composed::addSelectionConverters(
    llvm::StringMap<Converter> &table) {
  table.insert({"ArgMax", argMax});
  table.insert({"OneHot", oneHot});
  table.insert({"TopK", topK});
}

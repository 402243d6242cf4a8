//===- SliceOps.cpp - slice, concatenate and pad --------------------------===//
//
// Verifiers (by type inference), sharding rules, gradient rules and cost of
// the ops that cut tensors apart and join them: each is the other's
// gradient (a slice's cotangent is its window padded with zeros, a pad's is
// the window sliced back out, a concatenation's is one slice per operand).
//
//===----------------------------------------------------------------------===//

#include "TensorOpHelpers.h"

#include "shardc/Dialect/GradientBuilder.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/TensorOpBuilders.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;

/// `given`, or `fill` repeated `rank` times when `given` is empty (the ODS
/// default of `stride` and `interior`).
static SmallVector<int64_t> orFill(ArrayRef<int64_t> given, int64_t rank,
                                   int64_t fill) {
  if (given.empty())
    return SmallVector<int64_t>(rank, fill);
  return SmallVector<int64_t>(given);
}

SmallVector<int64_t> SliceOp::getStrides() {
  return orFill(getStride(), rankOf(getInput()), 1);
}

SmallVector<int64_t> PadOp::getInteriors() {
  return orFill(getInterior(), rankOf(getInput()), 0);
}

void SliceOp::localizeAttributes() {
  // Only a whole dim (start 0, stride 1, as long as the operand) can be
  // sharded: its limit becomes the local size. Any other dim needs
  // replication, so its sizes are the global ones.
  ArrayRef<int64_t> in = shapeOf(getInput()), res = shapeOf(getResult());
  SmallVector<int64_t> limit(getLimit()), stride = getStrides();
  ArrayRef<int64_t> start = getStart();
  if (limit.size() != in.size() || start.size() != in.size() ||
      res.size() != in.size())
    return;
  for (size_t d = 0; d < in.size(); ++d)
    if (start[d] == 0 && stride[d] == 1 && res[d] == in[d])
      limit[d] = in[d];
  setLimit(limit);
}

//===----------------------------------------------------------------------===//
// Type inference (which is the verifier: the result type must be the
// inferred one)
//===----------------------------------------------------------------------===//

/// Checks that `list` has one entry per dim (or none, when `optional`).
static LogicalResult checkPerDim(std::optional<Location> loc, StringRef op,
                                 StringRef name, ArrayRef<int64_t> list,
                                 int64_t rank, bool optional) {
  if (static_cast<int64_t>(list.size()) == rank || (optional && list.empty()))
    return success();
  return failInference(loc, op + " " + name + " has " + Twine(list.size()) +
                                " entries but the operand has rank " +
                                Twine(rank));
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  auto input = asTensor(adaptor.getInput());
  if (!input)
    return failInference(loc, "slice operand must be a ranked tensor");
  int64_t rank = input.getRank();
  ArrayRef<int64_t> start = adaptor.getStart(), limit = adaptor.getLimit();
  if (failed(checkPerDim(loc, "slice", "start", start, rank, false)) ||
      failed(checkPerDim(loc, "slice", "limit", limit, rank, false)) ||
      failed(checkPerDim(loc, "slice", "stride", adaptor.getStride(), rank,
                         true)))
    return failure();
  SmallVector<int64_t> stride = orFill(adaptor.getStride(), rank, 1);
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = input.getDimSize(d);
    if (start[d] < 0 || start[d] > limit[d] || limit[d] > size)
      return failInference(loc, "slice of dim " + Twine(d) + " (size " +
                                    Twine(size) + ") from " + Twine(start[d]) +
                                    " to " + Twine(limit[d]) +
                                    " is out of range (0 <= start <= limit "
                                    "<= size)");
    if (stride[d] < 1)
      return failInference(loc, "slice stride of dim " + Twine(d) + " is " +
                                    Twine(stride[d]) + "; it must be >= 1");
    // limit - start <= size, so this cannot overflow.
    shape.push_back((limit[d] - start[d] + stride[d] - 1) / stride[d]);
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult ConcatenateOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return failInference(loc, "concatenate needs at least one operand");
  auto first = asTensor(inputs.front());
  if (!first)
    return failInference(loc, "concatenate operands must be ranked tensors");
  int64_t rank = first.getRank(), dim = adaptor.getDimension();
  if (dim < 0 || dim >= rank)
    return failInference(loc, "concatenate dimension " + Twine(dim) +
                                  " is out of range for rank " + Twine(rank));
  SmallVector<int64_t> shape(first.getShape());
  shape[dim] = 0;
  for (auto [i, v] : llvm::enumerate(inputs)) {
    auto t = asTensor(v);
    if (!t || t.getRank() != rank ||
        t.getElementType() != first.getElementType())
      return failInference(loc, "concatenate operand #" + Twine(i) +
                                    " is not a tensor of rank " + Twine(rank) +
                                    " and element type of operand #0");
    for (int64_t d = 0; d < rank; ++d)
      if (d != dim && t.getDimSize(d) != first.getDimSize(d))
        return failInference(
            loc, "concatenate operand #" + Twine(i) + " has size " +
                     Twine(t.getDimSize(d)) + " in dim " + Twine(d) +
                     " but operand #0 has " + Twine(first.getDimSize(d)) +
                     " (only dim " + Twine(dim) + " may differ)");
    if (__builtin_add_overflow(shape[dim], t.getDimSize(dim), &shape[dim]))
      return failInference(loc, "concatenate result size overflows");
  }
  types.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  auto input = asTensor(adaptor.getInput());
  auto value = asTensor(adaptor.getPaddingValue());
  if (!input || !value)
    return failInference(loc, "pad operands must be ranked tensors");
  if (value.getRank() != 0 ||
      value.getElementType() != input.getElementType())
    return failInference(loc, "pad padding_value must be a 0-d tensor of "
                              "the operand's element type");
  int64_t rank = input.getRank();
  ArrayRef<int64_t> low = adaptor.getLow(), high = adaptor.getHigh();
  if (failed(checkPerDim(loc, "pad", "low", low, rank, false)) ||
      failed(checkPerDim(loc, "pad", "high", high, rank, false)) ||
      failed(checkPerDim(loc, "pad", "interior", adaptor.getInterior(), rank,
                         true)))
    return failure();
  SmallVector<int64_t> interior = orFill(adaptor.getInterior(), rank, 0);
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (low[d] < 0 || high[d] < 0 || interior[d] < 0)
      return failInference(loc, "pad amounts of dim " + Twine(d) +
                                    " must be >= 0 (low " + Twine(low[d]) +
                                    ", high " + Twine(high[d]) + ", interior " +
                                    Twine(interior[d]) + ")");
    int64_t size = input.getDimSize(d), gaps = size > 0 ? size - 1 : 0, out;
    if (__builtin_mul_overflow(gaps, interior[d], &out) ||
        __builtin_add_overflow(out, size, &out) ||
        __builtin_add_overflow(out, low[d], &out) ||
        __builtin_add_overflow(out, high[d], &out))
      return failInference(loc, "pad result size of dim " + Twine(d) +
                                    " overflows");
    shape.push_back(out);
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Sharding rules
//===----------------------------------------------------------------------===//

namespace {
/// Builds the rule of an op with one main operand and one result of equal
/// rank, where some dims are `changed` (sliced, padded): those get a
/// need_replication factor in each tensor; the others share a parallel one.
/// `extraOperands` rank-0 operands (pad's value) follow the main one.
ShardingRule windowRule(ArrayRef<int64_t> in, ArrayRef<int64_t> out,
                        llvm::function_ref<bool(int64_t)> changed,
                        unsigned extraOperands = 0) {
  ShardingRule rule;
  TensorFactors inF, outF;
  for (size_t d = 0; d < in.size() && d < out.size(); ++d) {
    if (changed(d)) {
      inF.push_back({rule.addFactor(in[d], FactorKind::NeedReplication)});
      outF.push_back({rule.addFactor(out[d], FactorKind::NeedReplication)});
    } else {
      int64_t f = rule.addFactor(in[d], FactorKind::Parallel);
      inF.push_back({f});
      outF.push_back({f});
    }
  }
  rule.addOperand(std::move(inF));
  for (unsigned i = 0; i < extraOperands; ++i)
    rule.addOperand({});
  rule.addResult(std::move(outF));
  return rule;
}
} // namespace

ShardingRule SliceOp::getShardingRule() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  ArrayRef<int64_t> start = getStart(), limit = getLimit();
  SmallVector<int64_t> stride = getStrides();
  return windowRule(in, shapeOf(getResult()), [&](int64_t d) {
    return !(static_cast<size_t>(d) < start.size() && start[d] == 0 &&
             static_cast<size_t>(d) < limit.size() && limit[d] == in[d] &&
             stride[d] == 1);
  });
}

ShardingRule PadOp::getShardingRule() {
  ArrayRef<int64_t> low = getLow(), high = getHigh();
  SmallVector<int64_t> interior = getInteriors();
  return windowRule(
      shapeOf(getInput()), shapeOf(getResult()),
      [&](int64_t d) {
        return !(static_cast<size_t>(d) < low.size() && low[d] == 0 &&
                 static_cast<size_t>(d) < high.size() && high[d] == 0 &&
                 interior[d] == 0);
      },
      /*extraOperands=*/1);
}

ShardingRule ConcatenateOp::getShardingRule() {
  ShardingRule rule;
  ArrayRef<int64_t> out = shapeOf(getResult());
  int64_t dim = getDimension();
  // The shared dims first, so that their factor numbers do not depend on
  // the operand count.
  SmallVector<int64_t> shared(out.size(), -1);
  for (int64_t d = 0; d < static_cast<int64_t>(out.size()); ++d)
    if (d != dim)
      shared[d] = rule.addFactor(out[d], FactorKind::Parallel);
  auto factorsOf = [&](ArrayRef<int64_t> shape) {
    TensorFactors t;
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
      t.push_back(
          {d == dim ? rule.addFactor(shape[d], FactorKind::NeedReplication)
                    : shared[d]});
    return t;
  };
  for (Value v : getInputs())
    rule.addOperand(factorsOf(shapeOf(v)));
  rule.addResult(factorsOf(out));
  return rule;
}

//===----------------------------------------------------------------------===//
// Gradient rules
//===----------------------------------------------------------------------===//

/// `list`, or empty (the ODS default) when every entry is `fill`.
static ArrayRef<int64_t> defaultIfAll(ArrayRef<int64_t> list, int64_t fill) {
  return llvm::all_of(list, [&](int64_t v) { return v == fill; })
             ? ArrayRef<int64_t>()
             : list;
}

LogicalResult SliceOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                              Value g, ArrayRef<bool> wanted,
                                              SmallVectorImpl<Value> &out) {
  // g lands back on the elements the slice read, every `stride`, with
  // zeros around and between them: a pad.
  clearCotangents(*this, out);
  if (!want(wanted, 0))
    return success();
  auto inType = getInput().getType();
  ArrayRef<int64_t> in = inType.getShape(), res = getType().getShape();
  SmallVector<int64_t> stride = getStrides(), low, high, interior;
  for (size_t d = 0; d < in.size(); ++d) {
    // The window read is [start, end): n elements, `stride` apart.
    int64_t start = getStart()[d];
    int64_t end = res[d] > 0 ? start + (res[d] - 1) * stride[d] + 1 : start;
    low.push_back(start);
    high.push_back(in[d] - end);
    interior.push_back(stride[d] - 1);
  }
  Value zero = buildSplatConstant(
      b, loc, RankedTensorType::get({}, inType.getElementType()), 0.0);
  out[0] = PadOp::create(b, loc, g, zero, low, high, defaultIfAll(interior, 0));
  return success();
}

LogicalResult PadOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                            Value g, ArrayRef<bool> wanted,
                                            SmallVectorImpl<Value> &out) {
  // The operand's elements are a strided window of the result; every other
  // element of the result is a copy of the padding value.
  clearCotangents(*this, out);
  if (!want(wanted, 0) && !want(wanted, 1))
    return success();
  ArrayRef<int64_t> in = getInput().getType().getShape();
  SmallVector<int64_t> interior = getInteriors(), start, limit, stride;
  for (size_t d = 0; d < in.size(); ++d) {
    int64_t low = getLow()[d];
    start.push_back(low);
    limit.push_back(in[d] > 0 ? low + (in[d] - 1) * (interior[d] + 1) + 1
                              : low);
    stride.push_back(interior[d] + 1);
  }
  Value window =
      SliceOp::create(b, loc, g, start, limit, defaultIfAll(stride, 1));
  if (want(wanted, 0))
    out[0] = window;
  if (want(wanted, 1) && !in.empty()) {
    // Rank 0: the result is the operand and the value is never used.
    GradientBuilder gb(b, loc);
    SmallVector<int64_t> all = iota(0, in.size());
    out[1] = gb.sub(gb.reduceSum(g, all), gb.reduceSum(window, all));
  }
  return success();
}

LogicalResult ConcatenateOp::buildOperandCotangents(
    OpBuilder &b, Location loc, Value g, ArrayRef<bool> wanted,
    SmallVectorImpl<Value> &out) {
  // Each operand's cotangent is its stretch of g along `dimension`.
  clearCotangents(*this, out);
  ArrayRef<int64_t> res = getType().getShape();
  int64_t dim = getDimension(), offset = 0;
  for (auto [i, v] : llvm::enumerate(getInputs())) {
    int64_t size = shapeOf(v)[dim];
    if (want(wanted, i)) {
      SmallVector<int64_t> start(res.size(), 0), limit(res);
      start[dim] = offset;
      limit[dim] = offset + size;
      out[i] = SliceOp::create(b, loc, g, start, limit, ArrayRef<int64_t>());
    }
    offset += size;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Cost: no arithmetic (data movement, like the layout ops)
//===----------------------------------------------------------------------===//

double SliceOp::getFlops(ArrayRef<double>) { return 0; }
double ConcatenateOp::getFlops(ArrayRef<double>) { return 0; }
double PadOp::getFlops(ArrayRef<double>) { return 0; }

Value shardc::buildSlice(OpBuilder &b, Location loc, Value input,
                         ArrayRef<int64_t> start, ArrayRef<int64_t> limit) {
  // No strides: every one is 1 (and the op prints none).
  return SliceOp::create(b, loc, input, start, limit, ArrayRef<int64_t>{});
}

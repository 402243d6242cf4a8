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
//   CumSum         a product with a triangular constant of 0 and 1.
//
// The other families live in files of their own: OneHot, ArgMax and TopK
// in OnnxSelectionOps.cpp, GatherElements and ScatterElements in
// OnnxScatterGatherOps.cpp, Conv in OnnxConvOps.cpp, Einsum in
// OnnxEinsum.cpp; all are registered here.
//
// Each is exact: the values it selects or sums with zeros are x's own.
//
//===----------------------------------------------------------------------===//

#include "OnnxComposedHelpers.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace shardc::onnximport;
using namespace shardc::onnximport::composed;
using llvm::SmallVector;
using llvm::StringRef;

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
// CumSum
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

void shardc::onnximport::addComposedConverters(
    llvm::StringMap<Converter> &table) {
  table.insert({"Clip", clip});
  table.insert({"CumSum", cumSum});
  table.insert({"Reciprocal", reciprocal});
  table.insert({"Softplus", softplus});
  table.insert({"Trilu", trilu});
  addSelectionConverters(table);
  addScatterGatherConverters(table);
  addConvConverters(table);
  addEinsumConverters(table);
}

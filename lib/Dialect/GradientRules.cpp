//===- GradientRules.cpp - the gradient rule of every tensor op -----------===//
//
// The reverse-mode rules of DifferentiableOpInterface: from the cotangent
// `g` of an op's result, each builds the cotangents of the operands asked
// for, out of ordinary shardc ops. The backward program is thus made of the
// same ops as the forward one, and is sharded by the same propagation and
// partitioner. The formulas are listed in docs/autodiff.md.
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/DifferentiableOpInterface.h"
#include "shardc/Dialect/ShardcDialect.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace shardc;

#include "shardc/Dialect/DifferentiableOpInterface.cpp.inc"

namespace {

/// Builds the ops of one rule, all at one location.
struct GradBuilder {
  OpBuilder &b;
  Location loc;

  /// A constant of `like`'s type with every element `v`.
  Value splat(Value like, double v) {
    auto type = cast<RankedTensorType>(like.getType());
    auto attr =
        DenseElementsAttr::get(type, b.getFloatAttr(type.getElementType(), v));
    return ConstantOp::create(b, loc, cast<ElementsAttr>(attr));
  }
  Value add(Value x, Value y) { return AddOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return SubOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return MulOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return DivOp::create(b, loc, x, y); }
  Value neg(Value x) { return NegOp::create(b, loc, x); }
  Value step(Value x) { return StepOp::create(b, loc, x); }
  Value tanh(Value x) { return TanhOp::create(b, loc, x); }
  /// `x` broadcast to `like`'s shape, its dims landing on `dims`.
  Value broadcast(Value x, Value like, ArrayRef<int64_t> dims) {
    return BroadcastInDimOp::create(b, loc, like.getType(), x,
                                    b.getDenseI64ArrayAttr(dims));
  }
  Value reduceSum(Value x, ArrayRef<int64_t> dims) {
    return ReduceSumOp::create(b, loc, x, b.getDenseI64ArrayAttr(dims));
  }
  /// `x` transposed by `perm`, or `x` when `perm` is the identity.
  Value transpose(Value x, ArrayRef<int64_t> perm) {
    bool identity = llvm::all_of(llvm::enumerate(perm), [](auto it) {
      return static_cast<int64_t>(it.index()) == it.value();
    });
    if (identity)
      return x;
    return TransposeOp::create(b, loc, x, b.getDenseI64ArrayAttr(perm));
  }
  Value dotGeneral(Value lhs, Value rhs, ArrayRef<int64_t> lb,
                   ArrayRef<int64_t> rb, ArrayRef<int64_t> lc,
                   ArrayRef<int64_t> rc) {
    return DotGeneralOp::create(b, loc, lhs, rhs, b.getDenseI64ArrayAttr(lb),
                                b.getDenseI64ArrayAttr(rb),
                                b.getDenseI64ArrayAttr(lc),
                                b.getDenseI64ArrayAttr(rc));
  }
};

int64_t rankOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank();
}

SmallVector<int64_t> iota(int64_t begin, int64_t end) {
  SmallVector<int64_t> out;
  for (int64_t i = begin; i < end; ++i)
    out.push_back(i);
  return out;
}

/// Dims of a rank-`rank` tensor listed in neither `a` nor `b`, ascending.
SmallVector<int64_t> otherDims(int64_t rank, ArrayRef<int64_t> a,
                               ArrayRef<int64_t> b = {}) {
  SmallVector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(a, d) && !llvm::is_contained(b, d))
      out.push_back(d);
  return out;
}

/// Position of `x` in ascending `sorted`.
int64_t rankIn(ArrayRef<int64_t> sorted, int64_t x) {
  return llvm::lower_bound(sorted, x) - sorted.begin();
}

/// Every rule starts with one null cotangent per operand.
void clear(Operation *op, SmallVectorImpl<Value> &out) {
  out.assign(op->getNumOperands(), Value());
}

bool want(ArrayRef<bool> wanted, unsigned i) {
  return i < wanted.size() && wanted[i];
}

/// An elementwise unary op: `g * derivative(x, y)` (y the op's result).
template <typename Fn>
LogicalResult unaryRule(Operation *op, OpBuilder &b, Location loc, Value g,
                        ArrayRef<bool> wanted, SmallVectorImpl<Value> &out,
                        Fn derivative) {
  clear(op, out);
  if (!want(wanted, 0))
    return success();
  GradBuilder gb{b, loc};
  out[0] = gb.mul(g, derivative(gb, op->getOperand(0), op->getResult(0)));
  return success();
}

/// Cotangents of a contraction in dot_general form (matmul is one too).
/// `g`'s dims are batch, then lhs free, then rhs free. Each operand's
/// cotangent is one dot_general of `g` with the other operand, contracting
/// the other operand's free dims, then a transpose into the operand's dim
/// order when that differs.
void contractionRule(GradBuilder &gb, Value lhs, Value rhs, Value g,
                     ArrayRef<int64_t> lb, ArrayRef<int64_t> rb,
                     ArrayRef<int64_t> lc, ArrayRef<int64_t> rc,
                     ArrayRef<bool> wanted, SmallVectorImpl<Value> &out) {
  int64_t nb = lb.size();
  SmallVector<int64_t> lf = otherDims(rankOf(lhs), lb, lc);
  SmallVector<int64_t> rf = otherDims(rankOf(rhs), rb, rc);
  SmallVector<int64_t> gBatch = iota(0, nb);
  SmallVector<int64_t> gLhsFree = iota(nb, nb + lf.size());
  SmallVector<int64_t> gRhsFree =
      iota(nb + lf.size(), nb + lf.size() + rf.size());
  if (want(wanted, 0)) {
    // [batch, lhs free, rhs contracting dims in rhs order]
    Value p = gb.dotGeneral(g, rhs, gBatch, rb, gRhsFree, rf);
    SmallVector<int64_t> sortedRc(rc);
    llvm::sort(sortedRc);
    SmallVector<int64_t> perm(rankOf(lhs));
    for (auto [i, d] : llvm::enumerate(lb))
      perm[d] = i;
    for (auto [j, d] : llvm::enumerate(lf))
      perm[d] = nb + j;
    for (auto [c, d] : llvm::enumerate(lc))
      perm[d] = nb + lf.size() + rankIn(sortedRc, rc[c]);
    out[0] = gb.transpose(p, perm);
  }
  if (want(wanted, 1)) {
    // [batch, lhs contracting dims in lhs order, rhs free]
    Value p = gb.dotGeneral(lhs, g, lb, gBatch, lf, gLhsFree);
    SmallVector<int64_t> sortedLc(lc);
    llvm::sort(sortedLc);
    SmallVector<int64_t> perm(rankOf(rhs));
    for (auto [i, d] : llvm::enumerate(rb))
      perm[d] = i;
    for (auto [c, d] : llvm::enumerate(rc))
      perm[d] = nb + rankIn(sortedLc, lc[c]);
    for (auto [j, d] : llvm::enumerate(rf))
      perm[d] = nb + lc.size() + j;
    out[1] = gb.transpose(p, perm);
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

LogicalResult ReluOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                             Value g, ArrayRef<bool> wanted,
                                             SmallVectorImpl<Value> &out) {
  // relu'(x) = step(x): 0 at the kink, as in JAX and PyTorch.
  return unaryRule(*this, b, loc, g, wanted, out,
                   [](GradBuilder &gb, Value x, Value) { return gb.step(x); });
}

LogicalResult GeluOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                             Value g, ArrayRef<bool> wanted,
                                             SmallVectorImpl<Value> &out) {
  // The derivative of the kernel's tanh approximation
  // 0.5 x (1 + t), t = tanh(c (x + a x^3)):
  // 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2).
  return unaryRule(
      *this, b, loc, g, wanted, out, [](GradBuilder &gb, Value x, Value) {
        constexpr double c = 0.7978845608028654, a = 0.044715;
        Value x2 = gb.mul(x, x);
        Value inner = gb.add(x, gb.mul(gb.splat(x, a), gb.mul(x, x2)));
        Value t = gb.tanh(gb.mul(gb.splat(x, c), inner));
        Value one = gb.splat(x, 1.0), half = gb.splat(x, 0.5);
        Value left = gb.mul(half, gb.add(one, t));
        Value sech2 = gb.sub(one, gb.mul(t, t));
        Value poly = gb.add(gb.splat(x, c), gb.mul(gb.splat(x, 3 * a * c), x2));
        Value right = gb.mul(gb.mul(half, x), gb.mul(sech2, poly));
        return gb.add(left, right);
      });
}

LogicalResult ExpOp::buildOperandCotangents(OpBuilder &b, Location loc, Value g,
                                            ArrayRef<bool> wanted,
                                            SmallVectorImpl<Value> &out) {
  // exp' = exp: the result itself.
  return unaryRule(*this, b, loc, g, wanted, out,
                   [](GradBuilder &, Value, Value y) { return y; });
}

LogicalResult LogOp::buildOperandCotangents(OpBuilder &b, Location loc, Value g,
                                            ArrayRef<bool> wanted,
                                            SmallVectorImpl<Value> &out) {
  clear(*this, out);
  if (want(wanted, 0))
    out[0] = GradBuilder{b, loc}.div(g, getInput()); // g / x
  return success();
}

LogicalResult NegOp::buildOperandCotangents(OpBuilder &b, Location loc, Value g,
                                            ArrayRef<bool> wanted,
                                            SmallVectorImpl<Value> &out) {
  clear(*this, out);
  if (want(wanted, 0))
    out[0] = GradBuilder{b, loc}.neg(g);
  return success();
}

LogicalResult TanhOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                             Value g, ArrayRef<bool> wanted,
                                             SmallVectorImpl<Value> &out) {
  // tanh' = 1 - tanh^2, from the result.
  return unaryRule(*this, b, loc, g, wanted, out,
                   [](GradBuilder &gb, Value x, Value y) {
                     return gb.sub(gb.splat(x, 1.0), gb.mul(y, y));
                   });
}

LogicalResult SqrtOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                             Value g, ArrayRef<bool> wanted,
                                             SmallVectorImpl<Value> &out) {
  // sqrt'(x) = 0.5 / sqrt(x): g * 0.5 / y.
  clear(*this, out);
  if (!want(wanted, 0))
    return success();
  GradBuilder gb{b, loc};
  out[0] = gb.div(gb.mul(g, gb.splat(g, 0.5)), getResult());
  return success();
}

LogicalResult RsqrtOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                              Value g, ArrayRef<bool> wanted,
                                              SmallVectorImpl<Value> &out) {
  // rsqrt'(x) = -0.5 x^(-3/2) = -0.5 y / x.
  return unaryRule(*this, b, loc, g, wanted, out,
                   [](GradBuilder &gb, Value x, Value y) {
                     return gb.div(gb.mul(gb.splat(x, -0.5), y), x);
                   });
}

LogicalResult SigmoidOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                                Value g, ArrayRef<bool> wanted,
                                                SmallVectorImpl<Value> &out) {
  // sigmoid' = y (1 - y).
  return unaryRule(*this, b, loc, g, wanted, out,
                   [](GradBuilder &gb, Value x, Value y) {
                     return gb.mul(y, gb.sub(gb.splat(x, 1.0), y));
                   });
}

LogicalResult StepOp::buildOperandCotangents(OpBuilder &, Location, Value,
                                             ArrayRef<bool>,
                                             SmallVectorImpl<Value> &out) {
  // Zero almost everywhere (and undefined at 0): no cotangent.
  clear(*this, out);
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops (no implicit broadcasting: operands have g's type)
//===----------------------------------------------------------------------===//

LogicalResult AddOp::buildOperandCotangents(OpBuilder &, Location, Value g,
                                            ArrayRef<bool> wanted,
                                            SmallVectorImpl<Value> &out) {
  clear(*this, out);
  for (unsigned i = 0; i < 2; ++i)
    if (want(wanted, i))
      out[i] = g;
  return success();
}

LogicalResult SubOp::buildOperandCotangents(OpBuilder &b, Location loc, Value g,
                                            ArrayRef<bool> wanted,
                                            SmallVectorImpl<Value> &out) {
  clear(*this, out);
  if (want(wanted, 0))
    out[0] = g;
  if (want(wanted, 1))
    out[1] = GradBuilder{b, loc}.neg(g);
  return success();
}

LogicalResult MulOp::buildOperandCotangents(OpBuilder &b, Location loc, Value g,
                                            ArrayRef<bool> wanted,
                                            SmallVectorImpl<Value> &out) {
  clear(*this, out);
  GradBuilder gb{b, loc};
  if (want(wanted, 0))
    out[0] = gb.mul(g, getRhs());
  if (want(wanted, 1))
    out[1] = gb.mul(g, getLhs());
  return success();
}

LogicalResult DivOp::buildOperandCotangents(OpBuilder &b, Location loc, Value g,
                                            ArrayRef<bool> wanted,
                                            SmallVectorImpl<Value> &out) {
  // y = a / b: da = g / b, db = -g a / b^2 = -da * y.
  clear(*this, out);
  if (!want(wanted, 0) && !want(wanted, 1))
    return success();
  GradBuilder gb{b, loc};
  Value da = gb.div(g, getRhs());
  if (want(wanted, 0))
    out[0] = da;
  if (want(wanted, 1))
    out[1] = gb.neg(gb.mul(da, getResult()));
  return success();
}

LogicalResult MaxOp::buildOperandCotangents(OpBuilder &b, Location loc, Value g,
                                            ArrayRef<bool> wanted,
                                            SmallVectorImpl<Value> &out) {
  // The larger operand takes g; on a tie each takes g/2 (as JAX and
  // PyTorch do): wa = 0.5 (1 + step(a - b) - step(b - a)), wb = 1 - wa.
  clear(*this, out);
  if (!want(wanted, 0) && !want(wanted, 1))
    return success();
  GradBuilder gb{b, loc};
  Value d = gb.sub(getLhs(), getRhs());
  Value sign = gb.sub(gb.step(d), gb.step(gb.neg(d)));
  Value half = gb.splat(g, 0.5);
  Value ga = gb.mul(gb.mul(g, half), gb.add(gb.splat(g, 1.0), sign));
  if (want(wanted, 0))
    out[0] = ga;
  if (want(wanted, 1))
    out[1] = gb.sub(g, ga);
  return success();
}

//===----------------------------------------------------------------------===//
// Contractions and reductions
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                               Value g, ArrayRef<bool> wanted,
                                               SmallVectorImpl<Value> &out) {
  // lhs [b..., i, k] x rhs [b..., k, j]: a dot_general with the leading
  // dims as batch, lhs dim -1 contracted with rhs dim -2.
  clear(*this, out);
  int64_t r = rankOf(getLhs());
  SmallVector<int64_t> batch = iota(0, r - 2);
  GradBuilder gb{b, loc};
  contractionRule(gb, getLhs(), getRhs(), g, batch, batch, {r - 1}, {r - 2},
                  wanted, out);
  return success();
}

LogicalResult
DotGeneralOp::buildOperandCotangents(OpBuilder &b, Location loc, Value g,
                                     ArrayRef<bool> wanted,
                                     SmallVectorImpl<Value> &out) {
  clear(*this, out);
  GradBuilder gb{b, loc};
  contractionRule(gb, getLhs(), getRhs(), g, getLhsBatchDims(),
                  getRhsBatchDims(), getLhsContractingDims(),
                  getRhsContractingDims(), wanted, out);
  return success();
}

LogicalResult ReduceSumOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                                  Value g,
                                                  ArrayRef<bool> wanted,
                                                  SmallVectorImpl<Value> &out) {
  // Every summed element gets g: g broadcast back over the reduced dims.
  clear(*this, out);
  if (want(wanted, 0))
    out[0] = GradBuilder{b, loc}.broadcast(
        g, getInput(), otherDims(rankOf(getInput()), getDims()));
  return success();
}

LogicalResult ReduceMaxOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                                  Value g,
                                                  ArrayRef<bool> wanted,
                                                  SmallVectorImpl<Value> &out) {
  // The maximal elements share g equally (JAX's rule):
  // mask = 1 - step(y - x) is 1 exactly where x equals its row's max.
  clear(*this, out);
  if (!want(wanted, 0))
    return success();
  GradBuilder gb{b, loc};
  Value x = getInput();
  SmallVector<int64_t> kept = otherDims(rankOf(x), getDims());
  Value yb = gb.broadcast(getResult(), x, kept);
  Value mask = gb.sub(gb.splat(x, 1.0), gb.step(gb.sub(yb, x)));
  Value count = gb.reduceSum(mask, getDims());
  Value share = gb.broadcast(gb.div(g, count), x, kept);
  out[0] = gb.mul(share, mask);
  return success();
}

//===----------------------------------------------------------------------===//
// Layout ops
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                                  Value g,
                                                  ArrayRef<bool> wanted,
                                                  SmallVectorImpl<Value> &out) {
  clear(*this, out);
  if (!want(wanted, 0))
    return success();
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, d] : llvm::enumerate(perm))
    inverse[d] = i;
  out[0] = GradBuilder{b, loc}.transpose(g, inverse);
  return success();
}

LogicalResult ReshapeOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                                Value g, ArrayRef<bool> wanted,
                                                SmallVectorImpl<Value> &out) {
  clear(*this, out);
  if (want(wanted, 0))
    out[0] = ReshapeOp::create(b, loc, getInput().getType(), g);
  return success();
}

LogicalResult
BroadcastInDimOp::buildOperandCotangents(OpBuilder &b, Location loc, Value g,
                                         ArrayRef<bool> wanted,
                                         SmallVectorImpl<Value> &out) {
  // Sum g over the result dims the operand was copied along: the new dims
  // and the expanded size-1 dims; then restore the operand's size-1 dims.
  clear(*this, out);
  if (!want(wanted, 0))
    return success();
  ArrayRef<int64_t> in = getInput().getType().getShape();
  ArrayRef<int64_t> res = getType().getShape();
  SmallVector<int64_t> summed = otherDims(res.size(), getDims());
  for (auto [i, d] : llvm::enumerate(getDims()))
    if (in[i] != res[d])
      summed.push_back(d);
  llvm::sort(summed);
  GradBuilder gb{b, loc};
  Value r = summed.empty() ? g : gb.reduceSum(g, summed);
  if (r.getType() != getInput().getType())
    r = ReshapeOp::create(b, loc, getInput().getType(), r);
  out[0] = r;
  return success();
}

LogicalResult ConstantOp::buildOperandCotangents(OpBuilder &, Location, Value,
                                                 ArrayRef<bool>,
                                                 SmallVectorImpl<Value> &out) {
  clear(*this, out); // no operands
  return success();
}

LogicalResult
ShardingConstraintOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                             Value g, ArrayRef<bool> wanted,
                                             SmallVectorImpl<Value> &out) {
  // The cotangent is pinned like the value: a layout the user chose for
  // the forward value is as good a choice for its gradient.
  clear(*this, out);
  if (want(wanted, 0))
    out[0] = ShardingConstraintOp::create(b, loc, g, getSharding());
  return success();
}

//===- OpDrawing.cpp - random tensor ops within their domains -------------===//
//
// The structural tensor ops, in the general forms the verifier allows:
// contractions with any number of batch and contracting dims (an operand may
// be contracted with itself), reductions over several dims, reshapes that
// merge, split or add unit dims and broadcasts that add dims or expand unit
// ones; and the choice among every family (the elementwise ops come from
// the op registry, ElementwiseDrawing.cpp). ValueInfo (ProgramBuilder.h)
// keeps each op in its domain.
//
//===----------------------------------------------------------------------===//

#include "ProgramBuilder.h"

#include "shardc/Dialect/TensorOpBuilders.h"
#include "shardc/Interpreter/Kernels.h"

#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::difftest;

namespace {

class OpDrawer {
public:
  explicit OpDrawer(ProgramBuilder &pb) : pb(pb), rng(pb.rng), b(pb.b) {}

  Value matmul(Value x);
  Value dotGeneral(Value x);
  Value linearOfContractions(Value x);
  Value reduce(Value x);
  Value transpose(Value x);
  Value reshape(Value x);
  Value broadcast(Value x);
  Value constraint(Value x);

private:
  ProgramBuilder &pb;
  DiffRng &rng;
  OpBuilder &b;

  ValueInfo info(Value v) { return pb.info(v); }
  ArrayRef<int64_t> shapeOf(Value v) {
    return ProgramBuilder::tensorOf(v).getShape();
  }
  /// Dims of `y` pairing, by size, with `lhsSizes` in order (each used
  /// once), chosen at random among equal sizes; nothing if some size has no
  /// partner.
  std::optional<SmallVector<int64_t>> matchDims(ArrayRef<int64_t> lhsSizes,
                                                ArrayRef<int64_t> y);
  Value contract(Value x, Value y, ArrayRef<int64_t> lb, ArrayRef<int64_t> rb,
                 ArrayRef<int64_t> lc, ArrayRef<int64_t> rc);
};

std::optional<SmallVector<int64_t>>
OpDrawer::matchDims(ArrayRef<int64_t> lhsSizes, ArrayRef<int64_t> y) {
  SmallVector<bool> used(y.size(), false);
  SmallVector<int64_t> out;
  for (int64_t size : lhsSizes) {
    SmallVector<int64_t> candidates;
    for (auto [j, s] : llvm::enumerate(y))
      if (!used[j] && s == size)
        candidates.push_back(j);
    if (candidates.empty())
      return std::nullopt;
    int64_t j = candidates[rng.uniform(candidates.size())];
    used[j] = true;
    out.push_back(j);
  }
  return out;
}

Value OpDrawer::contract(Value x, Value y, ArrayRef<int64_t> lb,
                         ArrayRef<int64_t> rb, ArrayRef<int64_t> lc,
                         ArrayRef<int64_t> rc) {
  ArrayRef<int64_t> xs = shapeOf(x), ys = shapeOf(y);
  SmallVector<int64_t> res;
  int64_t terms = 1;
  for (int64_t d : lb)
    res.push_back(xs[d]);
  for (int64_t d : lc)
    terms *= xs[d];
  for (int64_t i = 0; i < (int64_t)xs.size(); ++i)
    if (!llvm::is_contained(lb, i) && !llvm::is_contained(lc, i))
      res.push_back(xs[i]);
  for (int64_t i = 0; i < (int64_t)ys.size(); ++i)
    if (!llvm::is_contained(rb, i) && !llvm::is_contained(rc, i))
      res.push_back(ys[i]);
  ValueInfo xi = info(x), yi = info(y);
  if ((int64_t)res.size() > kMaxRank || numElements(res) > kMaxElements ||
      !productFits(xi, yi, terms))
    return nullptr;
  double s = terms * xi.scale() * yi.scale();
  ValueInfo r;
  r.lo = -s;
  r.hi = s;
  r.exact = false;
  r.nonFinite = xi.nonFinite || yi.nonFinite;
  return pb.record(DotGeneralOp::create(
                       b, pb.freshLoc(), pb.makeType(res), x, y,
                       b.getDenseI64ArrayAttr(lb), b.getDenseI64ArrayAttr(rb),
                       b.getDenseI64ArrayAttr(lc), b.getDenseI64ArrayAttr(rc)),
                   r);
}

Value OpDrawer::matmul(Value x) {
  SmallVector<int64_t> shape(shapeOf(x));
  int64_t rank = shape.size();
  if (rank < 2)
    return nullptr;
  Value w;
  if (shape[rank - 1] == shape[rank - 2] && rng.chance(0.25)) {
    w = x; // matmul(x, x): one value, possibly wanted in two layouts
  } else {
    SmallVector<int64_t> rhs(shape);
    rhs[rank - 2] = shape[rank - 1];
    SmallVector<Value> candidates;
    for (Value p : pb.pool) {
      ArrayRef<int64_t> ps = shapeOf(p);
      if ((int64_t)ps.size() == rank &&
          ps.drop_back().equals(ArrayRef<int64_t>(rhs).drop_back()))
        candidates.push_back(p);
    }
    if (!candidates.empty() && rng.chance(0.3)) {
      w = candidates[rng.uniform(candidates.size())];
    } else {
      if (!pb.canAddInput())
        return nullptr;
      rhs[rank - 1] = pb.randomDim();
      w = pb.addInput(rhs);
    }
  }
  SmallVector<int64_t> res(shape);
  res[rank - 1] = shapeOf(w)[rank - 1];
  ValueInfo xi = info(x), wi = info(w);
  if (numElements(res) > kMaxElements || !productFits(xi, wi, shape[rank - 1]))
    return nullptr;
  double s = shape[rank - 1] * xi.scale() * wi.scale();
  ValueInfo r;
  r.lo = -s;
  r.hi = s;
  r.exact = false;
  r.nonFinite = xi.nonFinite || wi.nonFinite;
  return pb.record(MatmulOp::create(b, pb.freshLoc(), pb.makeType(res), x, w),
                   r);
}

/// Two contractions of `x` (each a pending sum where its contracting dim is
/// split) combined by ops a pending sum passes through: add or sub, then
/// perhaps neg, or mul/div by a value the sum is not over. The partitioner
/// keeps the sums pending through them and reduces once.
Value OpDrawer::linearOfContractions(Value x) {
  Value p = matmul(x);
  if (!p)
    return nullptr;
  Value q = matmul(x);
  if (!q || q.getType() != p.getType())
    return nullptr;
  ValueInfo pi = info(p), qi = info(q), r;
  r.exact = false;
  r.nonFinite = pi.nonFinite || qi.nonFinite;
  Location loc = pb.freshLoc();
  Value y;
  // p - q of one weight is zero computed in two layouts: rounding noise,
  // which no relative tolerance accepts. Such a pair is added.
  bool sameWeight =
      p.getDefiningOp()->getOperand(1) == q.getDefiningOp()->getOperand(1);
  if (sameWeight || rng.chance(0.5)) {
    r.lo = pi.lo + qi.lo;
    r.hi = pi.hi + qi.hi;
    if (!fits(r))
      return nullptr;
    y = pb.record(AddOp::create(b, loc, p, q), r);
  } else {
    r.lo = pi.lo - qi.hi;
    r.hi = pi.hi - qi.lo;
    if (!fits(r))
      return nullptr;
    y = pb.record(SubOp::create(b, loc, p, q), r);
  }
  switch (rng.uniform(4)) {
  case 0: {
    ValueInfo n = info(y);
    std::swap(n.lo, n.hi);
    n.lo = -n.lo;
    n.hi = -n.hi;
    return pb.record(NegOp::create(b, pb.freshLoc(), y), n);
  }
  case 1: {
    Value c = pb.drawConstant(ProgramBuilder::tensorOf(y), /*positive=*/true);
    if (!productFits(info(y), info(c)))
      return y;
    return pb.record(MulOp::create(b, pb.freshLoc(), y, c),
                     productInfo(info(y), info(c)));
  }
  case 2: {
    // Divisors in [0.625, 1] make the quotient at most 1.6 times larger.
    Value c = pb.drawConstant(ProgramBuilder::tensorOf(y), /*positive=*/true);
    ValueInfo d = info(y);
    d.lo = std::min(d.lo * 1.6, d.lo);
    d.hi = std::max(d.hi * 1.6, d.hi);
    if (!fits(d))
      return y;
    return pb.record(DivOp::create(b, pb.freshLoc(), y, c), d);
  }
  default:
    return y;
  }
}

Value OpDrawer::dotGeneral(Value x) {
  SmallVector<int64_t> shape(shapeOf(x));
  int64_t rank = shape.size();
  int64_t nb = rng.uniform(std::min<int64_t>(2, rank) + 1);
  int64_t nc = rng.uniform(std::min<int64_t>(2, rank - nb) + 1);
  SmallVector<int64_t> perm = pb.randomPermutation(rank);
  SmallVector<int64_t> lb(perm.begin(), perm.begin() + nb);
  SmallVector<int64_t> lc(perm.begin() + nb, perm.begin() + nb + nc);
  SmallVector<int64_t> pairedSizes;
  for (int64_t d : lb)
    pairedSizes.push_back(shape[d]);
  for (int64_t d : lc)
    pairedSizes.push_back(shape[d]);

  // The rhs: x itself (its dims paired with dims of equal size, perhaps
  // other ones), an earlier value whose dims pair up, or a new input.
  Value y;
  std::optional<SmallVector<int64_t>> rhsDims;
  if (rng.chance(0.25)) {
    y = x;
    rhsDims = matchDims(pairedSizes, shape);
  } else if (rng.chance(0.3)) {
    Value p = pb.pool[rng.uniform(pb.pool.size())];
    if ((rhsDims = matchDims(pairedSizes, shapeOf(p))))
      y = p;
  }
  if (!y) {
    if (!pb.canAddInput())
      return nullptr;
    SmallVector<int64_t> dims(pairedSizes);
    for (int64_t f = rng.uniform(3); f > 0 && (int64_t)dims.size() < kMaxRank;
         --f)
      dims.push_back(pb.randomDim());
    SmallVector<int64_t> order = pb.randomPermutation(dims.size());
    SmallVector<int64_t> rhsShape(dims.size());
    rhsDims.emplace(pairedSizes.size());
    for (auto [pos, which] : llvm::enumerate(order)) {
      rhsShape[pos] = dims[which];
      if (which < (int64_t)pairedSizes.size())
        (*rhsDims)[which] = pos;
    }
    if (numElements(rhsShape) > kMaxElements)
      return nullptr;
    y = pb.addInput(rhsShape);
  }
  ArrayRef<int64_t> rd(*rhsDims);
  return contract(x, y, lb, rd.take_front(nb), lc, rd.drop_front(nb));
}

/// The range of reduction `name`'s result over `n` elements in [lo, hi],
/// from the op's own kernel on n copies of each end (a reduction combines
/// its elements monotonically: sum, max), joined with [lo, hi]; nothing if
/// the kernel fails or a result is not finite.
std::optional<std::pair<double, double>> reductionBounds(OperationName name,
                                                         Location loc,
                                                         int64_t n, double lo,
                                                         double hi) {
  // A detached reduction of a [2, n] operand over dim 1: row 0 all lo,
  // row 1 all hi.
  auto type = RankedTensorType::get({2, n}, Float32Type::get(loc.getContext()));
  Block scratch;
  OpBuilder b(loc.getContext());
  Value probeIn = scratch.addArgument(type, loc);
  Operation *probe = buildReduction(b, loc, name, probeIn, {1}).getDefiningOp();
  llvm::scope_exit release([&] { probe->destroy(); });
  KernelOpInterface kernel = getKernel(probe);
  SmallVector<float> values(n, static_cast<float>(lo));
  values.append(n, static_cast<float>(hi));
  llvm::Expected<Tensor> in = Tensor::fromValues({2, n}, values);
  llvm::Expected<Tensor> out = Tensor::allocate({2});
  if (!kernel || !in || !out) {
    if (!in)
      llvm::consumeError(in.takeError());
    if (!out)
      llvm::consumeError(out.takeError());
    return std::nullopt;
  }
  const Tensor *inputs[] = {&*in};
  if (failed(kernel.evaluateKernel(inputs, *out, defaultMaxTensorBytes())))
    return std::nullopt;
  float atLo = out->values()[0], atHi = out->values()[1];
  if (!std::isfinite(atLo) || !std::isfinite(atHi))
    return std::nullopt;
  return std::make_pair(std::min<double>(atLo, lo), std::max<double>(atHi, hi));
}

/// A registered reduction (an op with the Reduction trait) over a random
/// non-empty subset of the dims, chosen as the elementwise ops are; its
/// result's range from its kernel, whether it is exact from its
/// ValueDomainOpInterface.
Value OpDrawer::reduce(Value x) {
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  // Any non-empty subset of the dims (all of them: a scalar).
  SmallVector<int64_t> dims;
  bool all = rng.chance(0.2);
  int64_t forced = rank > 0 ? rng.uniform(rank) : -1;
  for (int64_t d = 0; d < rank; ++d)
    if (all || d == forced || rng.chance(0.3))
      dims.push_back(d);
  std::optional<OperationName> name = pickRegisteredOp(
      pb.ctx,
      [](OperationName n) { return n.hasTrait<shardc::OpTrait::Reduction>(); },
      rng.next());
  if (!name)
    return nullptr;
  int64_t n = 1;
  for (int64_t d : dims)
    n *= shape[d];
  ValueInfo xi = info(x), r = xi;
  auto bounds =
      reductionBounds(*name, UnknownLoc::get(&pb.ctx), n, xi.lo, xi.hi);
  if (!bounds)
    return nullptr;
  std::tie(r.lo, r.hi) = *bounds;
  r.exact = xi.exact && isCorrectlyRounded(*name);
  if (!fits(r))
    return nullptr;
  // A gradient mask (reduce_max's) needs an exact operand.
  if (pb.differentiated && !xi.exact &&
      getContinuity(*name) != Continuity::Continuous)
    return nullptr;
  return pb.record(buildReduction(b, pb.freshLoc(), *name, x, dims), r);
}

Value OpDrawer::transpose(Value x) {
  ArrayRef<int64_t> shape = shapeOf(x);
  SmallVector<int64_t> perm = pb.randomPermutation(shape.size()), res;
  for (int64_t p : perm)
    res.push_back(shape[p]);
  return pb.record(
      TransposeOp::create(b, pb.freshLoc(), pb.makeType(res), x, perm),
      info(x));
}

Value OpDrawer::reshape(Value x) {
  SmallVector<int64_t> shape(shapeOf(x)), res(shape);
  int64_t rank = shape.size();
  switch (rng.uniform(4)) {
  case 0: { // merge two adjacent dims
    if (rank < 2)
      return nullptr;
    int64_t d = rng.uniform(rank - 1);
    res[d] = shape[d] * shape[d + 1];
    res.erase(res.begin() + d + 1);
    break;
  }
  case 1: { // split a dim in two
    if (rank < 1 || rank >= kMaxRank)
      return nullptr;
    int64_t d = rng.uniform(rank);
    SmallVector<int64_t> factors;
    for (int64_t f = 2; f < shape[d]; ++f)
      if (shape[d] % f == 0)
        factors.push_back(f);
    if (factors.empty())
      return nullptr;
    int64_t f = rng.pick<int64_t>(factors);
    res[d] = f;
    res.insert(res.begin() + d + 1, shape[d] / f);
    break;
  }
  case 2: // add or drop a unit dim
    if (rank < kMaxRank && rng.chance(0.5)) {
      res.insert(res.begin() + rng.uniform(rank + 1), 1);
    } else {
      auto it = llvm::find(res, 1);
      if (it == res.end())
        return nullptr;
      res.erase(it);
    }
    break;
  default: // flatten (a scalar if there is one element)
    res.assign({});
    if (numElements(shape) != 1 || rng.chance(0.5))
      res.push_back(numElements(shape));
    break;
  }
  return pb.record(ReshapeOp::create(b, pb.freshLoc(), pb.makeType(res), x),
                   info(x));
}

Value OpDrawer::broadcast(Value x) {
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  if (rank > kMaxRank)
    return nullptr;
  int64_t added = rng.uniform(std::min<int64_t>(2, kMaxRank - rank) + 1);
  // Operand dims keep their order among `added` new ones.
  SmallVector<bool> isNew(rank + added, false);
  for (int64_t k = 0; k < added;) {
    int64_t at = rng.uniform(rank + added);
    if (!isNew[at]) {
      isNew[at] = true;
      ++k;
    }
  }
  SmallVector<int64_t> res, dims;
  int64_t next = 0;
  for (int64_t i = 0; i < rank + added; ++i) {
    if (isNew[i]) {
      res.push_back(rng.pick<int64_t>({1, 2, 3, 4}));
      continue;
    }
    int64_t size = shape[next++];
    // A unit dim may expand.
    if (size == 1 && rng.chance(0.5))
      size = rng.pick<int64_t>({2, 3, 4});
    dims.push_back(i);
    res.push_back(size);
  }
  if (numElements(res) > kMaxElements)
    return nullptr;
  return pb.record(
      BroadcastInDimOp::create(b, pb.freshLoc(), pb.makeType(res), x, dims),
      info(x));
}

Value OpDrawer::constraint(Value x) {
  return pb.record(ShardingConstraintOp::create(
                       b, pb.freshLoc(), x,
                       pb.randomSharding(shapeOf(x), /*allowPartial=*/true)),
                   info(x));
}

} // namespace

Value ProgramBuilder::buildRandomOp(Value x) {
  OpDrawer d(*this);
  switch (rng.uniform(17)) {
  case 0:
    return d.matmul(x);
  case 15:
    return d.linearOfContractions(x);
  case 1:
  case 2:
    return d.dotGeneral(x);
  case 3:
  case 4:
  case 5:
    // Binary 2 times in 13, the share the unary drawer used to pass on.
    return buildElementwiseOp(x, rng.chance(2.0 / 13) ? 2 : 1);
  case 6:
  case 7:
    return buildElementwiseOp(x, 2);
  case 8:
    return d.reduce(x);
  case 9:
    return d.transpose(x);
  case 10:
    return rng.chance(0.5) ? d.reshape(x) : d.broadcast(x);
  case 11:
    return d.constraint(x);
  case 12:
    return buildSlicingOp(x);
  case 13:
    return buildCompositeOp(x);
  case 14:
    return buildIndexingOp(x);
  default: { // a constant combined with x, so that it is used
    RankedTensorType type = tensorOf(x);
    Value c = drawConstant(type, false);
    ValueInfo r = info(x);
    r.lo -= 0.5;
    r.hi += 0.5;
    if (!(r.scale() <= kMaxScale))
      return nullptr;
    return record(AddOp::create(b, freshLoc(), x, c), r);
  }
  }
}

//===- CompositeDrawing.cpp - random composite ops ------------------------===//
//
// softmax, log_softmax, layer_norm, rms_norm, mean and cross_entropy on any
// axes of a value. The runner expands them (--shardc-decompose, first in
// every pipeline) before the reference and the sharded program run, so what
// is compared is their expansions, sharded as the drawn shardings say.
//
// Domains: the max shift keeps exp finite on any input, so softmax and
// cross_entropy take any finite value. The norms square their input, so it
// must stay below 1e15; and their epsilon is drawn from [0.5, 1]: with a
// tiny epsilon, a row of nearly equal values would be amplified by up to
// 1/sqrt(epsilon), and the rounding difference between a sharded and an
// unsharded mean with it, into a false mismatch. cross_entropy's labels are
// an iota (class ids 0, 1, ... along a dim; those >= the class count pick
// no logit, which is defined).
//
//===----------------------------------------------------------------------===//

#include "ProgramBuilder.h"

#include "shardc/Support/RandomTensor.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::difftest;

namespace {

class CompositeDrawer {
public:
  explicit CompositeDrawer(ProgramBuilder &pb) : pb(pb), rng(pb.rng), b(pb.b) {}

  /// A constant of `like`'s type, its elements drawn in [0.75, 1): a weight
  /// that makes a gradient depend on every element.
  Value nonUniformWeights(Value like);
  /// `x` times non-uniform weights, in a differentiated program, before an
  /// op that ignores what is constant along an axis (softmax, the
  /// log-sum-exp of a cross-entropy): of x = f + c, with c a bias broadcast
  /// along that axis (a layer_norm's beta), c's gradient is zero in exact
  /// arithmetic, and its rounding noise is what Adam's normalization would
  /// blow up to full steps that differ between the sharded and the
  /// unsharded program. The weights make every input's gradient real.
  Value scaledAgainstShifts(Value x);
  Value softmax(Value x, bool log);
  Value norm(Value x, bool rms);
  Value mean(Value x);
  Value crossEntropy(Value x);

private:
  ProgramBuilder &pb;
  DiffRng &rng;
  OpBuilder &b;

  ArrayRef<int64_t> shapeOf(Value v) {
    return ProgramBuilder::tensorOf(v).getShape();
  }
  /// A dim of `x`, sometimes spelled negatively (from the end).
  int64_t randomAxis(int64_t rank, int64_t &normalized) {
    normalized = rng.uniform(rank);
    return rng.chance(0.3) ? normalized - rank : normalized;
  }
  /// A non-empty set of dims, some spelled negatively; `dims` gets them
  /// ascending and non-negative.
  SmallVector<int64_t> randomAxes(int64_t rank, SmallVector<int64_t> &dims) {
    SmallVector<int64_t> spelled;
    int64_t forced = rng.uniform(rank);
    for (int64_t d = 0; d < rank; ++d)
      if (d == forced || rng.chance(0.3)) {
        dims.push_back(d);
        spelled.push_back(rng.chance(0.3) ? d - rank : d);
      }
    return spelled;
  }
  static bool usable(const ValueInfo &i) { return !i.nonFinite; }
};

Value CompositeDrawer::nonUniformWeights(Value like) {
  auto type = ProgramBuilder::tensorOf(like);
  SmallVector<float> weights;
  for (int64_t i = 0; i < type.getNumElements(); ++i)
    weights.push_back(0.75f + 0.25f * bitsToUniformFloat(rng.next()));
  Value w = ConstantOp::create(b, pb.freshLoc(),
                               cast<ElementsAttr>(DenseElementsAttr::get(
                                   type, ArrayRef<float>(weights))));
  ValueInfo wi;
  wi.lo = 0.5;
  wi.hi = 1;
  pb.infos[w] = wi;
  return w;
}

Value CompositeDrawer::scaledAgainstShifts(Value x) {
  ValueInfo xi = pb.info(x);
  Value c = nonUniformWeights(x);
  ValueInfo scaled = xi;
  scaled.lo = std::min(xi.lo, 0.75 * xi.lo);
  scaled.hi = std::max(xi.hi, 0.75 * xi.hi);
  scaled.exact = false;
  return pb.record(MulOp::create(b, pb.freshLoc(), x, c), scaled);
}

Value CompositeDrawer::softmax(Value x, bool log) {
  ValueInfo xi = pb.info(x);
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  if (rank == 0 || !usable(xi))
    return nullptr;
  int64_t axis = 0;
  int64_t spelled = randomAxis(rank, axis);
  if (pb.differentiated && shape[axis] >= 2) {
    x = scaledAgainstShifts(x);
    xi = pb.info(x);
  }
  ValueInfo r;
  r.exact = false;
  Value y;
  if (log) {
    // s - log(sum(exp(s))) with s = x - max in [lo - hi, 0].
    r.lo = (xi.lo - xi.hi) - std::log(static_cast<double>(shape[axis]));
    r.hi = 0;
    if (!(r.scale() <= kMaxScale))
      return nullptr;
    y = LogSoftmaxOp::create(b, pb.freshLoc(), x, spelled);
  } else {
    r.lo = 0;
    r.hi = 1;
    y = SoftmaxOp::create(b, pb.freshLoc(), x, spelled);
  }
  if (!pb.differentiated)
    return pb.record(y, r);
  // A softmax row sums to 1: a loss that sums it (or exp of a
  // log_softmax) does not depend on the input, whose gradient is then
  // rounding noise, which Adam's normalization blows up to full steps
  // that differ between the sharded and the unsharded program. Weighting
  // the elements by a non-uniform constant makes the gradient real; the
  // softmax itself is not offered to later ops.
  if (shape[axis] < 2)
    return nullptr;
  pb.infos[y] = r;
  Value w = nonUniformWeights(y);
  ValueInfo product = r;
  product.lo = std::min(r.lo, 0.0);
  product.hi = std::max(r.hi, 0.0);
  return pb.record(MulOp::create(b, pb.freshLoc(), y, w), product);
}

Value CompositeDrawer::norm(Value x, bool rms) {
  ValueInfo xi = pb.info(x);
  int64_t rank = shapeOf(x).size();
  if (rank == 0 || !usable(xi) || xi.scale() > 1e15 || !pb.canAddInput())
    return nullptr;
  SmallVector<int64_t> dims;
  SmallVector<int64_t> axes = randomAxes(rank, dims);
  SmallVector<int64_t> paramShape;
  for (int64_t d : dims)
    paramShape.push_back(shapeOf(x)[d]);
  float epsilon = 0.5f + 0.5f * static_cast<float>(rng.uniform(1024)) / 1024;
  // |normalized| <= spread / sqrt(epsilon), gamma and beta in [-1, 1].
  double spread = rms ? xi.scale() : xi.hi - xi.lo;
  ValueInfo r;
  r.exact = false;
  r.hi = spread / std::sqrt(epsilon) + (rms ? 0 : 1);
  r.lo = -r.hi;
  Value gamma = pb.addInput(paramShape, InputDomain::Uniform);
  if (rms)
    return pb.record(RmsNormOp::create(b, pb.freshLoc(), x, gamma,
                                       b.getDenseI64ArrayAttr(axes),
                                       b.getF32FloatAttr(epsilon)),
                     r);
  if (!pb.canAddInput())
    return nullptr;
  Value beta = pb.addInput(paramShape, InputDomain::Uniform);
  return pb.record(LayerNormOp::create(b, pb.freshLoc(), x, gamma, beta,
                                       b.getDenseI64ArrayAttr(axes),
                                       b.getF32FloatAttr(epsilon)),
                   r);
}

Value CompositeDrawer::mean(Value x) {
  ValueInfo xi = pb.info(x);
  int64_t rank = shapeOf(x).size();
  if (rank == 0)
    return nullptr;
  SmallVector<int64_t> dims;
  SmallVector<int64_t> axes = randomAxes(rank, dims);
  ValueInfo r = xi;
  r.exact = false;
  return pb.record(
      MeanOp::create(b, pb.freshLoc(), x, b.getDenseI64ArrayAttr(axes)), r);
}

Value CompositeDrawer::crossEntropy(Value x) {
  ValueInfo xi = pb.info(x);
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  if (rank == 0 || !usable(xi))
    return nullptr;
  if (pb.differentiated && shape.back() >= 2) {
    x = scaledAgainstShifts(x);
    xi = pb.info(x);
  }
  // Class ids counting along one of the label dims (or all 0 for rank 1).
  auto labelType = RankedTensorType::get(
      shape.drop_back(), rng.chance(0.5) ? b.getI32Type() : b.getI64Type());
  Value labels;
  if (rank == 1)
    labels = ConstantOp::create(
        b, pb.freshLoc(),
        cast<ElementsAttr>(DenseElementsAttr::get(
            labelType, b.getIntegerAttr(labelType.getElementType(), 0))));
  else
    labels = IotaOp::create(b, pb.freshLoc(), labelType,
                            b.getI64IntegerAttr(rng.uniform(rank - 1)));
  // logsumexp(x) - x[label] in [0, hi - lo + log V].
  ValueInfo r;
  r.exact = false;
  r.lo = 0;
  r.hi = (xi.hi - xi.lo) + std::log(static_cast<double>(shape.back())) +
         std::fabs(xi.lo) + std::fabs(xi.hi);
  if (!(r.scale() <= kMaxScale))
    return nullptr;
  return pb.record(CrossEntropyOp::create(b, pb.freshLoc(), x, labels), r);
}

} // namespace

Value ProgramBuilder::buildCompositeOp(Value x) {
  CompositeDrawer d(*this);
  switch (rng.uniform(6)) {
  case 0:
    return d.softmax(x, /*log=*/false);
  case 1:
    return d.softmax(x, /*log=*/true);
  case 2:
    return d.norm(x, /*rms=*/false);
  case 3:
    return d.norm(x, /*rms=*/true);
  case 4:
    return d.mean(x);
  default:
    return d.crossEntropy(x);
  }
}

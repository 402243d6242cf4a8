//===- ValueDomains.cpp - values made to fit an op's domain ---------------===//
//
// What the generator knows of a value's elements (ValueInfo) and how it
// maps a value into the domain an op declares for an operand
// (ValueDomainOpInterface): bounded away from 0, or of limited magnitude.
//
//===----------------------------------------------------------------------===//

#include "ProgramBuilder.h"

#include "shardc/Support/RandomTensor.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::difftest;

ValueInfo difftest::hull(double a, double b, double c, double d) {
  ValueInfo i;
  i.lo = std::min({a, b, c, d});
  i.hi = std::max({a, b, c, d});
  return i;
}

ValueInfo difftest::productInfo(const ValueInfo &x, const ValueInfo &y) {
  ValueInfo r = hull(x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi);
  r.exact = x.exact && y.exact;
  r.nonFinite = x.nonFinite || y.nonFinite;
  r.mayBeSummed = x.mayBeSummed || y.mayBeSummed;
  return r;
}

bool difftest::productFits(const ValueInfo &x, const ValueInfo &y,
                           double terms) {
  double s = x.scale() * y.scale();
  return s * terms <= kMaxScale &&
         (s >= kMinProductScale || x.scale() == 0 || y.scale() == 0);
}

bool difftest::fits(const ValueInfo &i) { return i.scale() <= kMaxScale; }

/// Bounded away from 0 on one side.
bool difftest::awayFromZero(const ValueInfo &i) {
  return i.lo >= kMinPositive || i.hi <= -kMinPositive;
}

Value ProgramBuilder::drawConstant(RankedTensorType type, bool positive) {
  SmallVector<float> values(type.getNumElements());
  bool splat = rng.chance(0.4);
  auto draw = [&] {
    float u = bitsToUniformFloat(rng.next());
    return positive ? 0.625f + 0.375f * u : 0.5f * u;
  };
  float first = draw();
  ValueInfo i;
  i.lo = i.hi = first;
  for (float &f : values) {
    f = splat ? first : draw();
    i.lo = std::min<double>(i.lo, f);
    i.hi = std::max<double>(i.hi, f);
  }
  auto attr = DenseElementsAttr::get(type, ArrayRef<float>(values));
  Value c = ConstantOp::create(b, freshLoc(), cast<ElementsAttr>(attr));
  return record(c, i);
}

Value ProgramBuilder::unsaturated(Value x, double limit) {
  ValueInfo xi = info(x);
  if (xi.scale() <= limit)
    return x;
  auto type = tensorOf(x);
  float factor = static_cast<float>(limit / xi.scale());
  auto attr = DenseElementsAttr::get(type, b.getF32FloatAttr(factor));
  ValueInfo ci;
  ci.lo = ci.hi = factor;
  Value c =
      record(ConstantOp::create(b, freshLoc(), cast<ElementsAttr>(attr)), ci);
  ValueInfo r = productInfo(xi, ci);
  return record(MulOp::create(b, freshLoc(), x, c), r);
}

Value ProgramBuilder::positive(Value x) {
  ValueInfo xi = info(x);
  if (xi.lo >= kMinPositive)
    return x;
  if (xi.hi <= -kMinPositive && rng.chance(0.5)) {
    ValueInfo n = xi;
    n.lo = -xi.hi;
    n.hi = -xi.lo;
    return record(NegOp::create(b, freshLoc(), x), n);
  }
  // x * x + c keeps exact values exact; exp(tanh(x)) works at any scale.
  if (xi.scale() * xi.scale() <= kMaxScale && rng.chance(0.5)) {
    ValueInfo sq = productInfo(xi, xi);
    sq.lo =
        (xi.lo <= 0 && xi.hi >= 0) ? 0 : std::min(xi.lo * xi.lo, xi.hi * xi.hi);
    Value s = record(MulOp::create(b, freshLoc(), x, x), sq);
    Value c = drawConstant(tensorOf(x), /*positive=*/true);
    ValueInfo sum = sq;
    sum.lo += info(c).lo;
    sum.hi += info(c).hi;
    sum.exact = sq.exact;
    return record(AddOp::create(b, freshLoc(), s, c), sum);
  }
  // Forward, tanh saturates harmlessly to +-1; its derivative does not.
  x = unsaturated(x, differentiated ? 3 : 20);
  xi = info(x);
  ValueInfo t = xi;
  t.lo = std::tanh(xi.lo);
  t.hi = std::tanh(xi.hi);
  t.exact = false;
  Value th = record(TanhOp::create(b, freshLoc(), x), t);
  ValueInfo e = t;
  e.lo = std::exp(t.lo);
  e.hi = std::exp(t.hi);
  return record(ExpOp::create(b, freshLoc(), th), e);
}

bool ProgramBuilder::holdsDomain(Value x, const OperandDomain &domain) {
  const ValueInfo &xi = info(x);
  if (xi.scale() > domain.maxMagnitude)
    return false;
  switch (domain.sign) {
  case OperandDomain::Sign::Any:
    return true;
  case OperandDomain::Sign::Positive:
    return xi.lo >= kMinPositive;
  case OperandDomain::Sign::NonZero:
    return awayFromZero(xi);
  }
  return false;
}

Value ProgramBuilder::fitDomain(Value x, const OperandDomain &domain) {
  if (domain.sign == OperandDomain::Sign::Positive ||
      (domain.sign == OperandDomain::Sign::NonZero && !awayFromZero(info(x))))
    x = positive(x);
  if (std::isfinite(domain.maxMagnitude))
    x = unsaturated(x, domain.maxMagnitude);
  // Scaling down may have brought a positive value too close to 0.
  return holdsDomain(x, domain) ? x : Value();
}

//===- NumericCheck.cpp - a sharded result against the reference ----------===//

#include "shardc/Support/NumericCheck.h"

#include <cmath>
#include <limits>

using namespace shardc;

double shardc::familyScale(llvm::ArrayRef<Tensor> references) {
  double scale = 0;
  for (const Tensor &t : references)
    for (float x : t.values())
      if (std::isfinite(x))
        scale = std::max(scale, std::fabs(double(x)));
  return scale;
}

Tensor shardc::perturbByOneUlp(const Tensor &t) {
  Tensor out = t.clone();
  for (auto [i, x] : llvm::enumerate(out.values()))
    if (std::isfinite(x) && x != 0)
      x = std::nextafter(x, i % 2 ? -INFINITY : INFINITY);
  return out;
}

std::pair<double, double>
shardc::compareToReference(const Tensor &got, const Tensor &want,
                           NonFiniteMismatch *mismatch, double familyScale) {
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  if (got.shape() != want.shape())
    return {kInfinity, kInfinity};
  double maxAbs = 0, maxRef = 0;
  for (int64_t i = 0; i < want.numElements(); ++i) {
    float g = got.data()[i], w = want.data()[i];
    if (std::isfinite(g) && std::isfinite(w)) {
      maxAbs = std::max(maxAbs, std::fabs(double(g) - double(w)));
      maxRef = std::max(maxRef, std::fabs(double(w)));
      continue;
    }
    // Equal infinities compare equal; NaN equals nothing, not even NaN.
    if (g == w || (std::isnan(g) && std::isnan(w)))
      continue;
    maxAbs = kInfinity;
    if (mismatch && mismatch->count++ == 0) {
      mismatch->firstIndex = i;
      mismatch->got = g;
      mismatch->want = w;
    }
  }
  double scale = std::max(maxRef, kFamilyScaleFloor * familyScale);
  return {scale > 0 ? maxAbs / scale : maxAbs, maxAbs};
}

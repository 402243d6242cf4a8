//===- NumericCheck.cpp - a sharded result against the reference ----------===//

#include "shardc/Support/NumericCheck.h"

#include <cmath>
#include <limits>

using namespace shardc;

double shardc::familyScale(llvm::ArrayRef<Tensor> references) {
  double scale = 0;
  for (const Tensor &t : references)
    for (float x : t.valuesAs<float>())
      if (std::isfinite(x))
        scale = std::max(scale, std::fabs(double(x)));
  return scale;
}

Tensor shardc::perturbByOneUlp(const Tensor &t) {
  Tensor out = t.clone();
  // Integers and booleans are exact: nothing to perturb.
  for (auto [i, x] : llvm::enumerate(out.valuesAs<float>()))
    if (std::isfinite(x) && x != 0)
      x = std::nextafter(x, i % 2 ? -INFINITY : INFINITY);
  return out;
}

std::pair<double, double>
shardc::compareToReference(const Tensor &got, const Tensor &want,
                           NonFiniteMismatch *mismatch, double familyScale) {
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  if (got.shape() != want.shape() || got.dtype() != want.dtype())
    return {kInfinity, kInfinity};
  double maxAbs = 0, maxRef = 0;
  if (want.dtype() != DType::F32) {
    // Integers and booleans are exact: any difference counts at its size.
    for (int64_t i = 0; i < want.numElements(); ++i) {
      double g = got.elementAsDouble(i), w = want.elementAsDouble(i);
      maxAbs = std::max(maxAbs, std::fabs(g - w));
      maxRef = std::max(maxRef, std::fabs(w));
    }
    return {maxRef > 0 ? maxAbs / maxRef : maxAbs, maxAbs};
  }
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

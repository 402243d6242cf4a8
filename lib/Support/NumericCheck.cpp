//===- NumericCheck.cpp - a sharded result against the reference ----------===//

#include "shardc/Support/NumericCheck.h"

#include "shardc/Support/HalfFloat.h"
#include "shardc/Support/RandomTensor.h"

#include <cmath>
#include <limits>

using namespace shardc;

double shardc::familyScale(llvm::ArrayRef<Tensor> references) {
  double scale = 0;
  for (const Tensor &t : references) {
    for (float x : t.valuesAs<float>())
      if (std::isfinite(x))
        scale = std::max(scale, std::fabs(double(x)));
    if (isHalfDType(t.dtype()))
      for (int64_t i = 0; i < t.numElements(); ++i)
        if (double x = t.elementAsDouble(i); std::isfinite(x))
          scale = std::max(scale, std::fabs(x));
  }
  return scale;
}

/// Whether `probe` moves element `i` up (in magnitude for half types, in
/// value otherwise).
static bool movesUp(unsigned probe, int64_t i) {
  if (probe == 0)
    return i % 2 == 0;
  return splitmix64Mix(uint64_t(probe) * 0x9e3779b97f4a7c15ULL ^ uint64_t(i)) &
         1;
}

Tensor shardc::perturbByOneUlp(const Tensor &t, std::optional<DType> working,
                               unsigned probe) {
  Tensor out = t.clone();
  if (working && isHalfDType(*working) && t.dtype() == DType::F32) {
    // One ulp of the working type at x: |x| in [2^(e-1), 2^e) has steps of
    // 2^(e - precision), precision 8 for bf16 and 11 for f16.
    int precision = *working == DType::BF16 ? 8 : 11;
    for (auto [i, x] : llvm::enumerate(out.values())) {
      if (!std::isfinite(x) || x == 0)
        continue;
      int e;
      std::frexp(x, &e);
      float step = std::ldexp(1.0f, e - precision);
      x += movesUp(probe, i) ? step : -step;
    }
    return out;
  }
  // bf16 and f16 move by one ulp of their own type: the rounding their
  // programs make at every store is of that size (docs/precision.md).
  if (isHalfDType(t.dtype())) {
    auto *bits = reinterpret_cast<uint16_t *>(out.rawData());
    for (int64_t i = 0; i < out.numElements(); ++i) {
      float x = halfToFloat(bits[i], t.dtype());
      if (!std::isfinite(x) || x == 0)
        continue;
      // Magnitude one step up or down: the neighbouring encoding.
      bool up = movesUp(probe, i) == (x > 0);
      uint16_t next = up ? bits[i] + 1 : bits[i] - 1;
      if (std::isfinite(halfToFloat(next, t.dtype())))
        bits[i] = next;
    }
    return out;
  }
  // Integers and booleans are exact: nothing to perturb.
  for (auto [i, x] : llvm::enumerate(out.valuesAs<float>()))
    if (std::isfinite(x) && x != 0)
      x = std::nextafter(x, movesUp(probe, i) ? INFINITY : -INFINITY);
  return out;
}

std::pair<double, double>
shardc::compareToReference(const Tensor &got, const Tensor &want,
                           NonFiniteMismatch *mismatch, double familyScale) {
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  if (got.shape() != want.shape() || got.dtype() != want.dtype())
    return {kInfinity, kInfinity};
  double maxAbs = 0, maxRef = 0;
  if (isIntegerDType(want.dtype()) || want.dtype() == DType::F64) {
    // Integers and booleans are exact: any difference counts at its size.
    for (int64_t i = 0; i < want.numElements(); ++i) {
      double g = got.elementAsDouble(i), w = want.elementAsDouble(i);
      maxAbs = std::max(maxAbs, std::fabs(g - w));
      maxRef = std::max(maxRef, std::fabs(w));
    }
    return {maxRef > 0 ? maxAbs / maxRef : maxAbs, maxAbs};
  }
  // f32, or bf16 and f16 widened (exactly) to f32.
  bool half = isHalfDType(want.dtype());
  for (int64_t i = 0; i < want.numElements(); ++i) {
    float g = half ? float(got.elementAsDouble(i)) : got.data()[i];
    float w = half ? float(want.elementAsDouble(i)) : want.data()[i];
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

double shardc::halfTolerance(DType dtype) {
  return kHalfRoundings * std::ldexp(1.0, dtype == DType::BF16 ? -8 : -11);
}

/// Raises `movement` to how far each element of `moved` is from `want`
/// (finite elements of float tensors of the same shape only).
void shardc::noteElementMovement(const Tensor &moved, const Tensor &want,
                                 std::vector<double> &movement) {
  if (moved.shape() != want.shape() || moved.dtype() != want.dtype() ||
      isIntegerDType(want.dtype()))
    return;
  for (int64_t e = 0; e < want.numElements(); ++e) {
    double m = moved.elementAsDouble(e), w = want.elementAsDouble(e);
    if (std::isfinite(m) && std::isfinite(w))
      movement[e] = std::max(movement[e], std::fabs(m - w));
  }
}

/// `tolerance`, or when every element beyond it is one the probes explain
/// (within kSensitivityMargin times its own movement), the largest error
/// so explained: the tensor passes at the returned tolerance exactly when
/// each element is within `tolerance` or explained.
double shardc::excusedTolerance(const Tensor &got, const Tensor &want,
                                llvm::ArrayRef<double> movement,
                                double familyScale, double tolerance) {
  if (got.shape() != want.shape() || got.dtype() != want.dtype() ||
      isIntegerDType(want.dtype()))
    return tolerance;
  double maxRef = 0;
  for (int64_t e = 0; e < want.numElements(); ++e)
    if (double w = want.elementAsDouble(e); std::isfinite(w))
      maxRef = std::max(maxRef, std::fabs(w));
  double scale = std::max(maxRef, kFamilyScaleFloor * familyScale);
  if (!(scale > 0))
    return tolerance;
  double excused = tolerance;
  for (int64_t e = 0; e < want.numElements(); ++e) {
    double g = got.elementAsDouble(e), w = want.elementAsDouble(e);
    if (!std::isfinite(g) || !std::isfinite(w))
      continue;
    double error = std::fabs(g - w);
    if (error / scale <= tolerance)
      continue;
    if (error > kSensitivityMargin * movement[e])
      return tolerance; // unexplained: the tensor fails as it is
    excused = std::max(excused, error / scale);
  }
  return excused;
}

//===- HalfFloat.h - bf16 and f16 elements ----------------------*- C++ -*-===//
//
// shardc stores bf16 and f16 tensors at their true width (two bytes an
// element) and computes on them in f32: a kernel reads its half operands
// widened to f32 (exactly: every bf16 and f16 value is an f32 value) and
// its half result is rounded from f32 to the type, to nearest with ties to
// even (docs/precision.md). These are the two conversions, written once,
// so that every backend and every kernel rounds the same way.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_SUPPORT_HALFFLOAT_H
#define SHARDC_SUPPORT_HALFFLOAT_H

#include "shardc/Support/Tensor.h"

#include <cstdint>

namespace shardc {

/// True for the two-byte float dtypes, BF16 and F16.
inline bool isHalfDType(DType dtype) {
  return dtype == DType::BF16 || dtype == DType::F16;
}

/// The dtype a kernel computes a tensor of `dtype` in: F32 for the half
/// dtypes, `dtype` itself otherwise.
inline DType computeDType(DType dtype) {
  return isHalfDType(dtype) ? DType::F32 : dtype;
}

/// The f32 value of bf16 or f16 `bits` (exact).
float halfToFloat(uint16_t bits, DType dtype);

/// `x` rounded to bf16 or f16, to nearest with ties to even. Values beyond
/// the type's range become infinities (bf16 has f32's range; f16 overflows
/// from 65520 on), f16 keeps subnormals, and a NaN stays a (quiet) NaN.
uint16_t floatToHalf(float x, DType dtype);

/// `n` elements converted between f32 and `dtype` (BF16 or F16).
void widenHalf(const uint16_t *in, float *out, int64_t n, DType dtype);
void narrowToHalf(const float *in, uint16_t *out, int64_t n, DType dtype);

/// A half tensor as f32 (the values exactly), or an f32 tensor rounded to
/// `dtype`; the shape is kept.
llvm::Expected<Tensor> widenToF32(const Tensor &t,
                                  uint64_t maxBytes = defaultMaxTensorBytes());
llvm::Expected<Tensor>
narrowFromF32(const Tensor &t, DType dtype,
              uint64_t maxBytes = defaultMaxTensorBytes());

/// acc[i] = round(widen(acc[i]) (+ or max) widen(x[i])): a collective's
/// reduction of half elements, one rounding per step of the fold (as a
/// ring all-reduce in the type rounds at each hop). `isMax` picks max, in
/// which a NaN wins as in reduceElements.
void reduceHalfElements(uint16_t *acc, const uint16_t *x, int64_t n,
                        DType dtype, bool isMax);

} // namespace shardc

#endif // SHARDC_SUPPORT_HALFFLOAT_H

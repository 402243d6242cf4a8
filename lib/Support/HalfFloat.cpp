//===- HalfFloat.cpp - bf16 and f16 elements ------------------------------===//
//
// Bit manipulation rather than the compiler's _Float16 and __bf16: their
// availability and rounding depend on the compiler and the target, and
// every backend must round the same way on any x86-64.
//
//===----------------------------------------------------------------------===//

#include "shardc/Support/HalfFloat.h"

#include <cmath>
#include <cstring>

using namespace shardc;

static uint32_t bitsOf(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

static float floatOf(uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

/// bf16 is the top half of an f32: round the bottom 16 bits away.
static uint16_t floatToBF16(float x) {
  uint32_t u = bitsOf(x);
  if (std::isnan(x))
    return static_cast<uint16_t>((u >> 16) | 0x0040); // quiet, sign kept
  // Adding 0x7fff rounds half down; the kept part's lowest bit makes the
  // tie go to even. A carry into the exponent is the correct rounding up
  // (to infinity past the largest finite value).
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

/// f16: 1 sign, 5 exponent (bias 15), 10 mantissa bits.
static uint16_t floatToF16(float x) {
  uint32_t u = bitsOf(x);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  u &= 0x7fffffff;
  if (u >= 0x7f800000) // infinity or NaN
    return sign | (u > 0x7f800000 ? 0x7e00 : 0x7c00);
  if (u >= 0x477ff000) // 65520 and up round to infinity
    return sign | 0x7c00;
  if (u < 0x38800000) {
    // Below f16's smallest normal (2^-14) the step is 2^-24: adding 0.5,
    // whose f32 step is 2^-24 too, lets the FPU round to nearest even, and
    // the mantissa bits are then the f16 subnormal.
    float shifted = std::fabs(x) + 0.5f;
    return sign | static_cast<uint16_t>(bitsOf(shifted) - 0x3f000000);
  }
  // Normal: rebias the exponent (127 - 15 = 112) and round the 13 dropped
  // mantissa bits to nearest even; a carry moves into the exponent.
  uint32_t odd = (u >> 13) & 1;
  u += (uint32_t(-112) << 23) + 0xfff + odd;
  return sign | static_cast<uint16_t>(u >> 13);
}

static float f16ToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent == 0) { // zero or subnormal: mantissa * 2^-24, exact in f32
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) // infinity or NaN
    return floatOf(sign | 0x7f800000 | (mantissa << 13));
  return floatOf(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

float shardc::halfToFloat(uint16_t bits, DType dtype) {
  if (dtype == DType::BF16)
    return floatOf(uint32_t(bits) << 16);
  return f16ToFloat(bits);
}

uint16_t shardc::floatToHalf(float x, DType dtype) {
  return dtype == DType::BF16 ? floatToBF16(x) : floatToF16(x);
}

void shardc::widenHalf(const uint16_t *in, float *out, int64_t n,
                       DType dtype) {
  if (dtype == DType::BF16) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = floatOf(uint32_t(in[i]) << 16);
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    out[i] = f16ToFloat(in[i]);
}

void shardc::narrowToHalf(const float *in, uint16_t *out, int64_t n,
                          DType dtype) {
  if (dtype == DType::BF16) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = floatToBF16(in[i]);
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    out[i] = floatToF16(in[i]);
}

llvm::Expected<Tensor> shardc::widenToF32(const Tensor &t, uint64_t maxBytes) {
  llvm::Expected<Tensor> out =
      Tensor::allocateUninitialized(t.shape(), DType::F32, maxBytes);
  if (!out)
    return out.takeError();
  widenHalf(reinterpret_cast<const uint16_t *>(t.rawData()), out->data(),
            t.numElements(), t.dtype());
  return out;
}

llvm::Expected<Tensor> shardc::narrowFromF32(const Tensor &t, DType dtype,
                                             uint64_t maxBytes) {
  llvm::Expected<Tensor> out =
      Tensor::allocateUninitialized(t.shape(), dtype, maxBytes);
  if (!out)
    return out.takeError();
  narrowToHalf(t.data(), reinterpret_cast<uint16_t *>(out->rawData()),
               t.numElements(), dtype);
  return out;
}

void shardc::reduceHalfElements(uint16_t *acc, const uint16_t *x, int64_t n,
                                DType dtype, bool isMax) {
  for (int64_t i = 0; i < n; ++i) {
    float a = halfToFloat(acc[i], dtype), b = halfToFloat(x[i], dtype);
    if (isMax) {
      if (b > a || b != b)
        acc[i] = x[i];
    } else {
      acc[i] = floatToHalf(a + b, dtype);
    }
  }
}

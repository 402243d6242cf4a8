//===- ElementwiseKernel.h - elementwise kernels on arrays ------*- C++ -*-===//
//
// The one instantiation of an elementwise op's ODS `kernel` expression
// (`computeElements`, `computeIntegerElements`) on Eigen arrays. The
// interpreter runs it on tensors and on the blocks of a fused pass; the op's
// `fold` runs it on constant operands (the ONNX importer's shape arithmetic,
// the canonicalizer). Both computing through these functions is what makes
// a folded constant carry the bits a run would compute. Included only by
// lib/Dialect/ElementwiseOps.cpp and lib/Interpreter/ElementwiseKernels.cpp,
// which build with Eigen.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_ELEMENTWISEKERNEL_H
#define SHARDC_DIALECT_ELEMENTWISEKERNEL_H

#include <Eigen/Core>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace shardc::elementwise {

/// Recomputes with `exact` the elements where `x` is below `threshold`.
/// Where an op's vectorized path is inexact for rare inputs (Eigen's SIMD
/// exp clamps at -88.4, its log reads a subnormal as the smallest normal)
/// while the scalar path at a tensor's tail is right, an element's result
/// would depend on its position; one compare per element fixes them.
///
/// An element equal to the previous one recomputed reuses its result: a
/// causal mask's -1e9 shifted by a row's max fills half of every attention
/// row with one value, and glibc's expf takes a slow underflow path there.
///
/// The compares run a chunk at a time as vector code: a chunk with no
/// element below the threshold (most of them) is skipped, and a chunk whose
/// elements are all one value below it (a masked run) is filled with that
/// value's result; only the other chunks go element by element. Every
/// element gets what the element-by-element loop gives it.
inline void fixBelow(const float *x, float *y, int64_t n, float threshold,
                     float (*exact)(float)) {
  // Compared as bits: -0 and 0 differ, a NaN equals its own bits.
  uint32_t lastBits = 0;
  float lastY = 0;
  bool haveLast = false;
  auto resultOf = [&](uint32_t bits, float value) {
    if (!haveLast || bits != lastBits) {
      lastBits = bits;
      lastY = exact(value);
      haveLast = true;
    }
    return lastY;
  };
  auto fixOne = [&](int64_t i) {
    if (!(x[i] < threshold))
      return;
    uint32_t bits;
    std::memcpy(&bits, &x[i], sizeof bits);
    y[i] = resultOf(bits, x[i]);
  };
  constexpr int64_t kChunk = 64;
  int64_t i = 0;
  for (; i + kChunk <= n; i += kChunk) {
    const float *xs = x + i;
    int32_t below = 0;
    for (int64_t j = 0; j < kChunk; ++j)
      below += xs[j] < threshold ? 1 : 0;
    if (below == 0)
      continue;
    uint32_t first;
    std::memcpy(&first, xs, sizeof first);
    uint32_t differ = 0;
    for (int64_t j = 0; j < kChunk; ++j) {
      uint32_t bits;
      std::memcpy(&bits, &xs[j], sizeof bits);
      differ |= bits ^ first;
    }
    if (below == kChunk && differ == 0) {
      float value = resultOf(first, xs[0]);
      std::fill_n(y + i, kChunk, value);
      continue;
    }
    for (int64_t j = 0; j < kChunk; ++j)
      fixOne(i + j);
  }
  for (; i < n; ++i)
    fixOne(i);
}

/// Unary op `OpT` on `n` contiguous f32 elements.
///
/// Where the op recomputes elements below a threshold, a chunk of 64
/// elements that are all one value below it (a causal mask's run) is
/// filled with that value's exact result without running the vector path
/// on it: Eigen's vector exp clamps such an element to -88.4 and makes a
/// subnormal of it, which costs the core a microcode assist per vector
/// (half of the attention's exp time), only for fixBelow to overwrite it.
/// The other chunks run the vector path in runs that start at multiples of
/// 64 elements, so every vector covers the elements it covers over the
/// whole array, and give the same bits.
template <typename OpT>
void computeUnary(const float *in, float *out, int64_t n) {
  if (n == 0)
    return;
  auto vectorPath = [&](int64_t begin, int64_t end) {
    if (end <= begin)
      return;
    Eigen::Map<const Eigen::ArrayXf> x(in + begin, end - begin);
    Eigen::Map<Eigen::ArrayXf> y(out + begin, end - begin);
    y = OpT::computeElements(x);
    if constexpr (OpT::kHasExactBelow)
      fixBelow(in + begin, out + begin, end - begin, OpT::kExactBelow,
               &OpT::computeExactElement);
  };
  if constexpr (!OpT::kHasExactBelow) {
    vectorPath(0, n);
  } else {
    constexpr int64_t kChunk = 64;
    int64_t runStart = 0;
    // The last filled value and its result: a mask fills many chunks with
    // one value, and glibc's expf takes a slow underflow path for it.
    uint32_t lastBits = 0;
    float lastY = 0;
    bool haveLast = false;
    for (int64_t i = 0; i + kChunk <= n; i += kChunk) {
      const float *xs = in + i;
      uint32_t first;
      std::memcpy(&first, xs, sizeof first);
      int32_t below = 0;
      uint32_t differ = 0;
      for (int64_t j = 0; j < kChunk; ++j) {
        uint32_t bits;
        std::memcpy(&bits, &xs[j], sizeof bits);
        below += xs[j] < OpT::kExactBelow ? 1 : 0;
        differ |= bits ^ first;
      }
      if (below != kChunk || differ != 0)
        continue;
      vectorPath(runStart, i);
      if (!haveLast || first != lastBits) {
        lastBits = first;
        lastY = OpT::computeExactElement(xs[0]);
        haveLast = true;
      }
      std::fill_n(out + i, kChunk, lastY);
      runStart = i + kChunk;
    }
    vectorPath(runStart, n);
  }
}

/// Whether binary op `OpT` computes on elements of type `T`: f32, and i32
/// and i64 where it is declared with `integers`.
template <typename OpT, typename T> constexpr bool computesBinary() {
  if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>)
    return OpT::kAcceptsIntegers;
  return std::is_same_v<T, float>;
}

/// Binary op `OpT` on `n` contiguous elements of type `T` (one
/// computesBinary accepts). Integers take the op's integer kernel, or else
/// its formula on their unsigned bits, so that overflow wraps around
/// (signed overflow would be undefined behaviour).
template <typename OpT, typename T>
void computeBinary(const T *lhs, const T *rhs, T *out, int64_t n) {
  static_assert(computesBinary<OpT, T>(), "the op does not compute T");
  if (n == 0)
    return;
  if constexpr (std::is_same_v<T, float>) {
    Eigen::Map<const Eigen::ArrayXf> a(lhs, n), b(rhs, n);
    Eigen::Map<Eigen::ArrayXf> y(out, n);
    y = OpT::computeElements(a, b);
  } else if constexpr (OpT::kHasIntegerKernel) {
    using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
    Eigen::Map<const Array> a(lhs, n), b(rhs, n);
    Eigen::Map<Array> y(out, n);
    y = OpT::computeIntegerElements(a, b);
  } else {
    using Unsigned = std::make_unsigned_t<T>;
    using Array = Eigen::Array<Unsigned, Eigen::Dynamic, 1>;
    Eigen::Map<const Array> a(reinterpret_cast<const Unsigned *>(lhs), n);
    Eigen::Map<const Array> b(reinterpret_cast<const Unsigned *>(rhs), n);
    Eigen::Map<Array> y(reinterpret_cast<Unsigned *>(out), n);
    y = OpT::computeElements(a, b);
  }
}

} // namespace shardc::elementwise

#endif // SHARDC_DIALECT_ELEMENTWISEKERNEL_H

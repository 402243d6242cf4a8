//===- RandomTensor.h - deterministic random inputs -------------*- C++ -*-===//
//
// When a user runs a model without giving inputs, each input is filled with
// reproducible pseudo-random numbers, so that `shardc run` and `shardc
// simulate` (and a NumPy script) see exactly the same values on any machine.
//
// Definition (everything is unsigned 64-bit, wrapping):
//
//   fnv1a64(name):  h = 0xcbf29ce484222325;
//                   for each byte b of name: h = (h ^ b) * 0x100000001b3
//   state = seed ^ fnv1a64(name)
//   element i (row-major, i = 0, 1, ...) is the (i+1)-th output of SplitMix64
//   started at `state`:
//       z = state + (i + 1) * 0x9e3779b97f4a7c15
//       z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
//       z = (z ^ (z >> 27)) * 0x94d049bb133111eb
//       z = z ^ (z >> 31)
//   value_i = float((int64(z >> 40) - 2^23) * 2^-23)
//
// The top 24 bits give a uniform float in [-1, 1) on a grid of 2^-23; every
// step is exact in f32, so the result does not depend on the platform's
// floating-point behaviour. The same values in plain Python (the gtest
// checks this transcription bit for bit):
//
//   M = 2**64 - 1
//   h = 0xcbf29ce484222325
//   for b in name.encode(): h = ((h ^ b) * 0x100000001b3) & M
//   s = seed ^ h
//   def value(i):
//     z = (s + (i + 1) * 0x9e3779b97f4a7c15) & M
//     z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
//     z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
//     z ^= z >> 31
//     return ((z >> 40) - 2**23) * 2.0**-23
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_SUPPORT_RANDOMTENSOR_H
#define SHARDC_SUPPORT_RANDOMTENSOR_H

#include "shardc/Support/Tensor.h"

namespace shardc {

/// 64-bit FNV-1a of the bytes of `text`.
uint64_t fnv1a64(llvm::StringRef text);

/// The SplitMix64 output function (the finalizer applied to a state).
uint64_t splitmix64Mix(uint64_t z);

/// Maps 64 random bits to a float in [-1, 1) (uses the top 24 bits).
float bitsToUniformFloat(uint64_t bits);

/// Fills `out` with the values defined above, as if it were the row-major
/// elements of a tensor.
void fillRandom(llvm::MutableArrayRef<float> out, uint64_t seed,
                llvm::StringRef name);

/// A tensor of `shape` filled as described above. The shape must be valid
/// and fit `defaultMaxTensorBytes()`; if not, this exits with status 1 and a
/// message naming `name` (LLVM's fatal usage error). Callers that cannot
/// vouch for the shape should use `tryRandomTensor`.
Tensor randomTensor(llvm::ArrayRef<int64_t> shape, uint64_t seed,
                    llvm::StringRef name);

/// As `randomTensor`, but refuses a bad or too large shape with an error,
/// and of any computed `dtype`: integer tensors (i32, i64) hold ids in
/// [0, 16) and i1 tensors bits, drawn from the same stream as the floats
/// (the top bits of each draw), so a model's token ids index a small
/// vocabulary. bf16 and f16 hold the f32 values rounded; f64 comes out 0.
llvm::Expected<Tensor>
tryRandomTensor(llvm::ArrayRef<int64_t> shape, uint64_t seed,
                llvm::StringRef name,
                uint64_t maxBytes = defaultMaxTensorBytes(),
                DType dtype = DType::F32);

} // namespace shardc

#endif // SHARDC_SUPPORT_RANDOMTENSOR_H

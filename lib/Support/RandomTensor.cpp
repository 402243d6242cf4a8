//===- RandomTensor.cpp - deterministic random inputs ---------------------===//

#include "shardc/Support/RandomTensor.h"

#include "shardc/Support/HalfFloat.h"

#include "llvm/Support/ErrorHandling.h"

using namespace shardc;

uint64_t shardc::fnv1a64(llvm::StringRef text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

uint64_t shardc::splitmix64Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

float shardc::bitsToUniformFloat(uint64_t bits) {
  // |top - 2^23| <= 2^23 is exact in f32, and scaling by a power of two is
  // exact, so no rounding mode or FMA contraction can change the result.
  int32_t top = static_cast<int32_t>(bits >> 40) - (1 << 23);
  return static_cast<float>(top) * (1.0f / static_cast<float>(1 << 23));
}

void shardc::fillRandom(llvm::MutableArrayRef<float> out, uint64_t seed,
                        llvm::StringRef name) {
  constexpr uint64_t gamma = 0x9e3779b97f4a7c15ULL;
  uint64_t state = seed ^ fnv1a64(name);
  for (float &v : out) {
    state += gamma;
    v = bitsToUniformFloat(splitmix64Mix(state));
  }
}

Tensor shardc::randomTensor(llvm::ArrayRef<int64_t> shape, uint64_t seed,
                            llvm::StringRef name) {
  llvm::Expected<Tensor> t = tryRandomTensor(shape, seed, name);
  // A usage error (exit code 1, no crash report): callers that cannot
  // vouch for the shape should call tryRandomTensor.
  if (!t)
    llvm::reportFatalUsageError(llvm::Twine("input '") + name +
                                "': " + llvm::toString(t.takeError()));
  return std::move(*t);
}

llvm::Expected<Tensor> shardc::tryRandomTensor(llvm::ArrayRef<int64_t> shape,
                                               uint64_t seed,
                                               llvm::StringRef name,
                                               uint64_t maxBytes, DType dtype) {
  llvm::Expected<Tensor> t = Tensor::allocate(shape, dtype, maxBytes);
  if (!t)
    return t.takeError();
  if (dtype == DType::F32) {
    fillRandom(t->values(), seed, name);
    return t;
  }
  // Half floats: the f32 stream rounded to the type, so an f32 program and
  // its bf16 twin start from the same values up to that rounding.
  if (isHalfDType(dtype)) {
    llvm::Expected<Tensor> wide =
        tryRandomTensor(shape, seed, name, maxBytes, DType::F32);
    if (!wide)
      return wide.takeError();
    return narrowFromF32(*wide, dtype, maxBytes);
  }
  // Integers: the same stream, its top bits as an id in [0, 16) (or a bit
  // for i1), so a model's token ids index a small vocabulary.
  constexpr uint64_t gamma = 0x9e3779b97f4a7c15ULL;
  uint64_t state = seed ^ fnv1a64(name);
  for (int64_t i = 0, e = t->numElements(); i < e; ++i) {
    state += gamma;
    uint64_t bits = splitmix64Mix(state);
    switch (dtype) {
    case DType::I1:
      t->dataAs<uint8_t>()[i] = static_cast<uint8_t>(bits >> 63);
      break;
    case DType::I32:
      t->dataAs<int32_t>()[i] = static_cast<int32_t>(bits >> 60);
      break;
    case DType::I64:
      t->dataAs<int64_t>()[i] = static_cast<int64_t>(bits >> 60);
      break;
    default:
      break; // f64 stays zero: nothing computes it
    }
  }
  return t;
}

//===- HalfFloatTest.cpp - bf16 and f16 conversions -----------------------===//
//
// Exhaustive over the 65536 encodings of each type: widening is exact and
// narrowing gives it back; between two neighbours, the midpoint goes to the
// even one and anything off the midpoint to the nearer one.
//
//===----------------------------------------------------------------------===//

#include "shardc/Support/HalfFloat.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace shardc;

namespace {

class HalfFloatTest : public ::testing::TestWithParam<DType> {};

TEST_P(HalfFloatTest, WideningIsExactAndNarrowingGivesItBack) {
  DType dtype = GetParam();
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float x = halfToFloat(uint16_t(bits), dtype);
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(x, dtype), dtype)));
      continue;
    }
    EXPECT_EQ(floatToHalf(x, dtype), bits) << std::hex << bits;
  }
}

TEST_P(HalfFloatTest, RoundsToNearestTiesToEven) {
  DType dtype = GetParam();
  // Positive finite neighbours a < b (the sign is symmetric: checked below).
  for (uint32_t bits = 0; bits < 0x7fff; ++bits) {
    float a = halfToFloat(uint16_t(bits), dtype);
    float b = halfToFloat(uint16_t(bits + 1), dtype);
    if (!std::isfinite(b))
      break;
    float mid = a + (b - a) / 2; // exact: the types have < 24 bits
    uint16_t even = (bits % 2 == 0) ? bits : bits + 1;
    ASSERT_EQ(floatToHalf(mid, dtype), even) << std::hex << bits;
    ASSERT_EQ(floatToHalf(-mid, dtype), even | 0x8000) << std::hex << bits;
    ASSERT_EQ(floatToHalf(std::nextafter(mid, 0.0f), dtype), bits)
        << std::hex << bits;
    ASSERT_EQ(floatToHalf(std::nextafter(mid, INFINITY), dtype), bits + 1)
        << std::hex << bits;
  }
}

TEST_P(HalfFloatTest, KeepsInfinitiesAndNaNs) {
  DType dtype = GetParam();
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(halfToFloat(floatToHalf(inf, dtype), dtype), inf);
  EXPECT_EQ(halfToFloat(floatToHalf(-inf, dtype), dtype), -inf);
  EXPECT_TRUE(std::isnan(halfToFloat(
      floatToHalf(std::numeric_limits<float>::quiet_NaN(), dtype), dtype)));
}

INSTANTIATE_TEST_SUITE_P(Types, HalfFloatTest,
                         ::testing::Values(DType::BF16, DType::F16),
                         [](const auto &info) {
                           return std::string(dtypeName(info.param));
                         });

TEST(HalfFloat, Ranges) {
  // f16's largest finite value is 65504; from the midpoint to the next
  // step (65520) on, values round to infinity.
  EXPECT_EQ(halfToFloat(floatToHalf(65519.0f, DType::F16), DType::F16),
            65504.0f);
  EXPECT_TRUE(std::isinf(
      halfToFloat(floatToHalf(65520.0f, DType::F16), DType::F16)));
  // f16 subnormals: the smallest is 2^-24; half of it is a tie to zero.
  EXPECT_EQ(halfToFloat(floatToHalf(std::ldexp(1.0f, -24), DType::F16),
                        DType::F16),
            std::ldexp(1.0f, -24));
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25), DType::F16), 0);
  // bf16 has f32's range, and 8 bits of precision: 1 + 2^-8 is a tie that
  // goes to 1 (even), 1 + 3 * 2^-8 one that goes up to 1 + 2^-6.
  EXPECT_TRUE(std::isinf(halfToFloat(
      floatToHalf(std::numeric_limits<float>::max(), DType::BF16),
      DType::BF16)));
  EXPECT_EQ(halfToFloat(floatToHalf(3e38f, DType::BF16), DType::BF16),
            3.00405527e38f);
  EXPECT_EQ(halfToFloat(floatToHalf(1.0f + std::ldexp(1.0f, -8), DType::BF16),
                        DType::BF16),
            1.0f);
  EXPECT_EQ(
      halfToFloat(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -8), DType::BF16),
                  DType::BF16),
      1.0f + std::ldexp(1.0f, -6));
}

TEST(HalfFloat, TensorsKeepTheirWidth) {
  Tensor t = llvm::cantFail(Tensor::fromValues({2, 3}, {1, 2, 3, 4, 5, 1e-3f}));
  Tensor h = llvm::cantFail(narrowFromF32(t, DType::BF16));
  EXPECT_EQ(h.dtype(), DType::BF16);
  EXPECT_EQ(h.byteSize(), 12u);
  Tensor back = llvm::cantFail(widenToF32(h));
  EXPECT_EQ(back.values()[4], 5.0f);
  EXPECT_NEAR(back.values()[5], 1e-3f, 1e-3f / 256);
  EXPECT_EQ(h.elementAsDouble(1), 2.0);
}

TEST(HalfFloat, ReductionRoundsEachStep) {
  // 1 + 2^-8 + 2^-8 in bf16: each addition is a tie that goes back to 1,
  // as a ring all-reduce in bf16 would give.
  uint16_t acc[1] = {floatToHalf(1.0f, DType::BF16)};
  uint16_t x[1] = {floatToHalf(std::ldexp(1.0f, -8), DType::BF16)};
  reduceHalfElements(acc, x, 1, DType::BF16, /*isMax=*/false);
  reduceHalfElements(acc, x, 1, DType::BF16, /*isMax=*/false);
  EXPECT_EQ(halfToFloat(acc[0], DType::BF16), 1.0f);
  reduceHalfElements(acc, x, 1, DType::BF16, /*isMax=*/true);
  EXPECT_EQ(halfToFloat(acc[0], DType::BF16), 1.0f);
}

} // namespace

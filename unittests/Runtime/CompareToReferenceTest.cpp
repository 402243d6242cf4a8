//===- CompareToReferenceTest.cpp - sharded results vs the reference ------===//

#include "shardc/Runtime/ShardedExecution.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace shardc;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

Tensor tensor(llvm::ArrayRef<float> values) {
  return llvm::cantFail(
      Tensor::fromValues({static_cast<int64_t>(values.size())}, values));
}

TEST(CompareToReferenceTest, FiniteValuesGiveTheNormwiseRelativeError) {
  auto [rel, abs] = compareToReference(tensor({1, 2, 4.5}), tensor({1, 2, 4}));
  EXPECT_DOUBLE_EQ(abs, 0.5);
  EXPECT_DOUBLE_EQ(rel, 0.125);
  // All-zero references give the absolute error.
  EXPECT_DOUBLE_EQ(compareToReference(tensor({0, 0.25}), tensor({0, 0})).first,
                   0.25);
}

TEST(CompareToReferenceTest, NonFiniteValuesMatchTheirOwnClass) {
  // The same NaN and overflows in both: no error, and the finite elements
  // alone set the scale.
  NonFiniteMismatch mismatch;
  auto [rel, abs] =
      compareToReference(tensor({kNaN, kInf, -kInf, 2.2f}),
                         tensor({kNaN, kInf, -kInf, 2}), &mismatch);
  EXPECT_NEAR(abs, 0.2, 1e-6);
  EXPECT_NEAR(rel, 0.1, 1e-6);
  EXPECT_EQ(mismatch.count, 0);
}

TEST(CompareToReferenceTest, NonFiniteValuesInOneOnlyAreAMismatch) {
  NonFiniteMismatch mismatch;
  auto [rel, abs] =
      compareToReference(tensor({1, kNaN, kInf, -kInf, kNaN}),
                         tensor({1, 2, kNaN, kInf, kNaN}), &mismatch);
  EXPECT_TRUE(std::isinf(rel));
  EXPECT_TRUE(std::isinf(abs));
  EXPECT_EQ(mismatch.count, 3);
  EXPECT_EQ(mismatch.firstIndex, 1);
  EXPECT_TRUE(std::isnan(mismatch.got));
  EXPECT_EQ(mismatch.want, 2.0f);
  // A NaN where the reference has a finite value is no match either way
  // round, and without the out-parameter the errors say the same.
  EXPECT_TRUE(
      std::isinf(compareToReference(tensor({3}), tensor({kNaN})).first));
}

} // namespace

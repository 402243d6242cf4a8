//===- NumericCheckTest.cpp - sharded results vs the reference ------------===//

#include "shardc/Support/NumericCheck.h"

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

// A key bias's gradient is zero in exact arithmetic (softmax ignores a
// per-row constant) and rounding noise in float32, different in the two
// programs: on its own scale that noise is a 100 % error, on its family's
// (the other gradients of the same backward pass) it is rounding.
TEST(CompareToReferenceTest, ExactZerosAreJudgedOnTheFamilyScale) {
  Tensor keyBiasGot = tensor({1.2e-11f, -3e-12f}),
         keyBiasWant = tensor({-4e-12f, 9e-12f});
  Tensor weightGot = tensor({0.5f, -0.25000003f}),
         weightWant = tensor({0.5f, -0.25f});
  std::vector<Tensor> family;
  family.push_back(keyBiasWant.clone());
  family.push_back(weightWant.clone());
  double scale = familyScale(family);
  EXPECT_DOUBLE_EQ(scale, 0.5);
  EXPECT_GT(compareToReference(keyBiasGot, keyBiasWant).first, 1.0);
  auto [rel, abs] =
      compareToReference(keyBiasGot, keyBiasWant, nullptr, scale);
  EXPECT_NEAR(abs, 1.6e-11, 1e-15);
  EXPECT_NEAR(rel, 1.6e-11 / (kFamilyScaleFloor * 0.5), 1e-12);
  EXPECT_LT(rel, 1e-5);
  EXPECT_LT(compareToReference(weightGot, weightWant, nullptr, scale).first,
            1e-6);
}

// The floor does not hide a real error: a tensor 100x smaller than its
// family's largest that is off by a factor 2 (a missing all_reduce over two
// devices) is still far beyond any tolerance, and a tensor at least as
// large as the floor is judged on its own magnitude exactly as before.
TEST(CompareToReferenceTest, TheFamilyFloorStillCatchesWrongValues) {
  Tensor want = tensor({0.01f, -0.02f}), halved = tensor({0.005f, -0.01f});
  double scale = 100;
  EXPECT_NEAR(compareToReference(halved, want, nullptr, scale).first, 0.01,
              1e-9);
  Tensor big = tensor({4, -8}), bigHalved = tensor({2, -4});
  EXPECT_DOUBLE_EQ(compareToReference(bigHalved, big, nullptr, scale).first,
                   compareToReference(bigHalved, big).first);
  Tensor nonFinite = tensor({kNaN, -kInf, -3});
  EXPECT_DOUBLE_EQ(familyScale(nonFinite), 3);
}

TEST(CompareToReferenceTest, DifferentShapesAreAnInfiniteError) {
  auto [rel, abs] = compareToReference(tensor({1, 2}), tensor({1, 2, 3}));
  EXPECT_TRUE(std::isinf(rel));
  EXPECT_TRUE(std::isinf(abs));
}

// An element the probes move (an Adam parameter whose gradient is rounding
// noise) is excused up to kSensitivityMargin times its own movement; the
// rest of the tensor keeps the tolerance.
TEST(ExcusedToleranceTest, OnlyElementsThatMoveThemselvesAreExcused) {
  Tensor want = tensor({1, 1, 1, 1});
  std::vector<double> movement(4, 0.0);
  noteElementMovement(tensor({1, 1.01f, 1, 1}), want, movement);
  EXPECT_NEAR(movement[1], 0.01, 1e-6);
  EXPECT_EQ(movement[0], 0.0);
  // The noisy element is 0.05 off: within 10x its movement of 0.01.
  Tensor noisy = tensor({1, 1.05f, 1, 1});
  EXPECT_NEAR(excusedTolerance(noisy, want, movement, 1, 1e-5), 0.05, 1e-6);
  // A well-conditioned element off by 1e-3 is not explained: the tolerance
  // stays, and the tensor fails at it.
  Tensor wrong = tensor({1.001f, 1.05f, 1, 1});
  EXPECT_EQ(excusedTolerance(wrong, want, movement, 1, 1e-5), 1e-5);
  // Nor is the noisy element beyond 10x its movement.
  Tensor tooFar = tensor({1, 1.2f, 1, 1});
  EXPECT_EQ(excusedTolerance(tooFar, want, movement, 1, 1e-5), 1e-5);
}

// Each probe moves every nonzero finite element by exactly one ulp; probe 0
// alternates the direction, the others hash it.
TEST(PerturbByOneUlpTest, ProbesMoveEachElementOneUlp) {
  Tensor t = tensor({1, 2, 3, 0, kInf, 5, 6, 7});
  for (unsigned probe = 0; probe < kSensitivityProbes; ++probe) {
    Tensor moved = perturbByOneUlp(t, std::nullopt, probe);
    for (int64_t i = 0; i < t.numElements(); ++i) {
      float x = t.data()[i], y = moved.data()[i];
      if (x == 0 || std::isinf(x))
        EXPECT_EQ(x, y);
      else
        EXPECT_TRUE(y == std::nextafter(x, kInf) ||
                    y == std::nextafter(x, -kInf));
    }
  }
  Tensor alternating = perturbByOneUlp(t);
  EXPECT_GT(alternating.data()[0], 1.0f);
  EXPECT_LT(alternating.data()[1], 2.0f);
}

} // namespace

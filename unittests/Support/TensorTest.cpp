//===- TensorTest.cpp - Tensor allocation limits and helpers --------------===//

#include "shardc/Support/Tensor.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace shardc;

namespace {

std::string errorText(llvm::Error err) {
  return llvm::toString(std::move(err));
}

TEST(TensorTest, AllocateZeroFilledWithLayout) {
  Tensor t = llvm::cantFail(Tensor::allocate({2, 3, 4}));
  EXPECT_EQ(t.rank(), 3);
  EXPECT_EQ(t.numElements(), 24);
  EXPECT_EQ(t.byteSize(), 96u);
  EXPECT_EQ(t.dtype(), DType::F32);
  EXPECT_EQ(t.strides(), (llvm::SmallVector<int64_t>{12, 4, 1}));
  for (float v : t.values())
    EXPECT_EQ(v, 0.0f);
  t.at({1, 2, 3}) = 5;
  EXPECT_EQ(t.data()[23], 5.0f);
  EXPECT_EQ(t.describe(), "tensor<2x3x4xf32>");
}

// Every tensor's storage starts on a kStorageAlignment boundary, whatever
// its size, dtype or allocator path: the vectorized kernels' rounding then
// depends only on an element's position (Tensor.h).
TEST(TensorTest, StorageIsAlignedAndZeroFilled) {
  for (DType dtype : {DType::F32, DType::I1, DType::I32, DType::I64})
    for (int64_t n = 0; n < 300; n += 7) {
      Tensor zeroed = llvm::cantFail(Tensor::allocate({n}, dtype));
      Tensor raw = llvm::cantFail(Tensor::allocateUninitialized({n}, dtype));
      EXPECT_EQ(reinterpret_cast<uintptr_t>(zeroed.rawData()) %
                    kStorageAlignment,
                0u);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(raw.rawData()) % kStorageAlignment,
                0u);
      for (uint64_t i = 0; i < zeroed.byteSize(); ++i)
        ASSERT_EQ(zeroed.rawData()[i], 0);
      // Writing every byte must stay inside the storage (ASan checks).
      std::memset(raw.rawData(), 0xff, raw.byteSize());
      Tensor moved = std::move(raw);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(moved.rawData()) %
                    kStorageAlignment,
                0u);
      Tensor copy = moved.clone();
      EXPECT_EQ(reinterpret_cast<uintptr_t>(copy.rawData()) %
                    kStorageAlignment,
                0u);
    }
}

TEST(TensorTest, ScalarAndEmptyShapes) {
  Tensor s = Tensor::scalar(2.5f);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.numElements(), 1);
  EXPECT_EQ(s.at({}), 2.5f);
  Tensor z = llvm::cantFail(Tensor::allocate({3, 0, 2}));
  EXPECT_EQ(z.numElements(), 0);
  EXPECT_EQ(z.byteSize(), 0u);
}

TEST(TensorTest, AllocateRefusesNegativeDims) {
  llvm::Expected<Tensor> t = Tensor::allocate({4, -1});
  ASSERT_FALSE(t);
  std::string msg = errorText(t.takeError());
  EXPECT_NE(msg.find("[4, -1]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("negative"), std::string::npos) << msg;
}

TEST(TensorTest, AllocateRefusesOverflowingShapes) {
  // 2^62 * 4 elements overflow int64; 2^62 elements overflow the bytes.
  for (auto shape : {llvm::SmallVector<int64_t>{int64_t(1) << 62, 4},
                     llvm::SmallVector<int64_t>{int64_t(1) << 62},
                     llvm::SmallVector<int64_t>{
                         std::numeric_limits<int64_t>::max(), 2, 2}}) {
    llvm::Expected<Tensor> t = Tensor::allocate(
        shape, DType::F32, std::numeric_limits<uint64_t>::max());
    ASSERT_FALSE(t);
    std::string msg = errorText(t.takeError());
    EXPECT_NE(msg.find("overflow"), std::string::npos) << msg;
    EXPECT_NE(msg.find(formatShape(shape)), std::string::npos) << msg;
  }
}

TEST(TensorTest, AllocateRefusesShapesOverTheBudget) {
  llvm::Expected<Tensor> t = Tensor::allocate({1024, 1024}, DType::F32, 1000);
  ASSERT_FALSE(t);
  std::string msg = errorText(t.takeError());
  EXPECT_NE(msg.find("[1024, 1024]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("4194304 bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1000 bytes"), std::string::npos) << msg;
  // Exactly at the budget is fine.
  EXPECT_TRUE(static_cast<bool>(Tensor::allocate({250}, DType::F32, 1000)));
  // A budget-sized shape that the system cannot provide is an error, not an
  // abort.
  llvm::Expected<Tensor> huge = Tensor::allocate(
      {int64_t(1) << 60}, DType::F32, std::numeric_limits<uint64_t>::max());
  ASSERT_FALSE(huge);
  llvm::consumeError(huge.takeError());
}

TEST(TensorTest, DefaultBudgetIsSane) {
  uint64_t budget = defaultMaxTensorBytes();
  EXPECT_GT(budget, uint64_t(64) << 20);
  EXPECT_LE(budget, uint64_t(64) << 30);
}

TEST(TensorTest, DTypeTags) {
  EXPECT_EQ(dtypeName(DType::BF16), "bf16");
  EXPECT_EQ(dtypeByteWidth(DType::F64), 8u);
  EXPECT_EQ(dtypeByteWidth(DType::F16), 2u);
  Tensor t = llvm::cantFail(Tensor::allocate({2}, DType::F16));
  EXPECT_EQ(t.dtype(), DType::F16);
  EXPECT_EQ(t.describe(), "tensor<2xf16>");
}

TEST(TensorTest, MovesLeaveAnEmptyTensorAndCloneCopies) {
  Tensor a = llvm::cantFail(Tensor::fromValues({2, 2}, {1, 2, 3, 4}));
  const float *storage = a.data();
  Tensor b = std::move(a);
  EXPECT_EQ(b.data(), storage); // no copy
  EXPECT_EQ(a.numElements(), 0);
  EXPECT_EQ(a.shape(), llvm::ArrayRef<int64_t>({0}));
  Tensor c = b.clone();
  EXPECT_NE(c.data(), b.data());
  EXPECT_EQ(c.values(), b.values());
  a = std::move(c);
  EXPECT_EQ(a.at({1, 0}), 3.0f);
}

TEST(TensorTest, FromValuesChecksTheCount) {
  llvm::Expected<Tensor> t = Tensor::fromValues({2, 3}, {1, 2, 3});
  ASSERT_FALSE(t);
  EXPECT_NE(errorText(t.takeError()).find("[2, 3]"), std::string::npos);
}

TEST(TensorTest, ReshapeKeepsData) {
  Tensor t = llvm::cantFail(Tensor::fromValues({2, 3}, {0, 1, 2, 3, 4, 5}));
  ASSERT_FALSE(t.reshape({3, 2}));
  EXPECT_EQ(t.at({2, 1}), 5.0f);
  llvm::Error err = t.reshape({4, 2});
  ASSERT_TRUE(static_cast<bool>(err));
  llvm::consumeError(std::move(err));
}

TEST(TensorTest, SliceAndConcatenateRoundTrip) {
  Tensor t = llvm::cantFail(Tensor::allocate({4, 6, 2}));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data()[i] = static_cast<float>(i);
  for (int64_t dim = 0; dim < 3; ++dim) {
    int64_t parts = t.dim(dim) % 3 == 0 ? 3 : 2;
    llvm::SmallVector<Tensor> blocks;
    for (int64_t i = 0; i < parts; ++i)
      blocks.push_back(llvm::cantFail(trySliceBlock(t, dim, parts, i)));
    EXPECT_EQ(blocks[1].dim(dim), t.dim(dim) / parts);
    llvm::SmallVector<const Tensor *> ptrs;
    for (const Tensor &b : blocks)
      ptrs.push_back(&b);
    Tensor joined = llvm::cantFail(tryConcatenate(ptrs, dim));
    EXPECT_EQ(joined.shape(), t.shape());
    EXPECT_EQ(joined.values(), t.values()) << "dim " << dim;
  }
  // Block 1 of 2 along dim 1 holds columns 3..5.
  Tensor b = llvm::cantFail(trySliceBlock(t, 1, 2, 1));
  EXPECT_EQ(b.at({2, 0, 1}), t.at({2, 3, 1}));
}

TEST(TensorTest, SliceAndConcatenateReportErrors) {
  Tensor t = llvm::cantFail(Tensor::allocate({4, 6}));
  auto fails = [](llvm::Expected<Tensor> r) {
    if (r)
      return false;
    llvm::consumeError(r.takeError());
    return true;
  };
  EXPECT_TRUE(fails(trySliceBlock(t, 2, 2, 0)));
  EXPECT_TRUE(fails(trySliceBlock(t, 0, 3, 0)));
  EXPECT_TRUE(fails(trySliceBlock(t, 0, 2, 2)));
  EXPECT_TRUE(fails(trySliceBlock(t, 0, 0, 0)));
  Tensor u = llvm::cantFail(Tensor::allocate({3, 6}));
  Tensor v = llvm::cantFail(Tensor::allocate({4, 5}));
  EXPECT_FALSE(fails(tryConcatenate({&t, &u}, 0)));
  EXPECT_TRUE(fails(tryConcatenate({&t, &v}, 0)));
  EXPECT_TRUE(fails(tryConcatenate({}, 0)));
  EXPECT_TRUE(fails(tryConcatenate({&t, &u}, 0, /*maxBytes=*/16)));
}

TEST(TensorTest, Comparisons) {
  Tensor a = llvm::cantFail(Tensor::fromValues({3}, {1, 2, NAN}));
  Tensor b = llvm::cantFail(Tensor::fromValues({3}, {1, 2.5f, NAN}));
  EXPECT_FLOAT_EQ(maxAbsDifference(a, b), 0.5f);
  EXPECT_FALSE(allClose(a, b));
  EXPECT_TRUE(allClose(a, b, 0.0f, 0.5f));
  Tensor c = llvm::cantFail(Tensor::fromValues({1, 3}, {1, 2, NAN}));
  EXPECT_FALSE(allClose(a, c));
  EXPECT_TRUE(std::isinf(maxAbsDifference(a, c)));
  Tensor inf = llvm::cantFail(Tensor::fromValues({1}, {INFINITY}));
  EXPECT_EQ(maxAbsDifference(inf, inf), 0.0f);
}

} // namespace

TEST(TensorTest, IntegerAndBooleanStorageHasTheirWidth) {
  EXPECT_EQ(dtypeByteWidth(DType::I1), 1u);
  EXPECT_EQ(dtypeByteWidth(DType::I32), 4u);
  EXPECT_EQ(dtypeByteWidth(DType::I64), 8u);
  EXPECT_EQ(parseDType("i64"), DType::I64);
  EXPECT_EQ(parseDType("bool"), std::nullopt);
  Tensor b = llvm::cantFail(Tensor::allocate({3, 5}, DType::I1));
  EXPECT_EQ(b.byteSize(), 15u);
  EXPECT_EQ(b.elementByteWidth(), 1u);
  EXPECT_NE(b.dataAs<uint8_t>(), nullptr);
  EXPECT_EQ(b.dataAs<int32_t>(), nullptr);
  EXPECT_EQ(b.valuesAs<float>().size(), 0u);
  EXPECT_EQ(b.describe(), "tensor<3x5xi1>");
  Tensor l = llvm::cantFail(Tensor::allocate({2, 3}, DType::I64));
  EXPECT_EQ(l.byteSize(), 48u);
  // The byte budget counts the dtype's width.
  EXPECT_FALSE(static_cast<bool>(Tensor::allocate({10}, DType::I64, 79)));
  EXPECT_TRUE(static_cast<bool>(Tensor::allocate({79}, DType::I1, 79)));
  // Booleans are stored as 0 or 1.
  Tensor m = llvm::cantFail(Tensor::fromValuesAs<uint8_t>({3}, {0, 5, 1}));
  EXPECT_EQ(m.valuesAs<uint8_t>(), llvm::ArrayRef<uint8_t>({0, 1, 1}));
  // Float values do not fill an integer tensor.
  EXPECT_FALSE(static_cast<bool>(Tensor::fromValues({1}, {1.0f}, DType::I32)));
}

TEST(TensorTest, BlocksAndComparisonsOfIntegerTensors) {
  Tensor t = llvm::cantFail(
      Tensor::fromValuesAs<int64_t>({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7}));
  Tensor right = llvm::cantFail(trySliceBlock(t, 1, 2, 1));
  EXPECT_EQ(right.dtype(), DType::I64);
  EXPECT_EQ(right.valuesAs<int64_t>(), llvm::ArrayRef<int64_t>({2, 3, 6, 7}));
  Tensor left = llvm::cantFail(trySliceBlock(t, 1, 2, 0));
  const Tensor *parts[] = {&left, &right};
  Tensor back = llvm::cantFail(tryConcatenate(parts, 1));
  EXPECT_TRUE(allClose(back, t, 0, 0));
  EXPECT_EQ(maxAbsDifference(back, t), 0.0f);
  // Different dtypes never compare equal and do not concatenate.
  Tensor f = llvm::cantFail(Tensor::allocate({2, 2}));
  const Tensor *mixed[] = {&left, &f};
  EXPECT_FALSE(static_cast<bool>(tryConcatenate(mixed, 1)));
  EXPECT_FALSE(allClose(f, left));
  back.dataAs<int64_t>()[3] = 100;
  EXPECT_EQ(maxAbsDifference(back, t), 97.0f);
  EXPECT_EQ(countNonFinite(back), 0);
}

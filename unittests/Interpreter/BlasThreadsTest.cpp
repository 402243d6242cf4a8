//===- BlasThreadsTest.cpp - GEMMs from several threads at once -----------===//
//
// The threads backend runs one interpreter per device thread, all calling
// OpenBLAS concurrently. Debian's OpenBLAS is the pthreads build, which
// locks its shared buffer pool (USE_THREAD implies locking since 0.3.7), so
// concurrent calls are safe; with its thread count at 1 each call computes
// in the caller's thread. This checks both claims where they matter: many
// threads multiplying at once get exactly the single-threaded answer, with
// 1 BLAS thread and with 2 (where OpenBLAS serializes the callers).
//
//===----------------------------------------------------------------------===//

#include "TestHelpers.h"

#include "shardc/Interpreter/BlasThreads.h"

#include <atomic>
#include <thread>

using namespace mlir;
using namespace shardc;
using namespace shardc::testing;

namespace {

class BlasThreadsTest : public InterpreterTestBase {};

TEST_F(BlasThreadsTest, ThreadCountIsSettable) {
  int before = getBlasThreads();
  setBlasThreads(1);
  EXPECT_EQ(getBlasThreads(), 1);
  setBlasThreads(0); // counts as 1
  EXPECT_EQ(getBlasThreads(), 1);
  setBlasThreads(before);
  EXPECT_EQ(getBlasThreads(), before);
  EXPECT_NE(getBlasConfig().find("OpenBLAS"), std::string::npos);
}

TEST_F(BlasThreadsTest, ConcurrentGemmsMatchSerialOnes) {
  // Shapes past OpenBLAS's small-matrix paths, in both operand layouts
  // (matmul, and a dot_general reading its rhs transposed).
  auto module = parse(R"mlir(
    func.func @f(%a: tensor<192x160xf32>, %b: tensor<160x224xf32>,
                 %bt: tensor<224x160xf32>) -> tensor<192x224xf32> {
      %m = shardc.matmul %a, %b : (tensor<192x160xf32>, tensor<160x224xf32>) -> tensor<192x224xf32>
      %d = shardc.dot_general %a, %bt batch = [] x [], contract = [1] x [1] : (tensor<192x160xf32>, tensor<224x160xf32>) -> tensor<192x224xf32>
      %s = shardc.add %m, %d : tensor<192x224xf32>
      return %s : tensor<192x224xf32>
    }
  )mlir");
  ASSERT_TRUE(module);
  Operation *matmul = firstOp(*module);
  Operation *dot = matmul->getNextNode();
  constexpr int kThreads = 6;
  std::vector<Tensor> a, b, bt;
  for (int t = 0; t < kThreads; ++t) {
    std::string n = std::to_string(t);
    a.push_back(randomIn({192, 160}, "a" + n));
    b.push_back(randomIn({160, 224}, "b" + n));
    bt.push_back(randomIn({224, 160}, "bt" + n));
  }
  int before = getBlasThreads();
  for (int blasThreads : {1, 2}) {
    setBlasThreads(blasThreads);
    std::vector<Tensor> serialM, serialD;
    for (int t = 0; t < kThreads; ++t) {
      serialM.push_back(*evaluateTensorOp(matmul, {&a[t], &b[t]}));
      serialD.push_back(*evaluateTensorOp(dot, {&a[t], &bt[t]}));
    }
    std::atomic<int> mismatches{0}, failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (int round = 0; round < 30; ++round) {
          FailureOr<Tensor> m =
              evaluateTensorOp(matmul, {&a[t], &b[t]}, defaultMaxTensorBytes(),
                               /*verifyOp=*/false);
          FailureOr<Tensor> d =
              evaluateTensorOp(dot, {&a[t], &bt[t]}, defaultMaxTensorBytes(),
                               /*verifyOp=*/false);
          if (failed(m) || failed(d)) {
            ++failures;
            continue;
          }
          if (maxAbsDifference(*m, serialM[t]) != 0.0f ||
              maxAbsDifference(*d, serialD[t]) != 0.0f)
            ++mismatches;
        }
      });
    for (std::thread &t : threads)
      t.join();
    EXPECT_EQ(failures.load(), 0) << blasThreads << " BLAS threads";
    EXPECT_EQ(mismatches.load(), 0) << blasThreads << " BLAS threads";
  }
  setBlasThreads(before);
}

} // namespace

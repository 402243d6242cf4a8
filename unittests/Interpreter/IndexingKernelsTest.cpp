//===- IndexingKernelsTest.cpp - gather, scatter_add, integer arithmetic --===//
//
// The indexing kernels against hand-computed results (NumPy's take and
// np.add.at), their out-of-range ids (a diagnostic, or skipped), and the
// integer paths of add, sub and mul, which wrap around on overflow.
//
//===----------------------------------------------------------------------===//

#include "TestHelpers.h"

#include "shardc/Interpreter/Interpreter.h"

#include <limits>

using namespace mlir;
using namespace shardc;
using namespace shardc::testing;

namespace {

template <typename T>
Tensor tensorOf(ArrayRef<int64_t> shape, std::initializer_list<T> values) {
  Tensor t = llvm::cantFail(Tensor::allocate(shape, DTypeOf<T>::value));
  std::copy(values.begin(), values.end(), t.dataAs<T>());
  return t;
}

/// The (move-only) tensors as an argument list.
template <typename... Ts> std::vector<Tensor> argsOf(Ts &&...ts) {
  std::vector<Tensor> out;
  (out.push_back(std::move(ts)), ...);
  return out;
}

template <typename T> std::vector<T> valuesOf(const Tensor &t) {
  const T *p = t.dataAs<T>();
  EXPECT_NE(p, nullptr) << t.describe();
  return p ? std::vector<T>(p, p + t.numElements()) : std::vector<T>();
}

class IndexingTest : public InterpreterTestBase {
protected:
  /// Runs the single-result function in `text` on `args`.
  FailureOr<Tensor> run(llvm::StringRef text, std::vector<Tensor> args) {
    modules.push_back(parse(text));
    if (!modules.back())
      return failure();
    FailureOr<SmallVector<Tensor>> out =
        interpretFunction(getFunc(*modules.back()), args);
    if (failed(out))
      return failure();
    return std::move((*out)[0]);
  }
  SmallVector<OwningOpRef<ModuleOp>> modules;
};

TEST_F(IndexingTest, GatherTakesRowsAlongAnyAxis) {
  // table = [[0, 1, 2], [10, 11, 12]]; np.take(table, [[2, 0]], axis=1).
  FailureOr<Tensor> r = run(R"mlir(
func.func @f(%t: tensor<2x3xf32>, %i: tensor<1x2xi64>) -> tensor<2x1x2xf32> {
  %r = shardc.gather %t, %i axis = 1 : (tensor<2x3xf32>, tensor<1x2xi64>) -> tensor<2x1x2xf32>
  return %r : tensor<2x1x2xf32>
})mlir",
                            argsOf(tensorOf<float>({2, 3}, {0, 1, 2, 10, 11, 12}),
                             tensorOf<int64_t>({1, 2}, {2, 0})));
  ASSERT_TRUE(succeeded(r)) << diagnostics;
  EXPECT_EQ(valuesOf<float>(*r), (std::vector<float>{2, 0, 12, 10}));
}

TEST_F(IndexingTest, GatherOfIntegersAndSkippedIds) {
  // An i32 table; with mode "skip" the ids -1 and 3 give zeros.
  FailureOr<Tensor> r = run(R"mlir(
func.func @f(%t: tensor<3x2xi32>, %i: tensor<4xi32>) -> tensor<4x2xi32> {
  %r = shardc.gather %t, %i axis = 0 mode = "skip" : (tensor<3x2xi32>, tensor<4xi32>) -> tensor<4x2xi32>
  return %r : tensor<4x2xi32>
})mlir",
                            argsOf(tensorOf<int32_t>({3, 2}, {1, 2, 3, 4, 5, 6}),
                             tensorOf<int32_t>({4}, {2, -1, 3, 0})));
  ASSERT_TRUE(succeeded(r)) << diagnostics;
  EXPECT_EQ(valuesOf<int32_t>(*r),
            (std::vector<int32_t>{5, 6, 0, 0, 0, 0, 1, 2}));
}

TEST_F(IndexingTest, OutOfRangeIdIsADiagnostic) {
  FailureOr<Tensor> r = run(R"mlir(
func.func @f(%t: tensor<3x2xf32>, %i: tensor<2xi32>) -> tensor<2x2xf32> {
  %r = shardc.gather %t, %i axis = 0 : (tensor<3x2xf32>, tensor<2xi32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
})mlir",
                            argsOf(tensorOf<float>({3, 2}, {1, 2, 3, 4, 5, 6}),
                             tensorOf<int32_t>({2}, {0, -4})));
  EXPECT_TRUE(failed(r));
  EXPECT_NE(diagnostics.find("'shardc.gather' id -4 (element 1 of the ids) "
                             "is out of range [0, 3)"),
            std::string::npos)
      << diagnostics;
}

TEST_F(IndexingTest, ScatterAddAccumulatesRepeatedIds) {
  // np.add.at(table, [1, 1, 0], updates) on table = ones.
  FailureOr<Tensor> r = run(R"mlir(
func.func @f(%t: tensor<2x2xf32>, %i: tensor<3xi64>, %u: tensor<3x2xf32>) -> tensor<2x2xf32> {
  %r = shardc.scatter_add %t, %i, %u axis = 0 : (tensor<2x2xf32>, tensor<3xi64>, tensor<3x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
})mlir",
                            argsOf(tensorOf<float>({2, 2}, {1, 1, 1, 1}),
                             tensorOf<int64_t>({3}, {1, 1, 0}),
                             tensorOf<float>({3, 2}, {1, 2, 10, 20, 100, 200})));
  ASSERT_TRUE(succeeded(r)) << diagnostics;
  EXPECT_EQ(valuesOf<float>(*r), (std::vector<float>{101, 201, 12, 23}));
}

// A table computed in the function and dying at the scatter_add is updated
// in place (KernelOpInterface::updatesOperandInPlace); a table read again
// afterwards, or the function's input, keeps its values.
TEST_F(IndexingTest, ScatterAddUpdatesOnlyADyingTableInPlace) {
  modules.push_back(parse(R"mlir(
func.func @f(%t: tensor<2x2xf32>, %i: tensor<3xi64>, %u: tensor<3x2xf32>)
    -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %zero = shardc.constant dense<0.0> : tensor<2x2xf32>
  %a = shardc.scatter_add %zero, %i, %u axis = 0 : (tensor<2x2xf32>, tensor<3xi64>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %twice = shardc.add %t, %t : tensor<2x2xf32>
  %b = shardc.scatter_add %twice, %i, %u axis = 0 : (tensor<2x2xf32>, tensor<3xi64>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %c = shardc.scatter_add %t, %i, %u axis = 0 : (tensor<2x2xf32>, tensor<3xi64>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %again = shardc.mul %twice, %t : tensor<2x2xf32>
  return %a, %b, %c, %again : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
})mlir"));
  ASSERT_TRUE(modules.back()) << diagnostics;
  std::vector<Tensor> args = argsOf(
      tensorOf<float>({2, 2}, {1, 1, 1, 1}), tensorOf<int64_t>({3}, {1, 1, 0}),
      tensorOf<float>({3, 2}, {1, 2, 10, 20, 100, 200}));
  FailureOr<SmallVector<Tensor>> out =
      interpretFunction(getFunc(*modules.back()), args);
  ASSERT_TRUE(succeeded(out)) << diagnostics;
  EXPECT_EQ(valuesOf<float>((*out)[0]), (std::vector<float>{100, 200, 11, 22}));
  EXPECT_EQ(valuesOf<float>((*out)[1]), (std::vector<float>{102, 202, 13, 24}));
  EXPECT_EQ(valuesOf<float>((*out)[2]), (std::vector<float>{101, 201, 12, 23}));
  // %twice is read after its scatter_add: it was copied, not updated.
  EXPECT_EQ(valuesOf<float>((*out)[3]), (std::vector<float>{2, 2, 2, 2}));
  EXPECT_EQ(valuesOf<float>(args[0]), (std::vector<float>{1, 1, 1, 1}));
}

TEST_F(IndexingTest, ScatterAddSkipsOrRejectsOutOfRangeIds) {
  const char *text = R"mlir(
func.func @f(%t: tensor<2xf32>, %i: tensor<2xi32>, %u: tensor<2xf32>) -> tensor<2xf32> {
  %r = shardc.scatter_add %t, %i, %u axis = 0 MODE : (tensor<2xf32>, tensor<2xi32>, tensor<2xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
})mlir";
  auto args = [] {
    std::vector<Tensor> a;
    a.push_back(tensorOf<float>({2}, {0, 0}));
    a.push_back(tensorOf<int32_t>({2}, {1, 2}));
    a.push_back(tensorOf<float>({2}, {5, 7}));
    return a;
  };
  std::string skip = text, error = text;
  skip.replace(skip.find("MODE"), 4, "mode = \"skip\"");
  error.replace(error.find("MODE"), 4, "");
  FailureOr<Tensor> r = run(skip, args());
  ASSERT_TRUE(succeeded(r)) << diagnostics;
  EXPECT_EQ(valuesOf<float>(*r), (std::vector<float>{0, 5}));
  EXPECT_TRUE(failed(run(error, args())));
  EXPECT_NE(diagnostics.find("id 2 (element 1 of the ids) is out of range"),
            std::string::npos)
      << diagnostics;
}

TEST_F(IndexingTest, IntegerArithmeticWrapsAround) {
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  FailureOr<Tensor> r = run(R"mlir(
func.func @f(%a: tensor<3xi32>, %b: tensor<3xi32>) -> tensor<3xi32> {
  %s = shardc.add %a, %b : tensor<3xi32>
  %d = shardc.sub %s, %b : tensor<3xi32>
  %m = shardc.mul %d, %b : tensor<3xi32>
  return %m : tensor<3xi32>
})mlir",
                            argsOf(tensorOf<int32_t>({3}, {kMax, -7, kMin}),
                             tensorOf<int32_t>({3}, {1, 3, 2})));
  ASSERT_TRUE(succeeded(r)) << diagnostics;
  // (a + b - b) * b: kMax + 1 wraps to kMin and back; kMin * 2 wraps to 0.
  EXPECT_EQ(valuesOf<int32_t>(*r), (std::vector<int32_t>{kMax, -21, 0}));
}

TEST_F(IndexingTest, I64Arithmetic) {
  FailureOr<Tensor> r = run(R"mlir(
func.func @f(%a: tensor<2xi64>, %b: tensor<2xi64>) -> tensor<2xi64> {
  %m = shardc.mul %a, %b : tensor<2xi64>
  %s = shardc.sub %m, %a : tensor<2xi64>
  return %s : tensor<2xi64>
})mlir",
                            argsOf(tensorOf<int64_t>({2}, {int64_t(1) << 40, -3}),
                             tensorOf<int64_t>({2}, {4, 5})));
  ASSERT_TRUE(succeeded(r)) << diagnostics;
  EXPECT_EQ(valuesOf<int64_t>(*r),
            (std::vector<int64_t>{3 * (int64_t(1) << 40), -12}));
}

TEST_F(IndexingTest, IntegerDivMaxMinAreSigned) {
  // Signed, unlike add/sub/mul's wrapping bits: division truncates toward
  // zero, x / 0 is -1 and kMin / -1 is kMin (the values C++ leaves
  // undefined); max and min order negative values below positive ones.
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  modules.push_back(parse(R"mlir(
func.func @f(%a: tensor<5xi64>, %b: tensor<5xi64>) -> (tensor<5xi64>, tensor<5xi64>, tensor<5xi64>) {
  %d = shardc.div %a, %b : tensor<5xi64>
  %x = shardc.max %a, %b : tensor<5xi64>
  %n = shardc.min %a, %b : tensor<5xi64>
  return %d, %x, %n : tensor<5xi64>, tensor<5xi64>, tensor<5xi64>
})mlir"));
  ASSERT_TRUE(modules.back());
  FailureOr<SmallVector<Tensor>> out =
      interpretFunction(getFunc(*modules.back()),
                        argsOf(tensorOf<int64_t>({5}, {7, -7, 7, kMin, -3}),
                               tensorOf<int64_t>({5}, {2, 2, 0, -1, 5})));
  ASSERT_TRUE(succeeded(out)) << diagnostics;
  EXPECT_EQ(valuesOf<int64_t>((*out)[0]),
            (std::vector<int64_t>{3, -3, -1, kMin, 0}));
  EXPECT_EQ(valuesOf<int64_t>((*out)[1]),
            (std::vector<int64_t>{7, 2, 7, -1, 5}));
  EXPECT_EQ(valuesOf<int64_t>((*out)[2]),
            (std::vector<int64_t>{2, -7, 0, kMin, -3}));
}

TEST_F(IndexingTest, AxisIndexNeedsADevice) {
  // Without a communicator the interpreter cannot say where it runs.
  FailureOr<Tensor> r = run(R"mlir(
shardc.mesh @mesh ["x"=2]
func.func @f() -> tensor<i64> attributes {shardc.spmd} {
  %r = shardc.axis_index on @mesh axes = ["x"] : tensor<i64>
  return %r : tensor<i64>
})mlir",
                            argsOf());
  EXPECT_TRUE(failed(r));
  EXPECT_NE(diagnostics.find("axis_index needs a device mesh"),
            std::string::npos)
      << diagnostics;
}

TEST_F(IndexingTest, AxisIndexIsTheGroupIndexOnEveryDevice) {
  // On ["a"=2, "b"=3] device (a, b) is 3a + b; along ["b", "a"] (b most
  // major) its index is 2b + a, along ["a"] it is a.
  modules.push_back(parse(R"mlir(
shardc.mesh @mesh ["a"=2, "b"=3]
func.func @f() -> (tensor<i64>, tensor<i64>) attributes {shardc.spmd} {
  %ba = shardc.axis_index on @mesh axes = ["b", "a"] : tensor<i64>
  %a = shardc.axis_index on @mesh axes = ["a"] : tensor<i64>
  return %ba, %a : tensor<i64>, tensor<i64>
})mlir"));
  ASSERT_TRUE(modules.back());
  Block &body = getFunc(*modules.back()).getBody().front();
  Operation *ba = &body.front(), *a = ba->getNextNode();
  for (int64_t device = 0; device < 6; ++device) {
    int64_t ca = device / 3, cb = device % 3;
    FailureOr<Tensor> rba = evaluateOnDevice(ba, device);
    FailureOr<Tensor> ra = evaluateOnDevice(a, device);
    ASSERT_TRUE(succeeded(rba) && succeeded(ra)) << diagnostics;
    EXPECT_EQ(valuesOf<int64_t>(*rba), (std::vector<int64_t>{2 * cb + ca}));
    EXPECT_EQ(valuesOf<int64_t>(*ra), (std::vector<int64_t>{ca}));
  }
  EXPECT_TRUE(failed(evaluateOnDevice(ba, 6)));
  EXPECT_NE(diagnostics.find("device id 6 is outside mesh @mesh of 6 devices"),
            std::string::npos)
      << diagnostics;
}

} // namespace

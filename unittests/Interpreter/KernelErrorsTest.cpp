//===- KernelErrorsTest.cpp - kernels report, never crash -----------------===//

#include "TestHelpers.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::testing;
using llvm::ArrayRef;
using llvm::SmallVector;

namespace {

using KernelsTest = KernelTestBase;

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST_F(KernelsTest, RefusesOtherDTypes) {
  Tensor x = randomIn({4}, "x");
  OwningOpRef<ModuleOp> m = parse(R"(
    func.func @f(%a: tensor<4xf64>) -> tensor<4xf64> {
      %r = shardc.relu %a : tensor<4xf64>
      return %r : tensor<4xf64>
    })");
  ASSERT_TRUE(m);
  const Tensor *args[] = {&x};
  EXPECT_TRUE(failed(evaluateTensorOp(firstOp(*m), args)));
  EXPECT_NE(diagnostics.find("only f32, bf16, f16, i1, i32 and i64 are "
                             "executed ('f64' is not supported"),
            std::string::npos)
      << diagnostics;
}

TEST_F(KernelsTest, RefusesOperandsThatDoNotMatchTheOp) {
  Tensor x = randomIn({4}, "x");
  OwningOpRef<ModuleOp> m = parse(R"(
    func.func @f(%a: tensor<8xf32>) -> tensor<8xf32> {
      %r = shardc.exp %a : tensor<8xf32>
      return %r : tensor<8xf32>
    })");
  ASSERT_TRUE(m);
  const Tensor *args[] = {&x};
  EXPECT_TRUE(failed(evaluateTensorOp(firstOp(*m), args)));
  EXPECT_NE(diagnostics.find("operand #0 is tensor<4xf32> but the op "
                             "expects 'tensor<8xf32>'"),
            std::string::npos)
      << diagnostics;
  diagnostics.clear();
  EXPECT_TRUE(failed(evaluateTensorOp(firstOp(*m), {})));
  EXPECT_NE(diagnostics.find("expects 1 operand tensors, got 0"),
            std::string::npos)
      << diagnostics;
}

TEST_F(KernelsTest, RefusesResultsOverTheBudget) {
  Tensor x = randomIn({4}, "x");
  FailureOr<Tensor> r =
      evalOp({&x},
             "shardc.broadcast_in_dim %a dims = [1] : (tensor<4xf32>) -> "
             "tensor<1024x4xf32>",
             {1024, 4}, /*maxBytes=*/1024);
  EXPECT_TRUE(failed(r));
  EXPECT_NE(diagnostics.find("needs 16384 bytes, more than the limit of "
                             "1024 bytes"),
            std::string::npos)
      << diagnostics;
}

TEST_F(KernelsTest, CollectivesAreNotLocalKernels) {
  Tensor x = randomIn({4, 2}, "x");
  FailureOr<Tensor> r =
      evalOp({&x},
             "shardc.all_gather %a on @mesh axes = [\"x\"] dim = 0 : "
             "tensor<4x2xf32> -> tensor<8x2xf32>",
             {8, 2});
  EXPECT_TRUE(failed(r));
  EXPECT_NE(diagnostics.find("not a local kernel"), std::string::npos)
      << diagnostics;
}

/// Unverified IR must be reported, not crash a kernel: build ops whose
/// operands, attributes or result types contradict each other.
TEST_F(KernelsTest, InconsistentUnverifiedOpsAreReported) {
  OpBuilder b(&context);
  auto loc = b.getUnknownLoc();
  auto t23 = RankedTensorType::get({2, 3}, b.getF32Type());
  auto t99 = RankedTensorType::get({9, 9}, b.getF32Type());
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(loc, "f", b.getFunctionType({t23, t23}, {}));
  module->push_back(func);
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  Value a = entry->getArgument(0), c = entry->getArgument(1);
  Tensor x = randomIn({2, 3}, "x");
  const Tensor *one[] = {&x};
  const Tensor *two[] = {&x, &x};

  struct Case {
    const char *what;
    StringRef opName;
    SmallVector<Value> operands;
    SmallVector<NamedAttribute> attrs;
    Type result;
    ArrayRef<const Tensor *> tensors;
  };
  auto dims = [&](ArrayRef<int64_t> d) { return b.getDenseI64ArrayAttr(d); };
  std::vector<Case> cases = {
      {"matmul with a wrong result",
       MatmulOp::getOperationName(),
       {a, c},
       {},
       t99,
       two},
      {"transpose with a bad permutation",
       TransposeOp::getOperationName(),
       {a},
       {b.getNamedAttr("permutation", dims({0, 0}))},
       t23,
       one},
      {"reduce over a missing dim",
       ReduceSumOp::getOperationName(),
       {a},
       {b.getNamedAttr("dims", dims({5}))},
       t23,
       one},
      {"broadcast with repeated dims",
       BroadcastInDimOp::getOperationName(),
       {a},
       {b.getNamedAttr("dims", dims({0, 0}))},
       t23,
       one},
      {"reshape changing the count",
       ReshapeOp::getOperationName(),
       {a},
       {},
       t99,
       one},
      {"dot_general with unpaired lists",
       DotGeneralOp::getOperationName(),
       {a, c},
       {b.getNamedAttr("lhs_batch_dims", dims({0})),
        b.getNamedAttr("rhs_batch_dims", dims({})),
        b.getNamedAttr("lhs_contracting_dims", dims({7})),
        b.getNamedAttr("rhs_contracting_dims", dims({1}))},
       t99,
       two},
      {"add with a wrong result",
       AddOp::getOperationName(),
       {a, c},
       {},
       t99,
       two},
      {"relu without operands", ReluOp::getOperationName(), {}, {}, t23, {}},
      {"transpose without its attribute",
       TransposeOp::getOperationName(),
       {a},
       {},
       t23,
       one},
  };
  for (const Case &k : cases) {
    OperationState state(loc, k.opName);
    state.addOperands(k.operands);
    state.addAttributes(k.attrs);
    state.addTypes(k.result);
    Operation *op = b.create(state);
    diagnostics.clear();
    EXPECT_TRUE(failed(evaluateTensorOp(op, k.tensors))) << k.what;
    EXPECT_NE(diagnostics.find("error"), std::string::npos)
        << k.what << ": no diagnostic";
  }
}

} // namespace

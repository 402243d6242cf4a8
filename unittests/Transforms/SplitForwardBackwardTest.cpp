//===- SplitForwardBackwardTest.cpp - forward + backward = the VJP --------===//
//
// A hand-written VJP of the seed's MLP (its NumPy backward, in shardc ops),
// split in two: running forward, then backward on the residuals, must give
// exactly what the single function gives.
//
//===----------------------------------------------------------------------===//

#include "shardc/Transforms/SplitForwardBackward.h"
#include "shardc/Interpreter/Kernels.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Support/RandomTensor.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace shardc;

namespace {

// The backward here is not relu's exact derivative: it uses dz = dh * u
// (u = relu(z)) so it needs no mask op; it reads forward values all the
// same, which is what the split is about.
constexpr const char *kVjp = R"mlir(
func.func @vjp(%x: tensor<4x8xf32>, %w0: tensor<8x16xf32>, %w1: tensor<16x8xf32>,
               %dy: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16x8xf32>) {
  %z = shardc.matmul %x, %w0 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %u = shardc.relu %z : tensor<4x16xf32>
  %y = shardc.matmul %u, %w1 : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %ut = shardc.transpose %u permutation = [1, 0] : (tensor<4x16xf32>) -> tensor<16x4xf32>
  %dw1 = shardc.matmul %ut, %dy : (tensor<16x4xf32>, tensor<4x8xf32>) -> tensor<16x8xf32>
  %w1t = shardc.transpose %w1 permutation = [1, 0] : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %dh = shardc.matmul %dy, %w1t : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %dz = shardc.mul %dh, %u : tensor<4x16xf32>
  %xt = shardc.transpose %x permutation = [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %dw0 = shardc.matmul %xt, %dz : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  return %y, %dw0, %dw1 : tensor<4x8xf32>, tensor<8x16xf32>, tensor<16x8xf32>
}
)mlir";

TEST(SplitForwardBackwardTest, HalvesComposeToTheVjp) {
  MLIRContext ctx;
  ctx.getOrLoadDialect<ShardcDialect>();
  shardc::registerKernelModels(ctx);
  ctx.getOrLoadDialect<func::FuncDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kVjp, &ctx);
  ASSERT_TRUE(module);
  auto vjp = module->lookupSymbol<func::FuncOp>("vjp");
  FailureOr<ForwardBackwardSplit> split = splitForwardBackward(
      vjp, /*numPrimalArgs=*/3, /*numOutputs=*/1, "forward", "backward");
  ASSERT_TRUE(succeeded(split));
  // The forward half is x@w0, relu, @w1; only u crosses over (z is not
  // needed by the backward half, and x, w1 are arguments).
  EXPECT_EQ(split->numResiduals, 1u);
  EXPECT_EQ(split->forward.getNumResults(), 2u);
  EXPECT_EQ(split->backward.getNumArguments(), 3u + 1u + 1u);
  int forwardOps = 0;
  split->forward.walk([&](Operation *op) {
    forwardOps += op->getDialect() == ctx.getLoadedDialect<ShardcDialect>();
  });
  EXPECT_EQ(forwardOps, 3);

  SmallVector<Tensor> args;
  args.push_back(randomTensor({4, 8}, 1, "x"));
  args.push_back(randomTensor({8, 16}, 2, "w0"));
  args.push_back(randomTensor({16, 8}, 3, "w1"));
  args.push_back(randomTensor({4, 8}, 4, "dy"));
  FailureOr<SmallVector<Tensor>> whole = interpretFunction(vjp, args);
  ASSERT_TRUE(succeeded(whole));

  FailureOr<SmallVector<Tensor>> fwd =
      interpretFunction(split->forward, ArrayRef<Tensor>(args).take_front(3));
  ASSERT_TRUE(succeeded(fwd));
  SmallVector<Tensor> bwdArgs;
  for (int i = 0; i < 3; ++i)
    bwdArgs.push_back(args[i].clone());
  bwdArgs.push_back(std::move((*fwd)[1]));
  bwdArgs.push_back(args[3].clone());
  FailureOr<SmallVector<Tensor>> bwd =
      interpretFunction(split->backward, bwdArgs);
  ASSERT_TRUE(succeeded(bwd));

  auto same = [](const Tensor &a, const Tensor &b) {
    return a.shape() == b.shape() &&
           std::equal(a.data(), a.data() + a.numElements(), b.data());
  };
  EXPECT_TRUE(same((*fwd)[0], (*whole)[0]));
  EXPECT_TRUE(same((*bwd)[0], (*whole)[1]));
  EXPECT_TRUE(same((*bwd)[1], (*whole)[2]));
}

TEST(SplitForwardBackwardTest, CountsMustFit) {
  MLIRContext ctx;
  ctx.getOrLoadDialect<ShardcDialect>();
  shardc::registerKernelModels(ctx);
  ctx.getOrLoadDialect<func::FuncDialect>();
  std::string errors;
  ctx.getDiagEngine().registerHandler([&](Diagnostic &d) {
    errors += d.str();
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kVjp, &ctx);
  auto vjp = module->lookupSymbol<func::FuncOp>("vjp");
  EXPECT_TRUE(failed(splitForwardBackward(vjp, 5, 1, "f", "b")));
  EXPECT_NE(errors.find("do not fit"), std::string::npos) << errors;
}

} // namespace

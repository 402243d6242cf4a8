//===- SeededParametersTest.cpp - parameters drawn as models draw them ----===//
//
// A seeded deep model kept its scale only when its parameters were drawn by
// their role: a weight by its fan-in, a gain near one, a bias by the
// fan-in of what it is added to; data stays as drawn.
//
//===----------------------------------------------------------------------===//

#include "shardc/Analysis/SeededParameters.h"
#include "shardc/Dialect/ShardcDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace mlir;
using namespace shardc;

namespace {

class SeededParametersTest : public ::testing::Test {
protected:
  SeededParametersTest() {
    ctx.getOrLoadDialect<ShardcDialect>();
    ctx.getOrLoadDialect<func::FuncDialect>();
  }

  func::FuncOp parse(StringRef args, StringRef body, StringRef result) {
    std::string src = ("func.func @f(" + args + ") -> " + result + " {\n" +
                       body + "\n}\n")
                          .str();
    module = parseSourceString<ModuleOp>(src, &ctx);
    if (!module)
      return nullptr;
    return *module->getOps<func::FuncOp>().begin();
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
};

TEST_F(SeededParametersTest, WeightsByFanInGainsNearOneBiasesByTheirLayer) {
  func::FuncOp f = parse(
      "%x: tensor<8x64xf32>, %w: tensor<64x32xf32> {shardc.param}, "
      "%b: tensor<32xf32> {shardc.param}, %g: tensor<8x32xf32> {shardc.param}, "
      "%e: tensor<8x32xf32> {shardc.param}",
      "%h = shardc.matmul %x, %w : (tensor<8x64xf32>, tensor<64x32xf32>) -> "
      "tensor<8x32xf32>\n"
      "%bb = shardc.broadcast_in_dim %b dims = [1] : (tensor<32xf32>) -> "
      "tensor<8x32xf32>\n"
      "%y = shardc.add %h, %bb : tensor<8x32xf32>\n"
      "%z = shardc.mul %y, %g : tensor<8x32xf32>\n"
      "%r = shardc.relu %e : tensor<8x32xf32>\n"
      "%s = shardc.add %z, %r : tensor<8x32xf32>\n"
      "return %s : tensor<8x32xf32>",
      "tensor<8x32xf32>");
  ASSERT_TRUE(f);
  SeededInputScale x = getSeededInputScale(f, 0);
  EXPECT_EQ(x.scale, 1.0f);
  EXPECT_EQ(x.offset, 0.0f);
  EXPECT_EQ(x.reason, "data");

  SeededInputScale w = getSeededInputScale(f, 1);
  EXPECT_EQ(w.scale, 0.125f); // 1/sqrt(64)
  EXPECT_EQ(w.offset, 0.0f);
  EXPECT_EQ(w.reason, "fan-in 64");

  SeededInputScale b = getSeededInputScale(f, 2);
  EXPECT_EQ(b.scale, 0.125f);
  EXPECT_EQ(b.reason, "bias of fan-in 64");

  SeededInputScale g = getSeededInputScale(f, 3);
  EXPECT_EQ(g.scale, 0.1f);
  EXPECT_EQ(g.offset, 1.0f);
  EXPECT_EQ(g.reason, "gain");

  // Used otherwise (an embedding table, here a relu): as drawn.
  SeededInputScale e = getSeededInputScale(f, 4);
  EXPECT_EQ(e.scale, 1.0f);
  EXPECT_EQ(e.reason, "parameter");
}

TEST_F(SeededParametersTest, ContractingDimsOfDotGeneralAndTransposes) {
  // wo [4, 16, 64] contracts over heads and head dim: fan-in 64; the
  // transposed weight is judged by the matmul after its transpose.
  func::FuncOp f = parse(
      "%a: tensor<8x4x16xf32>, %wo: tensor<4x16x64xf32> {shardc.param}, "
      "%wt: tensor<32x64xf32> {shardc.param}",
      "%o = shardc.dot_general %a, %wo batch = [] x [], "
      "contract = [1, 2] x [0, 1] : "
      "(tensor<8x4x16xf32>, tensor<4x16x64xf32>) -> tensor<8x64xf32>\n"
      "%t = shardc.transpose %wt permutation = [1, 0] : (tensor<32x64xf32>) -> "
      "tensor<64x32xf32>\n"
      "%y = shardc.matmul %o, %t : (tensor<8x64xf32>, tensor<64x32xf32>) -> "
      "tensor<8x32xf32>\n"
      "return %y : tensor<8x32xf32>",
      "tensor<8x32xf32>");
  ASSERT_TRUE(f);
  EXPECT_EQ(getSeededInputScale(f, 1).reason, "fan-in 64");
  EXPECT_EQ(getSeededInputScale(f, 1).scale, 0.125f);
  EXPECT_EQ(getSeededInputScale(f, 2).reason, "fan-in 64");
}

} // namespace

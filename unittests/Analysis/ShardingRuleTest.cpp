//===- ShardingRuleTest.cpp - the sharding rule of every tensor op --------===//

#include "shardc/Dialect/ShardingRule.h"
#include "shardc/Dialect/ShardcDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace shardc;

namespace {

class ShardingRuleTest : public ::testing::Test {
protected:
  ShardingRuleTest() {
    ctx.getOrLoadDialect<ShardcDialect>();
    ctx.getOrLoadDialect<func::FuncDialect>();
  }

  /// The rule of the only non-return op of `body`, a function body whose
  /// arguments are given by `args`; it must fit the op.
  std::string ruleOf(StringRef args, StringRef body) {
    std::string src = ("shardc.mesh @mesh [\"y\"=4, \"x\"=2]\n"
                       "func.func @f(" +
                       args + ") {\n" + body + "\n return\n}\n")
                          .str();
    module = parseSourceString<ModuleOp>(src, &ctx);
    if (!module)
      return "<parse error>";
    Operation *found = nullptr;
    module->walk([&](ShardingRuleOpInterface op) { found = op; });
    if (!found)
      return "<no op>";
    ShardingRule rule = cast<ShardingRuleOpInterface>(found).getShardingRule();
    std::string why;
    if (!rule.matchesOp(found, why))
      return "<mismatch: " + why + ">";
    return rule.str();
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
};

TEST_F(ShardingRuleTest, UnaryElementwise) {
  for (StringRef op : {"relu", "gelu", "exp", "log", "neg", "tanh", "sqrt",
                       "rsqrt", "sigmoid", "step"}) {
    std::string body = ("%0 = shardc." + op + " %a : tensor<16x64xf32>").str();
    EXPECT_EQ(ruleOf("%a: tensor<16x64xf32>", body),
              "([f0, f1]) -> ([f0, f1]) {f0=16, f1=64}")
        << op.str();
  }
}

TEST_F(ShardingRuleTest, BinaryElementwise) {
  for (StringRef op : {"add", "sub", "mul", "div", "max"}) {
    std::string body =
        ("%0 = shardc." + op + " %a, %a : tensor<16x64xf32>").str();
    EXPECT_EQ(ruleOf("%a: tensor<16x64xf32>", body),
              "([f0, f1], [f0, f1]) -> ([f0, f1]) {f0=16, f1=64}")
        << op.str();
  }
}

TEST_F(ShardingRuleTest, Matmul) {
  EXPECT_EQ(ruleOf("%a: tensor<16x64xf32>, %b: tensor<64x128xf32>",
                   "%0 = shardc.matmul %a, %b : (tensor<16x64xf32>, "
                   "tensor<64x128xf32>) -> tensor<16x128xf32>"),
            "([f1, f0], [f0, f2]) -> ([f1, f2]) "
            "{f0=64 reduction, f1=16, f2=128}");
}

TEST_F(ShardingRuleTest, BatchedMatmul) {
  EXPECT_EQ(ruleOf("%a: tensor<2x16x64xf32>, %b: tensor<2x64x8xf32>",
                   "%0 = shardc.matmul %a, %b : (tensor<2x16x64xf32>, "
                   "tensor<2x64x8xf32>) -> tensor<2x16x8xf32>"),
            "([f0, f2, f1], [f0, f1, f3]) -> ([f0, f2, f3]) "
            "{f0=2, f1=64 reduction, f2=16, f3=8}");
}

TEST_F(ShardingRuleTest, DotGeneral) {
  // einsum('bqd,bkd->bqk')
  EXPECT_EQ(ruleOf("%q: tensor<2x8x16xf32>, %k: tensor<2x4x16xf32>",
                   "%0 = shardc.dot_general %q, %k batch = [0] x [0], "
                   "contract = [2] x [2] : (tensor<2x8x16xf32>, "
                   "tensor<2x4x16xf32>) -> tensor<2x8x4xf32>"),
            "([f0, f2, f1], [f0, f3, f1]) -> ([f0, f2, f3]) "
            "{f0=2, f1=16 reduction, f2=8, f3=4}");
  // einsum('hqk,hkd->hqd'), contracting lhs dim 2 with rhs dim 1.
  EXPECT_EQ(ruleOf("%p: tensor<4x8x6xf32>, %v: tensor<4x6x16xf32>",
                   "%0 = shardc.dot_general %p, %v batch = [0] x [0], "
                   "contract = [2] x [1] : (tensor<4x8x6xf32>, "
                   "tensor<4x6x16xf32>) -> tensor<4x8x16xf32>"),
            "([f0, f2, f1], [f0, f1, f3]) -> ([f0, f2, f3]) "
            "{f0=4, f1=6 reduction, f2=8, f3=16}");
}

TEST_F(ShardingRuleTest, Reductions) {
  EXPECT_EQ(ruleOf("%a: tensor<16x64xf32>",
                   "%0 = shardc.reduce_sum %a dims = [1] : "
                   "(tensor<16x64xf32>) -> tensor<16xf32>"),
            "([f0, f1]) -> ([f0]) {f0=16, f1=64 reduction}");
  // A max over split dims: each block's max, then an all_reduce max.
  EXPECT_EQ(ruleOf("%a: tensor<16x64xf32>",
                   "%0 = shardc.reduce_max %a dims = [0, 1] : "
                   "(tensor<16x64xf32>) -> tensor<f32>"),
            "([f0, f1]) -> ([]) "
            "{f0=16 max_reduction, f1=64 max_reduction}");
}

// The operand sets a pending sum passes through: the ops linear in them.
TEST_F(ShardingRuleTest, PartialSumOperandSets) {
  auto setsOf = [&](StringRef op, bool binary) {
    std::string body = ("%0 = shardc." + op + " %a" +
                        (binary ? ", %a" : "") + " : tensor<4xf32>")
                           .str();
    if (ruleOf("%a: tensor<4xf32>", body).front() == '<')
      return std::string("<bad op>");
    SmallVector<unsigned> sets;
    module->walk([&](ShardingRuleOpInterface ruled) {
      ruled.getPartialSumOperandSets(sets);
    });
    std::string out;
    for (unsigned s : sets)
      out += (out.empty() ? "" : ",") + std::to_string(s);
    return "{" + out + "}";
  };
  EXPECT_EQ(setsOf("add", true), "{3}");
  EXPECT_EQ(setsOf("sub", true), "{3}");
  EXPECT_EQ(setsOf("mul", true), "{1,2}");
  EXPECT_EQ(setsOf("div", true), "{1}");
  EXPECT_EQ(setsOf("neg", false), "{1}");
  // Not linear: a sum must be reduced before them.
  EXPECT_EQ(setsOf("max", true), "{}");
  EXPECT_EQ(setsOf("pow", true), "{}");
  EXPECT_EQ(setsOf("exp", false), "{}");
  EXPECT_EQ(setsOf("relu", false), "{}");
}

TEST_F(ShardingRuleTest, Transpose) {
  EXPECT_EQ(ruleOf("%a: tensor<2x3x4xf32>",
                   "%0 = shardc.transpose %a permutation = [2, 0, 1] : "
                   "(tensor<2x3x4xf32>) -> tensor<4x2x3xf32>"),
            "([f0, f1, f2]) -> ([f2, f0, f1]) {f0=2, f1=3, f2=4}");
}

TEST_F(ShardingRuleTest, BroadcastInDim) {
  EXPECT_EQ(ruleOf("%a: tensor<128xf32>",
                   "%0 = shardc.broadcast_in_dim %a dims = [1] : "
                   "(tensor<128xf32>) -> tensor<16x128xf32>"),
            "([f1]) -> ([f0, f1]) {f0=16, f1=128}");
  // An expanded size-1 dim has no factor.
  EXPECT_EQ(ruleOf("%a: tensor<1x128xf32>",
                   "%0 = shardc.broadcast_in_dim %a dims = [0, 1] : "
                   "(tensor<1x128xf32>) -> tensor<16x128xf32>"),
            "([(), f1]) -> ([f0, f1]) {f0=16, f1=128}");
}

TEST_F(ShardingRuleTest, ReshapeMergeAndSplit) {
  EXPECT_EQ(ruleOf("%a: tensor<8x4xf32>",
                   "%0 = shardc.reshape %a : (tensor<8x4xf32>) -> "
                   "tensor<32xf32>"),
            "([f0, f1]) -> ([(f0 f1)]) {f0=8, f1=4}");
  EXPECT_EQ(ruleOf("%a: tensor<32xf32>",
                   "%0 = shardc.reshape %a : (tensor<32xf32>) -> "
                   "tensor<8x4xf32>"),
            "([(f0 f1)]) -> ([f0, f1]) {f0=8, f1=4}");
  EXPECT_EQ(ruleOf("%a: tensor<128x16xf32>",
                   "%0 = shardc.reshape %a : (tensor<128x16xf32>) -> "
                   "tensor<16x8x16xf32>"),
            "([(f0 f1), f2]) -> ([f0, f1, f2]) {f0=16, f1=8, f2=16}");
}

TEST_F(ShardingRuleTest, ReshapeCommonFactors) {
  // [6,2] -> [3,4]: 6 = (3 2), 4 = (2 2).
  EXPECT_EQ(ruleOf("%a: tensor<6x2xf32>",
                   "%0 = shardc.reshape %a : (tensor<6x2xf32>) -> "
                   "tensor<3x4xf32>"),
            "([(f0 f1), f2]) -> ([f0, (f1 f2)]) {f0=3, f1=2, f2=2}");
  // Independent groups: [2,3,8] -> [6,8].
  EXPECT_EQ(ruleOf("%a: tensor<2x3x8xf32>",
                   "%0 = shardc.reshape %a : (tensor<2x3x8xf32>) -> "
                   "tensor<6x8xf32>"),
            "([f0, f1, f2]) -> ([(f0 f1), f2]) {f0=2, f1=3, f2=8}");
}

TEST_F(ShardingRuleTest, ReshapeUnitDims) {
  EXPECT_EQ(ruleOf("%a: tensor<1x8xf32>",
                   "%0 = shardc.reshape %a : (tensor<1x8xf32>) -> "
                   "tensor<8x1xf32>"),
            "([(), f0]) -> ([f0, ()]) {f0=8}");
}

TEST_F(ShardingRuleTest, ReshapeUnfollowable) {
  EXPECT_EQ(ruleOf("%a: tensor<6x4xf32>",
                   "%0 = shardc.reshape %a : (tensor<6x4xf32>) -> "
                   "tensor<4x6xf32>"),
            "([f0, f1]) -> ([f2, f3]) {f0=6 need_replication, "
            "f1=4 need_replication, f2=4 need_replication, "
            "f3=6 need_replication}");
  // Only the group that cannot be followed needs replication.
  EXPECT_EQ(ruleOf("%a: tensor<8x6x4xf32>",
                   "%0 = shardc.reshape %a : (tensor<8x6x4xf32>) -> "
                   "tensor<8x4x6xf32>"),
            "([f0, f1, f2]) -> ([f0, f3, f4]) {f0=8, f1=6 need_replication, "
            "f2=4 need_replication, f3=4 need_replication, "
            "f4=6 need_replication}");
}

TEST_F(ShardingRuleTest, Constant) {
  EXPECT_EQ(ruleOf("", "%0 = shardc.constant dense<0.5> : tensor<16x128xf32>"),
            "() -> ([f0, f1]) {f0=16, f1=128}");
}

TEST_F(ShardingRuleTest, ShardingConstraint) {
  EXPECT_EQ(ruleOf("%a: tensor<16x64xf32>",
                   "%0 = shardc.sharding_constraint %a <@mesh, [{\"y\"}, {}]> "
                   ": tensor<16x64xf32>"),
            "([f0, f1]) -> ([f0, f1]) {f0=16, f1=64}");
}

TEST(ShardingRuleShapes, MismatchIsReported) {
  ShardingRule rule = ShardingRule::getIdentity({4, 8}, 1, 1);
  std::string why;
  EXPECT_TRUE(rule.matchesShapes({ArrayRef<int64_t>{4, 8}, {4, 8}}, why));
  EXPECT_FALSE(rule.matchesShapes({ArrayRef<int64_t>{4, 8}, {4, 6}}, why));
  EXPECT_EQ(why, "tensor #1 dim 1 has size 6, its factors make 8");
  why.clear();
  EXPECT_FALSE(rule.matchesShapes({ArrayRef<int64_t>{4, 8}}, why));
  EXPECT_EQ(why, "rule has 2 tensors, op has 1");
}

TEST(ShardingRuleShapes, Accessors) {
  ShardingRule rule;
  int64_t i = rule.addFactor(16, FactorKind::Parallel);
  int64_t k = rule.addFactor(64, FactorKind::Reduction);
  rule.addResult({{i}});
  rule.addOperand({{i}, {k}}); // operands stay before results
  EXPECT_EQ(rule.getNumOperands(), 1u);
  EXPECT_EQ(rule.getNumResults(), 1u);
  EXPECT_EQ(rule.getResultTensor(0), 1u);
  EXPECT_EQ(rule.getTensorNumElements(0), 1024);
  EXPECT_EQ(rule.getTensorNumElements(1), 16);
  EXPECT_EQ(rule.str(), "([f0, f1]) -> ([f0]) {f0=16, f1=64 reduction}");
}

} // namespace

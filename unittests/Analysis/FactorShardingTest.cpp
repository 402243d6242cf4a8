//===- FactorShardingTest.cpp - merge and projection of factor shardings --===//

#include "shardc/Analysis/FactorSharding.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace shardc;

namespace {

class FactorShardingTest : public ::testing::Test {
protected:
  FactorShardingTest() {
    ctx.getOrLoadDialect<ShardcDialect>();
    ctx.getOrLoadDialect<func::FuncDialect>();
    module =
        parseSourceString<ModuleOp>("shardc.mesh @mesh [\"y\"=4, \"x\"=2]\n"
                                    "shardc.mesh @other [\"y\"=4, \"x\"=2]\n",
                                    &ctx);
    mesh = cast<MeshOp>(&module->getBody()->front());
  }

  /// A sharding of @mesh (or `meshName`) from per-dim axis lists.
  ShardingAttr sharding(ArrayRef<SmallVector<StringRef>> dims,
                        ArrayRef<StringRef> partial = {},
                        StringRef meshName = "mesh") {
    return ShardingAttr::get(&ctx, FlatSymbolRefAttr::get(&ctx, meshName), dims,
                             partial);
  }

  static std::string str(ArrayRef<StringRef> axes) {
    std::string out;
    for (StringRef a : axes)
      out += (out.empty() ? "" : ",") + a.str();
    return "{" + out + "}";
  }
  static std::string str(Attribute attr) {
    std::string out;
    llvm::raw_string_ostream os(out);
    os << attr;
    return out;
  }

  /// matmul [16,64] x [64,128]: f0 = k (64, reduction), f1 = i (16), f2 = j.
  static ShardingRule matmulRule() {
    ShardingRule rule;
    int64_t k = rule.addFactor(64, FactorKind::Reduction);
    int64_t i = rule.addFactor(16, FactorKind::Parallel);
    int64_t j = rule.addFactor(128, FactorKind::Parallel);
    rule.addOperand({{i}, {k}});
    rule.addOperand({{k}, {j}});
    rule.addResult({{i}, {j}});
    return rule;
  }

  /// matmul [16,16] x [16,16] with every factor of one size, so that only
  /// priority, not size, tells the operands apart: f0 = i, f1 = k
  /// (reduction), f2 = j.
  static ShardingRule squareMatmulRule() {
    ShardingRule rule;
    int64_t i = rule.addFactor(16, FactorKind::Parallel);
    int64_t k = rule.addFactor(16, FactorKind::Reduction);
    int64_t j = rule.addFactor(16, FactorKind::Parallel);
    rule.addOperand({{i}, {k}});
    rule.addOperand({{k}, {j}});
    rule.addResult({{i}, {j}});
    return rule;
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  MeshOp mesh;
};

// The 2D MLP's first matmul: k is claimed as "x" by x and as "y" by w0 (the
// larger tensor wins), then loses "y" to the parallel factor i.
TEST_F(FactorShardingTest, TwoDimMatmul) {
  ShardingAttr s = sharding({{"y"}, {"x"}});
  FactorShardings fs =
      FactorShardings::compute(matmulRule(), mesh, {{s, true}, {s, true}, {}});
  EXPECT_EQ(str(fs.getFactorAxes(0)), "{}");
  EXPECT_EQ(str(fs.getFactorAxes(1)), "{y}");
  EXPECT_EQ(str(fs.getFactorAxes(2)), "{x}");
  EXPECT_EQ(fs.getFactorSource(1), 0);
  EXPECT_EQ(fs.getFactorSource(2), 1);
  EXPECT_EQ(fs.getFactorSource(0), -1);
  EXPECT_EQ(str(fs.getResultSharding(0)),
            "#shardc.sharding<@mesh, [{\"y\"}, {\"x\"}]>");
  EXPECT_EQ(str(fs.getOperandSharding(0)),
            "#shardc.sharding<@mesh, [{\"y\"}, {}]>");
  EXPECT_EQ(str(fs.getOperandSharding(1)),
            "#shardc.sharding<@mesh, [{}, {\"x\"}]>");

  ArrayRef<FactorConflict> conflicts = fs.getConflicts();
  ASSERT_EQ(conflicts.size(), 2u);
  EXPECT_EQ(conflicts[0].kind, FactorConflict::Kind::IncompatibleCandidates);
  EXPECT_EQ(conflicts[0].reason, ConflictReason::LargerTensor);
  EXPECT_EQ(conflicts[0].factor, 0);
  EXPECT_EQ(conflicts[0].loserTensor, 0);
  EXPECT_EQ(conflicts[0].winnerTensor, 1);
  EXPECT_EQ(str(conflicts[0].loserAxes), "{x}");
  EXPECT_EQ(str(conflicts[0].winnerAxes), "{y}");
  EXPECT_EQ(conflicts[1].kind, FactorConflict::Kind::AxisClaimedTwice);
  EXPECT_EQ(conflicts[1].reason, ConflictReason::ParallelOverReduction);
  EXPECT_EQ(conflicts[1].axis, "y");
  EXPECT_EQ(conflicts[1].factor, 1);
  EXPECT_EQ(conflicts[1].loserFactor, 0);
}

// A sharded contracting factor leaves the result a partial sum.
TEST_F(FactorShardingTest, ReductionGivesPartialResult) {
  FactorShardings fs = FactorShardings::compute(
      matmulRule(), mesh,
      {{sharding({{}, {"x"}})}, {sharding({{"x"}, {}})}, {}});
  EXPECT_EQ(str(fs.getFactorAxes(0)), "{x}");
  EXPECT_EQ(str(fs.getPartialAxes()), "{x}");
  EXPECT_EQ(str(fs.getResultSharding(0)),
            "#shardc.sharding<@mesh, [{}, {}], partial = {\"x\"}>");
  EXPECT_EQ(str(fs.getResultSharding(0, /*withPartial=*/false)),
            "#shardc.sharding<@mesh, [{}, {}]>");
  EXPECT_TRUE(fs.getConflicts().empty());
}

// A sharded max_reduction factor is no pending sum: the result carries no
// partial set, and getMaxReducedAxes names the axes of the all_reduce max.
// Like a sum's, it loses an axis to a parallel factor.
TEST_F(FactorShardingTest, MaxReductionIsNotPartial) {
  ShardingRule rule;
  int64_t i = rule.addFactor(16, FactorKind::Parallel);
  int64_t v = rule.addFactor(64, FactorKind::MaxReduction);
  rule.addOperand({{i}, {v}});
  rule.addResult({{i}});
  FactorShardings fs = FactorShardings::compute(
      rule, mesh, {{sharding({{"y"}, {"x"}})}, {}});
  EXPECT_EQ(str(fs.getFactorAxes(v)), "{x}");
  EXPECT_EQ(str(fs.getMaxReducedAxes()), "{x}");
  EXPECT_EQ(str(fs.getPartialAxes()), "{}");
  EXPECT_EQ(str(fs.getResultSharding(0)),
            "#shardc.sharding<@mesh, [{\"y\"}]>");
  EXPECT_EQ(str(fs.getOperandSharding(0)),
            "#shardc.sharding<@mesh, [{\"y\"}, {\"x\"}]>");

  FactorShardings clash = FactorShardings::compute(
      rule, mesh, {{sharding({{}, {"x"}})}, {sharding({{"x"}}), true}});
  EXPECT_EQ(str(clash.getFactorAxes(i)), "{x}");
  EXPECT_EQ(str(clash.getMaxReducedAxes()), "{}");
  ASSERT_EQ(clash.getConflicts().size(), 1u);
  EXPECT_EQ(clash.getConflicts()[0].reason,
            ConflictReason::ParallelOverReduction);
}

TEST_F(FactorShardingTest, CompatibleCandidatesMergeToLongest) {
  ShardingRule rule = ShardingRule::getIdentity({16, 8}, 2, 1);
  FactorShardings fs = FactorShardings::compute(
      rule, mesh,
      {{sharding({{"y"}, {}}), true}, {sharding({{"y", "x"}, {}})}, {}});
  EXPECT_EQ(str(fs.getFactorAxes(0)), "{y,x}");
  EXPECT_EQ(fs.getFactorSource(0), 1);
  EXPECT_TRUE(fs.getConflicts().empty());
  EXPECT_EQ(str(fs.getResultSharding(0)),
            "#shardc.sharding<@mesh, [{\"y\", \"x\"}, {}]>");
}

TEST_F(FactorShardingTest, UserBeatsPropagated) {
  ShardingRule rule = ShardingRule::getIdentity({16}, 2, 1);
  // The propagated candidate comes first and is as large; the user one
  // still wins.
  FactorShardings fs = FactorShardings::compute(
      rule, mesh, {{sharding({{"y"}})}, {sharding({{"x"}}), true}, {}});
  EXPECT_EQ(str(fs.getFactorAxes(0)), "{x}");
  ASSERT_EQ(fs.getConflicts().size(), 1u);
  EXPECT_EQ(fs.getConflicts()[0].reason, ConflictReason::UserPriority);
  EXPECT_EQ(fs.getConflicts()[0].loserTensor, 0);
}

TEST_F(FactorShardingTest, TiesGoToTensorOrder) {
  ShardingRule rule = ShardingRule::getIdentity({16}, 2, 1);
  FactorShardings fs = FactorShardings::compute(
      rule, mesh, {{sharding({{"x"}}), true}, {sharding({{"y"}}), true}, {}});
  EXPECT_EQ(str(fs.getFactorAxes(0)), "{x}");
  ASSERT_EQ(fs.getConflicts().size(), 1u);
  EXPECT_EQ(fs.getConflicts()[0].reason, ConflictReason::TensorOrder);
  EXPECT_EQ(fs.getConflicts()[0].loserTensor, 1);
}

TEST_F(FactorShardingTest, ParallelFactorsShareAxesByPriority) {
  // A transpose-like rule where both parallel factors want "y": the one
  // whose best candidate is a user annotation keeps it.
  ShardingRule rule;
  int64_t a = rule.addFactor(8, FactorKind::Parallel);
  int64_t b = rule.addFactor(8, FactorKind::Parallel);
  rule.addOperand({{a}, {b}});
  rule.addResult({{b}, {a}});
  FactorShardings fs = FactorShardings::compute(
      rule, mesh, {{sharding({{"y"}, {}})}, {sharding({{"y"}, {}}), true}});
  EXPECT_EQ(str(fs.getFactorAxes(b)), "{y}");
  EXPECT_EQ(str(fs.getFactorAxes(a)), "{}");
  ASSERT_EQ(fs.getConflicts().size(), 1u);
  EXPECT_EQ(fs.getConflicts()[0].kind, FactorConflict::Kind::AxisClaimedTwice);
  EXPECT_EQ(fs.getConflicts()[0].reason, ConflictReason::UserPriority);
  EXPECT_EQ(fs.getConflicts()[0].loserFactor, a);
}

// An element-wise op whose operands split different dims over "x": the
// dim split over more devices (("y", "x") = 8 against "x" = 2) keeps it
// (Shardy's aggressive_propagation.mlir, prefer_most_sharded_factor_*).
TEST_F(FactorShardingTest, ElementwiseKeepsTheMoreSplitFactor) {
  ShardingRule rule = ShardingRule::getIdentity({16, 16}, 2, 1);
  FactorShardings fs = FactorShardings::compute(
      rule, mesh,
      {{sharding({{}, {"x"}}), true}, {sharding({{"y", "x"}, {}}), true}, {}});
  EXPECT_EQ(str(fs.getFactorAxes(0)), "{y,x}");
  EXPECT_EQ(str(fs.getFactorAxes(1)), "{}");
  ASSERT_EQ(fs.getConflicts().size(), 1u);
  EXPECT_EQ(fs.getConflicts()[0].kind, FactorConflict::Kind::AxisClaimedTwice);
  EXPECT_EQ(fs.getConflicts()[0].reason, ConflictReason::MoreSplit);
  EXPECT_EQ(fs.getConflicts()[0].loserFactor, 1);
}

// The same claims on a matmul's rows (x) and columns (w): w would lose only
// "x" and keep "y", x would lose its whole split, so the earlier tensor's
// rows keep "x" however split the columns are
// (prefer_lhs_factor_non_elementwise).
TEST_F(FactorShardingTest, MatmulKeepsTheEarlierTensorsFactor) {
  ShardingRule rule = squareMatmulRule();
  const int64_t i = 0, j = 2;
  FactorShardings fs = FactorShardings::compute(
      rule, mesh,
      {{sharding({{"x"}, {}}), true}, {sharding({{}, {"y", "x"}}), true}, {}});
  EXPECT_EQ(str(fs.getFactorAxes(i)), "{x}");
  EXPECT_EQ(str(fs.getFactorAxes(j)), "{y}");
  ASSERT_EQ(fs.getConflicts().size(), 1u);
  EXPECT_EQ(fs.getConflicts()[0].reason, ConflictReason::TensorOrder);
  EXPECT_EQ(fs.getConflicts()[0].loserFactor, j);
}

// The same matmul with the columns' tensor a parameter: between equal
// claims the weight keeps its split and the activation's rows lose "x"
// (Megatron's weights stay in place; gpt-tiny-sp.test's wo).
TEST_F(FactorShardingTest, MatmulKeepsTheParametersFactor) {
  ShardingRule rule = squareMatmulRule();
  const int64_t i = 0, j = 2;
  FactorShardings fs = FactorShardings::compute(
      rule, mesh,
      {{sharding({{"x"}, {}}), true},
       {sharding({{}, {"x"}}), true, /*isStationary=*/true},
       {}});
  EXPECT_EQ(str(fs.getFactorAxes(i)), "{}");
  EXPECT_EQ(str(fs.getFactorAxes(j)), "{x}");
  ASSERT_EQ(fs.getConflicts().size(), 1u);
  EXPECT_EQ(fs.getConflicts()[0].reason, ConflictReason::StationaryTensor);
  EXPECT_EQ(fs.getConflicts()[0].loserFactor, i);
  // A user annotation still beats a parameter's propagated layout.
  FactorShardings user = FactorShardings::compute(
      rule, mesh,
      {{sharding({{"x"}, {}}), true},
       {sharding({{}, {"x"}}), false, /*isStationary=*/true},
       {}});
  EXPECT_EQ(str(user.getFactorAxes(i)), "{x}");
  ASSERT_EQ(user.getConflicts().size(), 1u);
  EXPECT_EQ(user.getConflicts()[0].reason, ConflictReason::UserPriority);
}

TEST_F(FactorShardingTest, AxisConflictDropsTheRestOfTheFactor) {
  ShardingRule rule;
  int64_t a = rule.addFactor(8, FactorKind::Parallel);
  int64_t b = rule.addFactor(16, FactorKind::Parallel);
  rule.addOperand({{a}, {b}});
  rule.addOperand({{a}, {b}});
  rule.addResult({{a}, {b}});
  // b = {y, x} (from the first operand, user); a = {x} from the second.
  FactorShardings fs = FactorShardings::compute(
      rule, mesh,
      {{sharding({{}, {"y", "x"}}), true}, {sharding({{"x"}, {}})}, {}});
  EXPECT_EQ(str(fs.getFactorAxes(b)), "{y,x}");
  EXPECT_EQ(str(fs.getFactorAxes(a)), "{}");
  EXPECT_EQ(fs.getFactorSource(a), -1);
}

TEST_F(FactorShardingTest, NeedReplicationDropsAxes) {
  ShardingRule rule;
  int64_t a = rule.addFactor(16, FactorKind::Parallel);
  int64_t r = rule.addFactor(64, FactorKind::NeedReplication);
  rule.addOperand({{a}, {r}});
  rule.addResult({{a}});
  FactorShardings fs = FactorShardings::compute(
      rule, mesh, {{sharding({{"y"}, {"x"}}), true}, {}});
  EXPECT_EQ(str(fs.getFactorAxes(a)), "{y}");
  EXPECT_EQ(str(fs.getFactorAxes(r)), "{}");
  ASSERT_EQ(fs.getConflicts().size(), 1u);
  EXPECT_EQ(fs.getConflicts()[0].kind, FactorConflict::Kind::Unshardable);
  EXPECT_EQ(str(fs.getOperandSharding(0)),
            "#shardc.sharding<@mesh, [{\"y\"}, {}]>");
}

TEST_F(FactorShardingTest, CompoundDims) {
  // [8,4] -> [32]: f0 = 8, f1 = 4; the result dim is (f0 f1).
  ShardingRule rule;
  int64_t f8 = rule.addFactor(8, FactorKind::Parallel);
  int64_t f4 = rule.addFactor(4, FactorKind::Parallel);
  rule.addOperand({{f8}, {f4}});
  rule.addResult({{f8, f4}});

  // Major first: "y" (4) and "x" (2) both fit in f8.
  auto axes =
      FactorShardings::factorAxesOf(rule, 1, sharding({{"y", "x"}}), mesh);
  EXPECT_EQ(str(axes[f8]), "{y,x}");
  EXPECT_EQ(str(axes[f4]), "{}");
  // "x" (2) then "y" (4): 2 * 4 still divides 8.
  axes = FactorShardings::factorAxesOf(rule, 1, sharding({{"x", "y"}}), mesh);
  EXPECT_EQ(str(axes[f8]), "{x,y}");

  // A fully split major factor passes the next axes to the minor one.
  FactorShardings fs = FactorShardings::compute(
      rule, mesh, {{sharding({{}, {}})}, {sharding({{"y", "x"}})}});
  EXPECT_EQ(str(fs.getOperandSharding(0)),
            "#shardc.sharding<@mesh, [{\"y\", \"x\"}, {}]>");

  // The minor factor alone is sharded: the merged dim cannot say it.
  fs =
      FactorShardings::compute(rule, mesh, {{sharding({{}, {"x"}}), true}, {}});
  EXPECT_EQ(str(fs.getFactorAxes(f4)), "{x}");
  EXPECT_EQ(str(fs.getResultSharding(0)), "#shardc.sharding<@mesh, [{}]>");
  EXPECT_FALSE(fs.isExactFor(1));
  EXPECT_TRUE(fs.isExactFor(0));
}

TEST_F(FactorShardingTest, StraddlingAxisIsNotFollowed) {
  // [32] -> [2,16]: "y" (4) does not divide f2.
  ShardingRule rule;
  int64_t f2 = rule.addFactor(2, FactorKind::Parallel);
  int64_t f16 = rule.addFactor(16, FactorKind::Parallel);
  rule.addOperand({{f2, f16}});
  rule.addResult({{f2}, {f16}});
  auto axes = FactorShardings::factorAxesOf(rule, 0, sharding({{"y"}}), mesh);
  EXPECT_EQ(str(axes[f2]), "{}");
  EXPECT_EQ(str(axes[f16]), "{}");
  // "x" (2) fills f2, then "y" (4) goes to f16.
  axes = FactorShardings::factorAxesOf(rule, 0, sharding({{"x", "y"}}), mesh);
  EXPECT_EQ(str(axes[f2]), "{x}");
  EXPECT_EQ(str(axes[f16]), "{y}");
}

TEST_F(FactorShardingTest, OtherMeshAndPartialAreIgnored) {
  ShardingRule rule = ShardingRule::getIdentity({16}, 1, 1);
  FactorShardings fs = FactorShardings::compute(
      rule, mesh, {{sharding({{"y"}}, {}, "other"), true}, {}});
  EXPECT_EQ(str(fs.getFactorAxes(0)), "{}");
  fs = FactorShardings::compute(rule, mesh,
                                {{sharding({{"y"}}, {"x"}), true}, {}});
  EXPECT_EQ(str(fs.getFactorAxes(0)), "{y}");
  EXPECT_EQ(str(fs.getResultSharding(0)), "#shardc.sharding<@mesh, [{\"y\"}]>");
}

} // namespace

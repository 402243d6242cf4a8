//===- FactorShardingCacheTest.cpp - memoized factor shardings ------------===//
//
// The cache must give the answer compute() gives, and must tell apart every
// input compute() reads: a key that missed one would hand one op another
// op's shardings.
//
//===----------------------------------------------------------------------===//

#include "shardc/Analysis/FactorShardingCache.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace shardc;

namespace {

class FactorShardingCacheTest : public ::testing::Test {
protected:
  FactorShardingCacheTest() {
    ctx.getOrLoadDialect<ShardcDialect>();
    ctx.getOrLoadDialect<func::FuncDialect>();
    module =
        parseSourceString<ModuleOp>("shardc.mesh @mesh [\"y\"=4, \"x\"=2]\n"
                                    "shardc.mesh @wide [\"y\"=8, \"x\"=2]\n",
                                    &ctx);
    auto meshes = llvm::to_vector(module->getOps<MeshOp>());
    mesh = meshes[0];
    wide = meshes[1];
  }

  ShardingAttr sharding(ArrayRef<SmallVector<StringRef>> dims,
                        StringRef meshName = "mesh") {
    return ShardingAttr::get(&ctx, FlatSymbolRefAttr::get(&ctx, meshName), dims,
                             {});
  }

  /// matmul [m,64] x [64,128], k of `kKind`.
  static ShardingRule matmulRule(int64_t m = 16,
                                 FactorKind kKind = FactorKind::Reduction) {
    ShardingRule rule;
    int64_t k = rule.addFactor(64, kKind);
    int64_t i = rule.addFactor(m, FactorKind::Parallel);
    int64_t j = rule.addFactor(128, FactorKind::Parallel);
    rule.addOperand({{i}, {k}});
    rule.addOperand({{k}, {j}});
    rule.addResult({{i}, {j}});
    return rule;
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  MeshOp mesh, wide;
};

// A repeated question is answered from the cache with what compute() says,
// projections included.
TEST_F(FactorShardingCacheTest, RepeatedQuestionsGetTheComputedAnswer) {
  FactorShardingCache cache;
  SmallVector<TensorShardingInput> in = {
      {sharding({{"y"}, {"x"}}), true}, {sharding({{"x"}, {}})}, {}};
  FactorShardings fresh = FactorShardings::compute(matmulRule(), mesh, in);
  const FactorShardings &first = cache.get(matmulRule(), mesh, in);
  const FactorShardings &again = cache.get(matmulRule(), mesh, in);
  EXPECT_EQ(&first, &again);
  EXPECT_EQ(cache.getNumEntries(), 1u);
  EXPECT_EQ(cache.getNumHits(), 1u);
  for (unsigned t = 0; t < 3; ++t) {
    EXPECT_EQ(again.getTensorSharding(t), fresh.getTensorSharding(t));
    EXPECT_EQ(again.getTensorSharding(t, /*withPartial=*/false),
              fresh.getTensorSharding(t, /*withPartial=*/false));
    // Asked twice: the memoized projection is the same attribute.
    EXPECT_EQ(again.getTensorSharding(t), fresh.getTensorSharding(t));
  }
  EXPECT_EQ(again.getConflicts().size(), fresh.getConflicts().size());
}

// Each input compute() reads is part of the key.
TEST_F(FactorShardingCacheTest, EveryInputIsPartOfTheKey) {
  FactorShardingCache cache;
  ShardingAttr s = sharding({{"y"}, {"x"}});
  SmallVector<TensorShardingInput> base = {{s, true}, {s, false}, {}};
  cache.get(matmulRule(), mesh, base);

  SmallVector<TensorShardingInput> user = {{s, true}, {s, true}, {}};
  SmallVector<TensorShardingInput> other = {
      {s, true}, {sharding({{"x"}, {"y"}}), false}, {}};
  SmallVector<TensorShardingInput> shorter = {{s, true}, {s, false}};
  // Another mesh (same axis names, other sizes).
  SmallVector<TensorShardingInput> wideIn = {
      {sharding({{"y"}, {"x"}}, "wide"), true},
      {sharding({{"y"}, {"x"}}, "wide"), false},
      {}};

  const FactorShardings *answers[] = {
      &cache.get(matmulRule(), mesh, user),
      &cache.get(matmulRule(), mesh, other),
      &cache.get(matmulRule(), mesh, shorter),
      &cache.get(matmulRule(/*m=*/32), mesh, base),
      &cache.get(matmulRule(16, FactorKind::Parallel), mesh, base),
      &cache.get(matmulRule(), wide, wideIn),
  };
  EXPECT_EQ(cache.getNumHits(), 0u);
  EXPECT_EQ(cache.getNumEntries(), 7u);
  // And each answer is the one computed for its own question.
  EXPECT_EQ(answers[3]->getRule().getFactor(1).size, 32);
  EXPECT_EQ(answers[4]->getRule().getFactor(0).kind, FactorKind::Parallel);
  EXPECT_EQ(answers[5]->getMesh(), wide);
  EXPECT_EQ(
      answers[1]->getTensorSharding(1),
      FactorShardings::compute(matmulRule(), mesh, other).getTensorSharding(1));
}

// The rule key covers how dims are made of factors, not just the factors.
TEST_F(FactorShardingCacheTest, RuleKeysTellLayoutsApart) {
  ShardingRule a, b;
  for (ShardingRule *r : {&a, &b}) {
    r->addFactor(8, FactorKind::Parallel);
    r->addFactor(4, FactorKind::Parallel);
  }
  a.addOperand({{0, 1}});
  a.addResult({{0, 1}});
  b.addOperand({{0}, {1}});
  b.addResult({{0}, {1}});
  SmallVector<int64_t> keyA, keyB;
  appendRuleKey(a, keyA);
  appendRuleKey(b, keyB);
  EXPECT_NE(keyA, keyB);
}

} // namespace

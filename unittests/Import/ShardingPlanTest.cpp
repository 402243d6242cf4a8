//===- ShardingPlanTest.cpp - plan patterns and parsing -------------------===//

#include "shardc/Import/ShardingPlan.h"

#include <gtest/gtest.h>

using shardc::matchesPlanPattern;
using shardc::parseShardingPlan;

TEST(ShardingPlanPattern, StarStaysWithinADottedComponent) {
  EXPECT_TRUE(matchesPlanPattern("blocks.*.fc.weight", "blocks.0.fc.weight"));
  EXPECT_TRUE(matchesPlanPattern("blocks.*.fc.weight", "blocks.12.fc.weight"));
  EXPECT_FALSE(matchesPlanPattern("blocks.*.weight", "blocks.0.fc.weight"));
  EXPECT_TRUE(matchesPlanPattern("w*", "w0"));
  EXPECT_TRUE(matchesPlanPattern("w*", "w"));
  EXPECT_FALSE(matchesPlanPattern("w*", "w0.grad"));
  EXPECT_TRUE(matchesPlanPattern("*", "x"));
  EXPECT_FALSE(matchesPlanPattern("*", "a.b"));
  // Slashes are ordinary characters: ONNX value names are node scopes.
  EXPECT_TRUE(matchesPlanPattern("/blocks.*/q/MatMul_output_0",
                                 "/blocks.1/q/MatMul_output_0"));
}

TEST(ShardingPlanPattern, DoubleStarCrossesComponents) {
  EXPECT_TRUE(matchesPlanPattern("**.weight", "blocks.0.fc.weight"));
  EXPECT_TRUE(matchesPlanPattern("**", "a.b.c"));
  EXPECT_TRUE(matchesPlanPattern("blocks.**.bias", "blocks.0.attn.q.bias"));
  EXPECT_FALSE(matchesPlanPattern("blocks.**.bias", "head.bias"));
  EXPECT_FALSE(matchesPlanPattern("**.weight", "blocks.0.fc.bias"));
}

TEST(ShardingPlanPattern, OtherCharactersStandForThemselves) {
  EXPECT_TRUE(matchesPlanPattern("idx", "idx"));
  EXPECT_FALSE(matchesPlanPattern("idx", "idx2"));
  EXPECT_FALSE(matchesPlanPattern("idx", "id"));
  EXPECT_FALSE(matchesPlanPattern("a?c", "abc"));
  EXPECT_TRUE(matchesPlanPattern("a*c*e", "abcde"));
}

TEST(ShardingPlanParse, ReadsMeshAndOrderedRules) {
  auto plan = parseShardingPlan(
      R"({"mesh": {"name": "m", "axes": [["data", 2], ["model", 4]]},
          "rules": [["w*", ["model", null]], ["x", [["data", "model"]]]]})");
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_EQ(plan->meshName, "m");
  ASSERT_EQ(plan->axes.size(), 2u);
  EXPECT_EQ(plan->axes[1].second, 4);
  ASSERT_EQ(plan->rules.size(), 2u);
  EXPECT_EQ(plan->rules[0].pattern, "w*");
  ASSERT_EQ(plan->rules[0].dims.size(), 2u);
  EXPECT_EQ(plan->rules[0].dims[0].size(), 1u);
  EXPECT_TRUE(plan->rules[0].dims[1].empty());
  ASSERT_EQ(plan->rules[1].dims[0].size(), 2u);
  EXPECT_EQ(plan->rules[1].dims[0][1], "model");
}

TEST(ShardingPlanParse, RejectsMalformedPlansWithoutCrashing) {
  const char *bad[] = {
      "",
      "[]",
      "{\"mesh\": 3, \"rules\": []}",
      "{\"mesh\": {\"axes\": []}, \"rules\": []}",
      "{\"mesh\": {\"axes\": [[\"a\", 0]]}, \"rules\": []}",
      "{\"mesh\": {\"axes\": [[\"a\", 1048577]]}, \"rules\": []}",
      "{\"mesh\": {\"axes\": [[\"a\", 1024], [\"b\", 2048]]}, \"rules\": []}",
      "{\"mesh\": {\"axes\": [[\"a\", 2], [\"a\", 2]]}, \"rules\": []}",
      "{\"mesh\": {\"axes\": [[\"a\", 2.5]]}, \"rules\": []}",
      "{\"mesh\": {\"axes\": [[\"a\", 2]]}, \"rules\": [[\"\", []]]}",
      "{\"mesh\": {\"axes\": [[\"a\", 2]]}, \"rules\": [[\"x\", [3]]]}",
      "{\"mesh\": {\"axes\": [[\"a\", 2]]}, \"rules\": [[\"x\", [[1]]]]}",
      "{\"mesh\": {\"axes\": [[\"a\", 2]]}, \"rules\": [[\"x\"]]}",
      "{\"mesh\": {\"axes\": [[\"a\", 2]]}, \"rules\": {}}",
      "{\"mesh\": {\"axes\": [[\"a\", 2]], \"size\": 2}, \"rules\": []}",
  };
  for (const char *text : bad) {
    auto plan = parseShardingPlan(text);
    EXPECT_FALSE(bool(plan)) << text;
    if (!plan)
      EXPECT_FALSE(llvm::toString(plan.takeError()).empty()) << text;
  }
  std::string deep(1000, '[');
  auto plan = parseShardingPlan(deep);
  ASSERT_FALSE(bool(plan));
  llvm::consumeError(plan.takeError());
}

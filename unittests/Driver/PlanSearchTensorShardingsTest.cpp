//===- PlanSearchTensorShardingsTest.cpp - a layout on another mesh -------===//
//
// The whole-plan search gives a tensor layout solved on one mesh to the
// other meshes of its model-axis size only where it splits every input
// into equal blocks (shardingsDivide, shardc/Driver/PlanSearch.h): on the
// graph at that mesh's batch, a later layer's inputs laid out as their
// first layer's peers.
//
//===----------------------------------------------------------------------===//

#include "shardc/Driver/PlanSearch.h"

#include "gtest/gtest.h"

using namespace shardc;
namespace json = llvm::json;

namespace {

/// Two layers of y = tanh(x w) + x over a batch of 8.
constexpr const char *kTwoLayers = R"({
  "inputs": [
    {"name": "x", "shape": [8, 4], "dtype": "f32"},
    {"name": "h0_w", "shape": [4, 12], "dtype": "f32", "param": true},
    {"name": "h1_w", "shape": [4, 12], "dtype": "f32", "param": true}
  ],
  "ops": [
    {"op": "neg", "inputs": ["x"], "output": "x0"},
    {"op": "matmul", "inputs": ["x0", "h0_w"], "output": "h0_mm"},
    {"op": "reduce_sum", "inputs": ["h0_mm"], "output": "h0_s", "dims": [1], "keepdims": true},
    {"op": "add", "inputs": ["h0_s", "x0"], "output": "h0_res2"},
    {"op": "matmul", "inputs": ["h0_res2", "h1_w"], "output": "h1_mm"},
    {"op": "reduce_sum", "inputs": ["h1_mm"], "output": "h1_s", "dims": [1], "keepdims": true},
    {"op": "add", "inputs": ["h1_s", "h0_res2"], "output": "h1_res2"},
    {"op": "reduce_sum", "inputs": ["h1_res2"], "output": "loss", "dims": [0, 1]}
  ],
  "outputs": [{"name": "loss"}]
})";

TEST(PlanSearchTensorShardingsTest, LayoutDividesOnlyWhereBlocksAreEqual) {
  llvm::Expected<GraphVariant> g =
      GraphVariant::parse(kTwoLayers, "data", "^x0$|_res2$");
  ASSERT_TRUE(bool(g)) << llvm::toString(g.takeError());
  PlanSearchRequest request;
  GraphVariant::InputShardings layout;
  layout.insert_or_assign("x", json::Array{"data", nullptr});
  layout.insert_or_assign("h0_w",
                          json::Array{nullptr, json::Array{"data", "model"}});
  // The batch is one row per data rank: 12 columns over data x model.
  EXPECT_TRUE(shardingsDivide(*g, layout, request, /*model=*/2, /*data=*/2,
                              /*batch=*/2));
  EXPECT_TRUE(shardingsDivide(*g, layout, request, 4, 3, 3));
  EXPECT_TRUE(shardingsDivide(*g, layout, request, 1, 1, 1));
  // 12 columns do not split 8 or 16 ways.
  EXPECT_FALSE(shardingsDivide(*g, layout, request, 4, 2, 2));
  EXPECT_FALSE(shardingsDivide(*g, layout, request, 2, 8, 8));
  // The batch must split over the data axis too.
  EXPECT_FALSE(shardingsDivide(*g, layout, request, 1, 3, 4));
  // An axis the mesh does not have splits nothing evenly.
  GraphVariant::InputShardings other;
  other.insert_or_assign("h0_w", json::Array{nullptr, "pipe"});
  EXPECT_FALSE(shardingsDivide(*g, other, request, 2, 2, 2));
}

TEST(PlanSearchTensorShardingsTest, WeightsWholeOverDataKeepTheBatchSplit) {
  llvm::Expected<GraphVariant> g =
      GraphVariant::parse(kTwoLayers, "data", "^x0$|_res2$");
  ASSERT_TRUE(bool(g)) << llvm::toString(g.takeError());
  GraphVariant::InputShardings layout;
  layout.insert_or_assign("x", json::Array{"data", nullptr});
  layout.insert_or_assign("h0_w",
                          json::Array{nullptr, json::Array{"data", "model"}});
  layout.insert_or_assign(
      "h1_w", json::Array{"data", json::Array{"model", "data", "pipe"}});
  GraphVariant::InputShardings whole =
      withWeightsWholeOverData(*g, layout, "data");
  ASSERT_EQ(whole.size(), 3u);
  auto at = [&](llvm::StringRef name) { return whole.find(name)->second; };
  // The batch stays split over data; the weights keep their other axes.
  EXPECT_EQ(at("x"), json::Value(json::Array{"data", nullptr}));
  EXPECT_EQ(at("h0_w"), json::Value(json::Array{nullptr, "model"}));
  EXPECT_EQ(at("h1_w"),
            json::Value(json::Array{nullptr, json::Array{"model", "pipe"}}));
  // A layout without data-split weights is its own.
  EXPECT_EQ(withWeightsWholeOverData(*g, whole, "data"), whole);
}

} // namespace

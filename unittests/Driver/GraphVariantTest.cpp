//===- GraphVariantTest.cpp - a graph at another batch, depth, layout -----===//
//
// The whole-plan search's rewrites of a JSON graph (shardc/Driver/
// GraphVariant.h) on a model written without annotations: its batch is
// what its non-parameter inputs carry, each later layer's inputs stand for
// the first layer's, and a variant given the first layer's shardings lays
// out every layer alike and drops the model's other annotations.
//
//===----------------------------------------------------------------------===//

#include "shardc/Driver/GraphVariant.h"

#include "gtest/gtest.h"

using namespace shardc;
namespace json = llvm::json;

namespace {

/// Two layers of y = tanh(x w) + x, w's layer reading a bias first.
constexpr const char *kTwoLayers = R"({
  "inputs": [
    {"name": "x", "shape": [6, 4], "dtype": "f32"},
    {"name": "h0_b", "shape": [4], "dtype": "f32", "param": true},
    {"name": "h0_w", "shape": [4, 4], "dtype": "f32", "param": true},
    {"name": "h1_b", "shape": [4], "dtype": "f32", "param": true},
    {"name": "h1_w", "shape": [4, 4], "dtype": "f32", "param": true}
  ],
  "ops": [
    {"op": "neg", "inputs": ["x"], "output": "x0"},
    {"op": "add", "inputs": ["x0", "h0_b"], "output": "h0_in"},
    {"op": "matmul", "inputs": ["h0_in", "h0_w"], "output": "h0_mm", "sharding": [null, null]},
    {"op": "add", "inputs": ["h0_mm", "x0"], "output": "h0_res2"},
    {"op": "add", "inputs": ["h0_res2", "h1_b"], "output": "h1_in"},
    {"op": "matmul", "inputs": ["h1_in", "h1_w"], "output": "h1_mm"},
    {"op": "add", "inputs": ["h1_mm", "h0_res2"], "output": "h1_res2"},
    {"op": "reduce_sum", "inputs": ["h1_res2"], "output": "loss", "dims": [0, 1]}
  ],
  "outputs": [{"name": "loss", "sharding": []}]
})";

const json::Object *inputNamed(const json::Value &graph, llvm::StringRef name) {
  for (const json::Value &in : *graph.getAsObject()->getArray("inputs"))
    if (in.getAsObject()->getString("name") == name)
      return in.getAsObject();
  return nullptr;
}

TEST(GraphVariantTest, UnannotatedModelsBatchAndLayers) {
  llvm::Expected<GraphVariant> g =
      GraphVariant::parse(kTwoLayers, "data", "^x0$|_res2$");
  ASSERT_TRUE(bool(g)) << llvm::toString(g.takeError());
  EXPECT_EQ(g->batch(), 6);
  EXPECT_EQ(g->layers(), 2);
  EXPECT_EQ(g->firstLayerPeer("h1_w"), "h0_w");
  EXPECT_EQ(g->firstLayerPeer("h1_b"), "h0_b");
  EXPECT_EQ(g->firstLayerPeer("h0_w"), "h0_w");
  EXPECT_EQ(g->firstLayerPeer("x"), "x");
  EXPECT_EQ(g->inputNames().size(), 5u);
}

TEST(GraphVariantTest, FirstLayersShardingsGivenToEveryLayer) {
  llvm::Expected<GraphVariant> g =
      GraphVariant::parse(kTwoLayers, "data", "^x0$|_res2$");
  ASSERT_TRUE(bool(g)) << llvm::toString(g.takeError());
  GraphVariant::InputShardings shardings;
  shardings.insert_or_assign("h0_w", json::Array{nullptr, "model"});
  shardings.insert_or_assign("x", json::Array{"data", nullptr});
  std::string text = g->variant(12, 2, {{"data", 2}, {"model", 2}}, &shardings);
  llvm::Expected<json::Value> v = json::parse(text);
  ASSERT_TRUE(bool(v)) << llvm::toString(v.takeError());
  // The batch is 12; h1_w is laid out as h0_w; the biases, given nothing,
  // have no annotation; the ops' and outputs' annotations are gone.
  EXPECT_EQ(*inputNamed(*v, "x")->getArray("shape"), (json::Array{12, 4}));
  EXPECT_EQ(*inputNamed(*v, "h1_w")->get("sharding"),
            json::Value(json::Array{nullptr, "model"}));
  EXPECT_EQ(*inputNamed(*v, "x")->get("sharding"),
            json::Value(json::Array{"data", nullptr}));
  EXPECT_EQ(inputNamed(*v, "h1_b")->get("sharding"), nullptr);
  for (const json::Value &op : *v->getAsObject()->getArray("ops"))
    EXPECT_EQ(op.getAsObject()->get("sharding"), nullptr);
  for (const json::Value &out : *v->getAsObject()->getArray("outputs"))
    EXPECT_EQ(out.getAsObject()->get("sharding"), nullptr);
  // A model without a mesh gets one.
  EXPECT_EQ(v->getAsObject()->getObject("mesh")->getString("name"), "mesh");
}

TEST(GraphVariantTest, NoBatchIsAnError) {
  llvm::Expected<GraphVariant> g = GraphVariant::parse(
      R"({"inputs": [{"name": "w", "shape": [2], "dtype": "f32", "param": true}], "ops": []})",
      "data", "^x0$");
  ASSERT_FALSE(bool(g));
  EXPECT_NE(llvm::toString(g.takeError()).find("no batch to divide"),
            std::string::npos);
}

} // namespace

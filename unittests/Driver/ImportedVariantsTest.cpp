//===- ImportedVariantsTest.cpp - a variant imported once, copied after ---===//
//
// The whole-plan search imports each variant of a model once and copies it
// for every program built from it (ImportedVariants.h): every copy must be
// the module a fresh import of the variant gives, whatever was done to the
// copies handed out before.
//
//===----------------------------------------------------------------------===//

#include "shardc/Driver/ImportedVariants.h"

#include "shardc/Import/JsonImporter.h"

#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace shardc;

namespace {

/// Two layers of y = tanh(x w) + x over a batch of 8.
constexpr const char *kTwoLayers = R"({
  "inputs": [
    {"name": "x", "shape": [8, 4], "dtype": "f32", "sharding": ["data", null]},
    {"name": "h0_w", "shape": [4, 4], "dtype": "f32", "param": true},
    {"name": "h1_w", "shape": [4, 4], "dtype": "f32", "param": true}
  ],
  "ops": [
    {"op": "neg", "inputs": ["x"], "output": "x0"},
    {"op": "matmul", "inputs": ["x0", "h0_w"], "output": "h0_mm"},
    {"op": "tanh", "inputs": ["h0_mm"], "output": "h0_t"},
    {"op": "add", "inputs": ["h0_t", "x0"], "output": "h0_res2"},
    {"op": "matmul", "inputs": ["h0_res2", "h1_w"], "output": "h1_mm"},
    {"op": "tanh", "inputs": ["h1_mm"], "output": "h1_t"},
    {"op": "add", "inputs": ["h1_t", "h0_res2"], "output": "h1_res2"},
    {"op": "reduce_sum", "inputs": ["h1_res2"], "output": "loss", "dims": [0, 1]}
  ],
  "outputs": [{"name": "loss"}]
})";

std::string text(ModuleOp module) {
  std::string out;
  llvm::raw_string_ostream os(out);
  module.print(os);
  return out;
}

TEST(ImportedVariantsTest, EveryCopyIsWhatAFreshImportGives) {
  llvm::Expected<GraphVariant> g =
      GraphVariant::parse(kTwoLayers, "data", "^x0$|_res2$");
  ASSERT_TRUE(bool(g)) << llvm::toString(g.takeError());
  MLIRContext context;
  ImportedVariants variants(*g, &context);
  std::vector<std::pair<std::string, int64_t>> two = {{"data", 2},
                                                      {"model", 2}};
  std::vector<std::pair<std::string, int64_t>> four = {{"data", 4},
                                                       {"model", 1}};
  auto fresh = [&](int64_t batch, int64_t layers,
                   const std::vector<std::pair<std::string, int64_t>> &axes) {
    OwningOpRef<ModuleOp> m =
        importJsonGraph(g->variant(batch, layers, axes), "fresh", &context);
    return m ? text(*m) : std::string();
  };
  std::string want = fresh(4, 1, two);
  ASSERT_FALSE(want.empty());

  OwningOpRef<ModuleOp> first = variants.get(4, 1, two, nullptr);
  ASSERT_TRUE(first);
  EXPECT_EQ(text(*first), want);
  // A program changes its copy (sequence parallelism, the passes): the
  // next copy is still the imported variant.
  (*first)->setAttr("changed", UnitAttr::get(&context));
  OwningOpRef<ModuleOp> second = variants.get(4, 1, two, nullptr);
  ASSERT_TRUE(second);
  EXPECT_EQ(text(*second), want);
  EXPECT_EQ(variants.size(), 1u);

  // Another batch, depth or mesh is another variant.
  OwningOpRef<ModuleOp> deeper = variants.get(4, 2, two, nullptr);
  OwningOpRef<ModuleOp> wider = variants.get(8, 1, four, nullptr);
  ASSERT_TRUE(deeper && wider);
  EXPECT_EQ(text(*deeper), fresh(4, 2, two));
  EXPECT_EQ(text(*wider), fresh(8, 1, four));
  EXPECT_EQ(variants.size(), 3u);

  variants.clear();
  EXPECT_EQ(variants.size(), 0u);
  OwningOpRef<ModuleOp> again = variants.get(4, 1, two, nullptr);
  ASSERT_TRUE(again);
  EXPECT_EQ(text(*again), want);
}

} // namespace

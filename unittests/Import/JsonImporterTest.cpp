//===- JsonImporterTest.cpp - what importing a valid JSON graph builds ----===//

#include "JsonTestUtils.h"

#include "shardc/Dialect/ShardcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::test;

namespace {

// The example of docs/json-format.md.
constexpr llvm::StringLiteral kExample =
    R"({"mesh": {"name": "mesh", "axes": [["y", 4], ["x", 2]]},
 "inputs":  [{"name": "x",  "shape": [16, 64],  "dtype": "f32", "sharding": ["y", "x"]},
             {"name": "w0", "shape": [64, 128], "dtype": "f32", "sharding": ["y", "x"]},
             {"name": "w1", "shape": [128, 64], "dtype": "f32", "sharding": ["x", "y"]}],
 "ops": [{"op": "matmul", "inputs": ["x", "w0"], "output": "h"},
         {"op": "relu",   "inputs": ["h"],       "output": "u"},
         {"op": "matmul", "inputs": ["u", "w1"], "output": "z"}],
 "outputs": [{"name": "z", "sharding": ["y", "x"]}]})";

func::FuncOp mainOf(ModuleOp module) {
  return module.lookupSymbol<func::FuncOp>("main");
}

SmallVector<Operation *> bodyOps(func::FuncOp func) {
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().front().without_terminator())
    ops.push_back(&op);
  return ops;
}

std::pair<unsigned, unsigned> lineColOf(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    loc = name.getChildLoc();
  auto file = dyn_cast<FileLineColLoc>(loc);
  if (!file)
    return {0, 0};
  return {file.getLine(), file.getColumn()};
}

TEST(JsonImporter, BuildsMeshFunctionAndOps) {
  auto ctx = makeContext();
  Imported imported = importJson(*ctx, kExample);
  ASSERT_TRUE(imported.module) << imported.text();
  EXPECT_TRUE(imported.diags.empty()) << imported.text();
  ModuleOp module = *imported.module;

  auto meshes = llvm::to_vector(module.getOps<MeshOp>());
  ASSERT_EQ(meshes.size(), 1u);
  EXPECT_EQ(meshes[0].getSymName(), "mesh");
  EXPECT_EQ(meshes[0].getAxisSize("y"), 4);
  EXPECT_EQ(meshes[0].getAxisSize("x"), 2);

  func::FuncOp func = mainOf(module);
  ASSERT_TRUE(func);
  EXPECT_FALSE(func->hasAttr(ShardcDialect::getSpmdAttrName()));
  ASSERT_EQ(func.getNumArguments(), 3u);
  auto name =
      func.getArgAttrOfType<StringAttr>(1, ShardcDialect::getNameAttrName());
  ASSERT_TRUE(name);
  EXPECT_EQ(name.getValue(), "w0");
  auto sharding = func.getArgAttrOfType<ShardingAttr>(
      2, ShardcDialect::getShardingAttrName());
  ASSERT_TRUE(sharding);
  EXPECT_EQ(sharding.getDimAxes(0), SmallVector<StringRef>{"x"});
  EXPECT_EQ(sharding.getDimAxes(1), SmallVector<StringRef>{"y"});
  EXPECT_TRUE(func.getResultAttrOfType<ShardingAttr>(
      0, ShardcDialect::getShardingAttrName()));

  // Block arguments and ops are located at their entries and named.
  BlockArgument x = func.getArgument(0);
  EXPECT_EQ(getNameFromLoc(x.getLoc()), "x");
  EXPECT_EQ(lineColOf(x.getLoc()), std::make_pair(2u, 14u));

  SmallVector<Operation *> ops = bodyOps(func);
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_TRUE(isa<MatmulOp>(ops[0]));
  EXPECT_TRUE(isa<ReluOp>(ops[1]));
  EXPECT_TRUE(isa<MatmulOp>(ops[2]));
  EXPECT_EQ(getNameFromLoc(ops[0]->getLoc()), "h");
  EXPECT_EQ(lineColOf(ops[0]->getLoc()), std::make_pair(5u, 10u));
  EXPECT_EQ(lineColOf(ops[2]->getLoc()), std::make_pair(7u, 10u));
  auto h = cast<RankedTensorType>(ops[0]->getResult(0).getType());
  EXPECT_EQ(h.getShape(), ArrayRef<int64_t>({16, 128}));
  auto z = cast<RankedTensorType>(ops[2]->getResult(0).getType());
  EXPECT_EQ(z.getShape(), ArrayRef<int64_t>({16, 64}));
  EXPECT_EQ(func.getFunctionType().getResult(0), z);

  // Result names come from the locations when printing.
  std::string printed;
  llvm::raw_string_ostream os(printed);
  module.print(os);
  EXPECT_NE(printed.find("%h = shardc.matmul"), std::string::npos) << printed;
  EXPECT_NE(printed.find("%u = shardc.relu %h"), std::string::npos) << printed;
}

TEST(JsonImporter, SortsOpsTopologicallyAndKeepsGivenOrderOtherwise) {
  auto ctx = makeContext();
  std::string json =
      graph(R"({"name": "a", "shape": [4, 8]})",
            R"({"op": "neg", "inputs": ["c"], "output": "d"},
         {"op": "relu", "inputs": ["a"], "output": "b"},
         {"op": "exp", "inputs": ["b"], "output": "c"},
         {"op": "tanh", "inputs": ["a"], "output": "e"})",
            R"({"name": "d"}, {"name": "e"}, {"name": "d"}, {"name": "a"})");
  Imported imported = importJson(*ctx, json);
  ASSERT_TRUE(imported.module) << imported.text();
  func::FuncOp func = mainOf(*imported.module);
  SmallVector<StringRef> order;
  for (Operation &op : func.getBody().front().without_terminator())
    order.push_back(getNameFromLoc(op.getLoc()));
  // b is the first ready op in file order, then c, then d (now ready, and
  // listed before e).
  EXPECT_EQ(order, (SmallVector<StringRef>{"b", "c", "d", "e"}));
  // The same value may be returned twice, and inputs may be outputs.
  EXPECT_EQ(func.getNumResults(), 4u);
}

TEST(JsonImporter, DefaultsAndOptionalFields) {
  auto ctx = makeContext();
  std::string json = graph(
      R"({"name": "a", "shape": [8, 4], "partial": ["x"], "sharding": [null, []]},
         {"name": "b", "shape": [], "dtype": "bf16"})",
      R"({"op": "relu", "inputs": ["a"], "output": "r",
          "sharding": [["y", "x"], null]},
         {"op": "constant", "output": "c", "shape": [2], "dtype": "f64",
          "values": [1.5, "-inf"]},
         {"op": "constant", "inputs": [], "output": "k", "shape": [8, 4], "value": 3})",
      R"({"name": "r", "sharding": ["y", null], "partial": ["x"]},
         {"name": "c"}, {"name": "b"}, {"name": "k"})",
      R"(, "$schema": "../docs/shardc-graph.schema.json", "spmd": false)");
  Imported imported = importJson(*ctx, json);
  ASSERT_TRUE(imported.module) << imported.text();
  func::FuncOp func = mainOf(*imported.module);
  EXPECT_TRUE(func.getArgument(0).getType() ==
              RankedTensorType::get({8, 4}, Float32Type::get(ctx.get())));
  EXPECT_TRUE(func.getArgument(1).getType() ==
              RankedTensorType::get({}, BFloat16Type::get(ctx.get())));
  auto argSharding = func.getArgAttrOfType<ShardingAttr>(
      0, ShardcDialect::getShardingAttrName());
  ASSERT_TRUE(argSharding);
  EXPECT_TRUE(argSharding.getDimAxes(0).empty());
  EXPECT_EQ(argSharding.getPartialAxes(), SmallVector<StringRef>{"x"});

  SmallVector<Operation *> ops = bodyOps(func);
  ASSERT_EQ(ops.size(), 3u);
  auto relu =
      ops[0]->getAttrOfType<ShardingAttr>(ShardcDialect::getShardingAttrName());
  ASSERT_TRUE(relu);
  EXPECT_EQ(relu.getDimAxes(0), (SmallVector<StringRef>{"y", "x"}));
  auto constant = cast<ConstantOp>(ops[1]);
  auto values = cast<DenseFPElementsAttr>(constant.getValue());
  EXPECT_EQ(values.getElementType(), Float64Type::get(ctx.get()));
  auto elements = llvm::to_vector(values.getValues<APFloat>());
  EXPECT_EQ(elements[0].convertToDouble(), 1.5);
  EXPECT_TRUE(elements[1].isInfinity() && elements[1].isNegative());
  auto splat = cast<DenseFPElementsAttr>(cast<ConstantOp>(ops[2]).getValue());
  EXPECT_TRUE(splat.isSplat());
  EXPECT_EQ(splat.getSplatValue<APFloat>().convertToFloat(), 3.0f);
}

TEST(JsonImporter, SpmdProgramsUseLocalShapesAndCollectives) {
  auto ctx = makeContext();
  std::string json = graph(
      R"({"name": "a", "shape": [3, 5], "sharding": ["y", "x"]})",
      R"({"op": "all_gather", "inputs": ["a"], "output": "g", "axes": ["x"], "dim": 1},
         {"op": "all_to_all", "inputs": ["g"], "output": "t", "axes": ["y"],
          "split_dim": 0, "concat_dim": 1},
         {"op": "all_slice", "inputs": ["t"], "output": "s", "axes": ["x"], "dim": 1},
         {"op": "reduce_scatter", "inputs": ["s"], "output": "r", "axes": ["x"],
          "dim": 1, "reduction": "max"})",
      R"({"name": "r"})", R"(, "spmd": true)");
  Imported imported = importJson(*ctx, json);
  // 3x5 is not divisible by 4x2, which is fine for per-device shapes; and
  // all_to_all splits dim 0 (size 3) over "y" (4) as the partitioner splits
  // an uneven dim (docs/json-format.md): into padded blocks of ceil(3/4).
  // [3,10] -> [1,40] -> all_slice x -> [1,20] -> reduce_scatter x -> [1,10].
  ASSERT_TRUE(imported.module) << imported.text();
  EXPECT_EQ(cast<RankedTensorType>(
                mainOf(*imported.module).getResultTypes()[0])
                .getShape(),
            ArrayRef<int64_t>({1, 10}));

  json = graph(R"({"name": "a", "shape": [4, 5], "sharding": ["y", "x"]})",
               R"({"op": "all_gather", "inputs": ["a"], "output": "g",
                   "axes": ["x"], "dim": 1},
                  {"op": "all_to_all", "inputs": ["g"], "output": "t",
                   "axes": ["y"], "split_dim": 0, "concat_dim": 1},
                  {"op": "all_reduce", "inputs": ["t"], "output": "r",
                   "axes": ["y", "x"]},
                  {"op": "collective_permute", "inputs": ["r"], "output": "p",
                   "axes": ["x"], "pairs": [[0, 1], [1, 0]]})",
               R"({"name": "p", "sharding": ["y", "x"]})", R"(, "spmd": true)");
  imported = importJson(*ctx, json);
  ASSERT_TRUE(imported.module) << imported.text();
  func::FuncOp func = mainOf(*imported.module);
  EXPECT_TRUE(func->hasAttr(ShardcDialect::getSpmdAttrName()));
  // [4,5] -> gather x(2) on dim 1 -> [4,10] -> all_to_all y(4) -> [1,40].
  EXPECT_EQ(cast<RankedTensorType>(func.getResultTypes()[0]).getShape(),
            ArrayRef<int64_t>({1, 40}));
}

TEST(JsonImporter, AcceptsByteOrderMarkAndUnicodeNames) {
  auto ctx = makeContext();
  std::string json =
      "\xEF\xBB\xBF" +
      graph(R"({"name": "gr\u00f6\u00dfe", "shape": [4]})",
            R"({"op": "exp", "inputs": ["größe"], "output": "é"})",
            R"({"name": "\u00e9"})");
  Imported imported = importJson(*ctx, json);
  ASSERT_TRUE(imported.module) << imported.text();
  func::FuncOp func = mainOf(*imported.module);
  EXPECT_EQ(getNameFromLoc(func.getArgument(0).getLoc()), "größe");
}

} // namespace

//===- JsonRoundTripTest.cpp - export is the lossless inverse of import ---===//

#include "JsonTestUtils.h"

#include "shardc/Dialect/OpFields.h"
#include "shardc/Dialect/ShardcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::test;

namespace {

// Every tensor op and composite, shardings on arguments, results and ops (with
// partial axes), and constants of every dtype including non-finite values.
constexpr llvm::StringLiteral kTensorOps = R"mlir(
shardc.mesh @mesh ["y"=4, "x"=2]
func.func @main(%x: tensor<16x64xf32> {shardc.name = "x", shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {"x"}]>},
                %w: tensor<64x128xf32> {shardc.name = "w"},
                %b: tensor<2x8x16xbf16> {shardc.name = "b", shardc.sharding = #shardc.sharding<@mesh, [{}, {"y", "x"}, {}], partial = {}>})
    -> (tensor<16x128xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"y", "x"}, {}]>},
        tensor<16x8x8xf32>, tensor<f32>, tensor<16x128xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {}], partial = {"x"}>},
        tensor<2x8x8xbf16>, tensor<6xf32>, tensor<2xbf16>, tensor<2xf64>, tensor<3xf16>, tensor<16x128xf32>) {
  %h = shardc.matmul %x, %w : (tensor<16x64xf32>, tensor<64x128xf32>) -> tensor<16x128xf32>
  %r = shardc.relu %h {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {}], partial = {"x"}>} : tensor<16x128xf32>
  %g = shardc.gelu %r : tensor<16x128xf32>
  %e = shardc.exp %g : tensor<16x128xf32>
  %l = shardc.log %e : tensor<16x128xf32>
  %n = shardc.neg %l : tensor<16x128xf32>
  %t = shardc.tanh %n {shardc.stage = 1 : i64} : tensor<16x128xf32>
  %s = shardc.sqrt %t : tensor<16x128xf32>
  %rs = shardc.rsqrt %s : tensor<16x128xf32>
  %sg = shardc.sigmoid %rs : tensor<16x128xf32>
  %st = shardc.step %sg : tensor<16x128xf32>
  %a = shardc.add %st, %h : tensor<16x128xf32>
  %sb = shardc.sub %a, %h : tensor<16x128xf32>
  %c = shardc.mul %sb, %h : tensor<16x128xf32>
  %d = shardc.div %c, %h : tensor<16x128xf32>
  %m = shardc.max %d, %h {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>} : tensor<16x128xf32>
  %ab = shardc.abs %m : tensor<16x128xf32>
  %er = shardc.erf %ab : tensor<16x128xf32>
  %sn = shardc.sin %er : tensor<16x128xf32>
  %cs = shardc.cos %sn : tensor<16x128xf32>
  %sgr = shardc.stop_gradient %cs : tensor<16x128xf32>
  %mi = shardc.min %sgr, %h : tensor<16x128xf32>
  %pw = shardc.pow %mi, %h : tensor<16x128xf32>
  %sl = shardc.slice %pw start = [0, 8] limit = [16, 24] stride = [1, 2] : (tensor<16x128xf32>) -> tensor<16x8xf32>
  %cc = shardc.concatenate %sl, %sl dimension = 1 : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x16xf32>
  %z0 = shardc.constant dense<0.0> : tensor<f32>
  %pd = shardc.pad %cc, %z0 low = [1, 0] high = [0, 2] interior = [0, 1] : (tensor<16x16xf32>, tensor<f32>) -> tensor<17x33xf32>
  %k = shardc.constant dense<0.5> : tensor<16x128xf32>
  %k1 = shardc.constant dense<[1.0, 0.1, -0.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<6xf32>
  %k2 = shardc.constant dense<[0.1, 3.0]> : tensor<2xbf16>
  %k3 = shardc.constant dense<[0.1, 1.0e300]> : tensor<2xf64>
  %k4 = shardc.constant dense<[0.1, 65504.0, 6.0e-8]> : tensor<3xf16>
  %sc = shardc.sharding_constraint %m <@mesh, [{"y"}, {}]> {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {}]>} : tensor<16x128xf32>
  %sc2 = shardc.sharding_constraint %sc <@mesh, [{}, {}], partial = {"x"}> : tensor<16x128xf32>
  %sum = shardc.reduce_sum %sc2 dims = [1] : (tensor<16x128xf32>) -> tensor<16xf32>
  %mx = shardc.reduce_max %sc dims = [0, 1] : (tensor<16x128xf32>) -> tensor<f32>
  %bc = shardc.broadcast_in_dim %sum dims = [0] : (tensor<16xf32>) -> tensor<16x128xf32>
  %tr = shardc.transpose %bc permutation = [1, 0] : (tensor<16x128xf32>) -> tensor<128x16xf32>
  %rp = shardc.reshape %tr : (tensor<128x16xf32>) -> tensor<16x8x16xf32>
  %dg = shardc.dot_general %rp, %rp batch = [0] x [0], contract = [2] x [2] : (tensor<16x8x16xf32>, tensor<16x8x16xf32>) -> tensor<16x8x8xf32>
  %db = shardc.dot_general %b, %b batch = [0] x [0], contract = [2] x [2] : (tensor<2x8x16xbf16>, tensor<2x8x16xbf16>) -> tensor<2x8x8xbf16>
  %out = shardc.add %bc, %k : tensor<16x128xf32>
  %io = shardc.iota dimension = 1 : tensor<16x128xi32>
  %cv = shardc.convert %io dtype = f32 : (tensor<16x128xi32>) -> tensor<16x128xf32>
  %cp = shardc.compare %cv, %h direction = "LT" : (tensor<16x128xf32>, tensor<16x128xf32>) -> tensor<16x128xi1>
  %se = shardc.select %cp, %cv, %out : (tensor<16x128xi1>, tensor<16x128xf32>, tensor<16x128xf32>) -> tensor<16x128xf32>
  %sm = shardc.softmax %h axis = -1 : tensor<16x128xf32>
  %ls = shardc.log_softmax %sm axis = 0 : tensor<16x128xf32>
  %g1 = shardc.constant dense<1.0> : tensor<128xf32>
  %ln = shardc.layer_norm %ls, %g1, %g1 axes = [1] epsilon = 2.0e-03 : (tensor<16x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<16x128xf32>
  %rn = shardc.rms_norm %ln, %g1 axes = [-1] epsilon = 3.0e-07 : (tensor<16x128xf32>, tensor<128xf32>) -> tensor<16x128xf32>
  %mn = shardc.mean %rn dims = [0] : (tensor<16x128xf32>) -> tensor<128xf32>
  %lb = shardc.iota dimension = 0 : tensor<16xi64>
  %ce = shardc.cross_entropy %rn, %lb : (tensor<16x128xf32>, tensor<16xi64>) -> tensor<f32>
  %io2 = shardc.iota dimension = 0 : tensor<4xi64>
  %ia = shardc.add %io2, %io2 : tensor<4xi64>
  %ga = shardc.gather %h, %ia axis = 0 mode = "skip" : (tensor<16x128xf32>, tensor<4xi64>) -> tensor<4x128xf32>
  %sa = shardc.scatter_add %h, %ia, %ga axis = 0 mode = "skip" : (tensor<16x128xf32>, tensor<4xi64>, tensor<4x128xf32>) -> tensor<16x128xf32>
  return %out, %dg, %mx, %r, %db, %k1, %k2, %k3, %k4, %se : tensor<16x128xf32>, tensor<16x8x8xf32>, tensor<f32>, tensor<16x128xf32>, tensor<2x8x8xbf16>, tensor<6xf32>, tensor<2xbf16>, tensor<2xf64>, tensor<3xf16>, tensor<16x128xf32>
}
)mlir";

// Every collective, in a partitioned program.
constexpr llvm::StringLiteral kCollectives = R"mlir(
shardc.mesh @mesh ["y"=4, "x"=2]
func.func @main(%v: tensor<4x32xf32> {shardc.name = "v", shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {"x"}]>})
    -> (tensor<4x32xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {"x"}]>}) attributes {shardc.spmd} {
  %g = shardc.all_gather %v on @mesh axes = ["x"] dim = 1 : tensor<4x32xf32> -> tensor<4x64xf32>
  %r = shardc.reduce_scatter %g on @mesh axes = ["x"] dim = 1 {reduction = #shardc.reduction<sum>} : tensor<4x64xf32> -> tensor<4x32xf32>
  %a = shardc.all_reduce %r on @mesh axes = ["y", "x"] {reduction = #shardc.reduction<max>} : tensor<4x32xf32>
  %a2 = shardc.all_reduce %a on @mesh axes = ["y"] : tensor<4x32xf32>
  %t = shardc.all_to_all %a2 on @mesh axes = ["y"] split_dim = 1 concat_dim = 0 : tensor<4x32xf32> -> tensor<16x8xf32>
  %p = shardc.collective_permute %t on @mesh axes = ["x"] pairs = [[0, 1], [1, 0]] : tensor<16x8xf32>
  %s = shardc.all_slice %p on @mesh axes = ["y"] dim = 0 {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {}]>} : tensor<16x8xf32> -> tensor<4x8xf32>
  %g2 = shardc.all_gather %s on @mesh axes = ["y", "x"] dim = 1 : tensor<4x8xf32> -> tensor<4x64xf32>
  %s2 = shardc.all_slice %g2 on @mesh axes = ["x"] dim = 1 : tensor<4x64xf32> -> tensor<4x32xf32>
  %r2 = shardc.reduce_scatter %s2 on @mesh axes = ["y"] dim = 0 {reduction = #shardc.reduction<max>} : tensor<4x32xf32> -> tensor<1x32xf32>
  %g3 = shardc.all_gather %r2 on @mesh axes = ["y"] dim = 0 : tensor<1x32xf32> -> tensor<4x32xf32>
  %ix = shardc.axis_index on @mesh axes = ["y", "x"] : tensor<i64>
  %sent = shardc.send %g3 on @mesh axis = "x" to = 1 : tensor<4x32xf32>
  %got = shardc.recv on @mesh axis = "y" from = 3 : tensor<4x32xf32>
  return %g3 : tensor<4x32xf32>
}
)mlir";

/// Exports `mlir`, imports the result, and expects the same printed module.
void expectRoundTrip(llvm::StringRef mlir) {
  auto ctx = makeContext();
  OwningOpRef<ModuleOp> original = parseMlir(*ctx, mlir);
  ASSERT_TRUE(original);
  std::vector<Diag> diags;
  std::string json = exportJson(*original, &diags);
  ASSERT_FALSE(json.empty()) << DiagCapture(*ctx).text() << diags.size()
                             << (diags.empty() ? "" : diags[0].message);
  Imported imported = importJson(*ctx, json);
  ASSERT_TRUE(imported.module) << imported.text() << "\n" << json;
  EXPECT_EQ(printNormalized(*original), printNormalized(*imported.module))
      << json;
  // Exporting again gives the same text: the format is a fixed point.
  EXPECT_EQ(exportJson(*imported.module), json);
}

TEST(JsonRoundTrip, EveryTensorOp) { expectRoundTrip(kTensorOps); }

/// Each instance function of the op-completeness inputs (one op each, which
/// every registered tensor op must have), as a module of its own: the mesh
/// and the function, renamed @main, as a JSON graph holds them.
std::vector<std::string> everyOpModules(MLIRContext &ctx) {
  auto buffer = llvm::MemoryBuffer::getFile(SHARDC_EVERY_OP_MLIR);
  if (!buffer)
    return {};
  OwningOpRef<ModuleOp> all = parseMlir(ctx, (*buffer)->getBuffer());
  if (!all)
    return {};
  std::vector<std::string> modules;
  MeshOp mesh = *all->getOps<MeshOp>().begin();
  for (func::FuncOp func : all->getOps<func::FuncOp>()) {
    OwningOpRef<ModuleOp> one = ModuleOp::create(all->getLoc());
    auto builder = OpBuilder::atBlockEnd(one->getBody());
    builder.clone(*mesh.getOperation());
    auto copy = cast<func::FuncOp>(builder.clone(*func.getOperation()));
    copy.setSymName("main");
    // Named as the exporter names unnamed inputs, which the importer keeps.
    for (unsigned i = 0; i < copy.getNumArguments(); ++i)
      copy.setArgAttr(i, ShardcDialect::getNameAttrName(),
                      StringAttr::get(&ctx, "arg" + std::to_string(i)));
    std::string text;
    llvm::raw_string_ostream os(text);
    one->print(os);
    modules.push_back(std::move(text));
  }
  return modules;
}

TEST(JsonRoundTrip, EveryInstanceOfTheOpCompletenessInputs) {
  auto ctx = makeContext();
  std::vector<std::string> modules = everyOpModules(*ctx);
  ASSERT_FALSE(modules.empty()) << "cannot read " << SHARDC_EVERY_OP_MLIR;
  for (const std::string &mlir : modules) {
    SCOPED_TRACE(mlir);
    expectRoundTrip(mlir);
  }
}

TEST(JsonRoundTrip, EveryCollectiveInAnSpmdProgram) {
  expectRoundTrip(kCollectives);
}

/// The ops a JSON graph can hold: every registered shardc op with one
/// result (all but the mesh, which is the graph's own field).
std::vector<RegisteredOperationName> graphOps(MLIRContext &ctx) {
  std::vector<RegisteredOperationName> ops;
  for (RegisteredOperationName name : ctx.getRegisteredOperations())
    if (name.getDialectNamespace() == ShardcDialect::getDialectNamespace() &&
        name.hasTrait<mlir::OpTrait::OneResult>())
      ops.push_back(name);
  return ops;
}

/// The op list is the registered ops, not a hand-written one: every one of
/// them must have an instance above, carrying each of its ODS attributes,
/// and every instance's attributes and result type must come back from
/// export then import exactly (not only print the same).
TEST(JsonRoundTrip, EveryRegisteredOpKeepsItsAttributes) {
  auto ctx = makeContext();
  std::vector<OwningOpRef<ModuleOp>> originals, imported;
  // The test's own modules (every attribute, sharding and dtype) and the
  // op-completeness instances (every registered tensor op, so that a new
  // op needs no instance here).
  std::vector<std::string> modules = {kTensorOps.str(), kCollectives.str()};
  for (std::string &mlir : everyOpModules(*ctx))
    modules.push_back(std::move(mlir));
  for (llvm::StringRef mlir : modules) {
    originals.push_back(parseMlir(*ctx, mlir));
    ASSERT_TRUE(originals.back());
    std::string json = exportJson(*originals.back());
    ASSERT_FALSE(json.empty());
    Imported back = importJson(*ctx, json);
    ASSERT_TRUE(back.module) << back.text();
    imported.push_back(std::move(back.module));
  }
  // Ops in order, original beside imported (the import keeps the order of
  // an exported graph).
  llvm::DenseMap<OperationName, unsigned> instances;
  llvm::DenseMap<OperationName, llvm::StringSet<>> attributesSeen;
  for (auto [original, back] : llvm::zip(originals, imported)) {
    SmallVector<Operation *> before, after;
    original->walk([&](Operation *op) {
      if (isa<ShardcDialect>(op->getDialect()) && !isa<MeshOp>(op))
        before.push_back(op);
    });
    back->walk([&](Operation *op) {
      if (isa<ShardcDialect>(op->getDialect()) && !isa<MeshOp>(op))
        after.push_back(op);
    });
    ASSERT_EQ(before.size(), after.size());
    for (auto [a, b] : llvm::zip(before, after)) {
      ASSERT_EQ(a->getName(), b->getName());
      ++instances[a->getName()];
      std::optional<OpFields> fields = getOpFields(a->getName());
      ASSERT_TRUE(fields) << a->getName().getStringRef().str();
      for (const OpField &field : fields->attrs) {
        std::optional<Attribute> x = a->getInherentAttr(field.name);
        std::optional<Attribute> y = b->getInherentAttr(field.name);
        ASSERT_TRUE(x && y);
        Attribute defaultValue =
            field.defaultValue ? field.defaultValue(ctx.get()) : Attribute();
        EXPECT_EQ(*x ? *x : defaultValue, *y ? *y : defaultValue)
            << a->getName().getStringRef().str() << " " << field.name.str();
        if (*x && *x != defaultValue)
          attributesSeen[a->getName()].insert(field.name);
      }
      EXPECT_EQ(a->getDiscardableAttrDictionary(),
                b->getDiscardableAttrDictionary());
      EXPECT_EQ(a->getResultTypes(), b->getResultTypes());
    }
  }
  for (RegisteredOperationName name : graphOps(*ctx)) {
    std::string op = name.getStringRef().str();
    EXPECT_GT(instances.lookup(name), 0u)
        << op << " has no instance in the round-trip test nor in "
        << SHARDC_EVERY_OP_MLIR;
    std::optional<OpFields> fields = getOpFields(name);
    ASSERT_TRUE(fields) << op << " does not describe its fields";
    for (const OpField &field : fields->attrs)
      EXPECT_TRUE(attributesSeen[name].contains(field.name))
          << op << ": no instance carries attribute '" << field.name.str()
          << "' with a value other than its default";
  }
}

/// The importer knows exactly the registered ops: an unknown op's message
/// lists every one of them, alphabetically.
TEST(JsonRoundTrip, UnknownOpListsTheRegisteredOps) {
  auto ctx = makeContext();
  std::string expected = "unknown op \"convolution\"; known ops are ";
  std::vector<std::string> names;
  for (RegisteredOperationName name : graphOps(*ctx))
    names.push_back(name.stripDialect().str());
  llvm::sort(names);
  expected += llvm::join(names, ", ");
  EXPECT_TRUE(importFails(
      graph(R"({"name": "a", "shape": [4]})",
            R"({"op": "convolution", "inputs": ["a"], "output": "b"})",
            R"({"name": "b"})"),
      expected));
}

/// The fields come from ODS: names, kinds, requiredness and defaults.
TEST(JsonRoundTrip, OpFieldsFollowOds) {
  auto ctx = makeContext();
  auto fieldsOf = [&](llvm::StringRef op) {
    std::optional<RegisteredOperationName> name =
        RegisteredOperationName::lookup(op, ctx.get());
    EXPECT_TRUE(name) << op.str();
    return *getOpFields(*name);
  };
  OpFields dot = fieldsOf("shardc.dot_general");
  EXPECT_EQ(dot.numOperands, 2u);
  ASSERT_EQ(dot.attrs.size(), 4u);
  EXPECT_EQ(dot.attrs[0].name, "lhs_batch_dims");
  EXPECT_EQ(dot.attrs[3].name, "rhs_contracting_dims");
  EXPECT_EQ(dot.attrs[0].kind, OpFieldKind::IntList);
  EXPECT_FALSE(dot.attrs[0].required);
  ASSERT_TRUE(dot.attrs[0].defaultValue);
  EXPECT_EQ(dot.attrs[0].defaultValue(ctx.get()),
            DenseI64ArrayAttr::get(ctx.get(), {}));

  OpFields scatter = fieldsOf("shardc.reduce_scatter");
  EXPECT_EQ(scatter.numOperands, 1u);
  ASSERT_EQ(scatter.attrs.size(), 4u);
  EXPECT_EQ(scatter.attrs[0].kind, OpFieldKind::MeshRef);
  EXPECT_EQ(scatter.attrs[1].kind, OpFieldKind::NameList);
  EXPECT_EQ(scatter.attrs[2].kind, OpFieldKind::Int);
  EXPECT_TRUE(scatter.attrs[2].required);
  EXPECT_EQ(scatter.attrs[3].kind, OpFieldKind::Reduction);
  EXPECT_FALSE(scatter.attrs[3].required);

  EXPECT_EQ(fieldsOf("shardc.collective_permute").attrs[2].kind,
            OpFieldKind::IntListList);
  EXPECT_EQ(fieldsOf("shardc.constant").numOperands, 0u);
  EXPECT_EQ(fieldsOf("shardc.constant").attrs[0].kind, OpFieldKind::Elements);
  EXPECT_EQ(fieldsOf("shardc.sharding_constraint").attrs[0].kind,
            OpFieldKind::Sharding);
  EXPECT_TRUE(fieldsOf("shardc.reduce_sum").attrs[0].required);
  EXPECT_TRUE(fieldsOf("shardc.relu").attrs.empty());

  // Where each result type comes from, by trait and interface.
  auto source = [&](llvm::StringRef op) {
    auto name = *RegisteredOperationName::lookup(op, ctx.get());
    return getResultTypeSource(name, *getOpFields(name));
  };
  EXPECT_EQ(source("shardc.matmul"), ResultTypeSource::Inferred);
  EXPECT_EQ(source("shardc.add"), ResultTypeSource::SameAsOperand);
  EXPECT_EQ(source("shardc.constant"), ResultTypeSource::FromValue);
  EXPECT_EQ(source("shardc.all_gather"), ResultTypeSource::FromMesh);
  EXPECT_EQ(source("shardc.all_reduce"), ResultTypeSource::FromMesh);
  EXPECT_EQ(source("shardc.reshape"), ResultTypeSource::GivenShape);
  EXPECT_EQ(source("shardc.broadcast_in_dim"), ResultTypeSource::GivenShape);
}

TEST(JsonRoundTrip, ExportsReadableJson) {
  constexpr llvm::StringLiteral json = R"({
  "mesh": {"name": "mesh", "axes": [["y", 4], ["x", 2]]},
  "inputs": [
    {"name": "x", "shape": [16, 64], "dtype": "f32", "sharding": ["y", "x"]},
    {"name": "w0", "shape": [64, 128], "dtype": "f32", "sharding": ["y", "x"]},
    {"name": "w1", "shape": [128, 64], "dtype": "f32", "sharding": ["x", "y"]}
  ],
  "ops": [
    {"op": "matmul", "inputs": ["x", "w0"], "output": "h"},
    {"op": "relu", "inputs": ["h"], "output": "u", "sharding": ["y", null], "partial": ["x"]},
    {"op": "matmul", "inputs": ["u", "w1"], "output": "z"},
    {"op": "dot_general", "inputs": ["z", "z"], "output": "s",
     "lhs_batch_dims": [], "rhs_batch_dims": [], "lhs_contracting_dims": [1], "rhs_contracting_dims": [1]},
    {"op": "constant", "output": "c", "shape": [3], "dtype": "f16", "values": [2, "-inf", "nan"]}
  ],
  "outputs": [
    {"name": "z", "sharding": ["y", "x"]},
    {"name": "s"},
    {"name": "c"}
  ]
}
)";
  auto ctx = makeContext();
  Imported imported = importJson(*ctx, json);
  ASSERT_TRUE(imported.module) << imported.text();
  std::string exported = exportJson(*imported.module);
  // Integers in float lists come back as floats; everything else is as
  // written.
  std::string expected = json.str();
  expected.replace(expected.find("[2, "), 4, "[2.0, ");
  EXPECT_EQ(exported, expected);
}

TEST(JsonRoundTrip, WrapsLongLists) {
  std::string values;
  for (int i = 0; i < 200; ++i)
    values += (i ? ", " : "") + std::to_string(i) + ".5";
  std::string json =
      graph("",
            R"({"op": "constant", "output": "c", "shape": [200], "values": [)" +
                values + "]}",
            R"({"name": "c"})");
  auto ctx = makeContext();
  Imported imported = importJson(*ctx, json);
  ASSERT_TRUE(imported.module) << imported.text();
  std::string exported = exportJson(*imported.module);
  EXPECT_NE(exported.find("      \"values\": [\n        0.5, 1.5, 2.5,"),
            std::string::npos)
      << exported;
  for (llvm::StringRef line : llvm::split(exported, '\n'))
    EXPECT_LE(line.size(), 120u) << line.str();
  Imported again = importJson(*ctx, exported);
  ASSERT_TRUE(again.module) << again.text();
  EXPECT_EQ(printNormalized(*imported.module), printNormalized(*again.module));
}

TEST(JsonRoundTrip, GeneratesNamesForUnnamedValues) {
  auto ctx = makeContext();
  OwningOpRef<ModuleOp> module = parseMlir(*ctx, R"mlir(
shardc.mesh @m ["x"=2]
func.func @f(%arg0: tensor<4xf32>, %in: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = shardc.add %arg0, %in : tensor<4xf32>
  %1 = shardc.relu %0 : tensor<4xf32> loc("v0")
  %2 = shardc.neg %1 : tensor<4xf32> loc("v0")
  return %2, %0 : tensor<4xf32>, tensor<4xf32>
}
)mlir");
  ASSERT_TRUE(module);
  std::string json = exportJson(*module);
  // Source names are kept (made unique); the others are generated without
  // displacing them.
  EXPECT_EQ(json, R"({
  "mesh": {"name": "m", "axes": [["x", 2]]},
  "inputs": [
    {"name": "arg0", "shape": [4], "dtype": "f32"},
    {"name": "arg1", "shape": [4], "dtype": "f32"}
  ],
  "ops": [
    {"op": "add", "inputs": ["arg0", "arg1"], "output": "v0_2"},
    {"op": "relu", "inputs": ["v0_2"], "output": "v0"},
    {"op": "neg", "inputs": ["v0"], "output": "v0_1"}
  ],
  "outputs": [
    {"name": "v0_1"},
    {"name": "v0_2"}
  ]
}
)");
  Imported imported = importJson(*ctx, json);
  ASSERT_TRUE(imported.module) << imported.text();
}

/// Expects export of `mlir` to fail with an error containing `message`.
void expectExportFails(llvm::StringRef mlir, llvm::StringRef message) {
  auto ctx = makeContext();
  ctx->allowUnregisteredDialects();
  OwningOpRef<ModuleOp> module = parseMlir(*ctx, mlir);
  ASSERT_TRUE(module);
  std::vector<Diag> diags;
  EXPECT_EQ(exportJson(*module, &diags), "");
  ASSERT_FALSE(diags.empty());
  EXPECT_NE(diags[0].message.find(message.str()), std::string::npos)
      << diags[0].message;
  EXPECT_NE(diags[0].line, 0u) << "not located: " << diags[0].message;
}

TEST(JsonRoundTrip, ExportRejectsWhatTheFormatCannotExpress) {
  expectExportFails(R"mlir(
shardc.mesh @m ["x"=2]
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "test.op"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
})mlir",
                    "'test.op' cannot be expressed in a JSON graph");
  expectExportFails(R"mlir(
shardc.mesh @m ["x"=2]
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = shardc.relu %a {note = "hi"} : tensor<4xf32>
  return %0 : tensor<4xf32>
})mlir",
                    "attribute 'note' cannot be expressed");
  expectExportFails(R"mlir(
shardc.mesh @m ["x"=2]
shardc.mesh @n ["x"=2]
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
})mlir",
                    "exactly one mesh, but the module has 2");
  expectExportFails(R"mlir(
shardc.mesh @m ["x"=2]
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = shardc.constant dense<0x7FC00001> : tensor<4xf32>
  return %0 : tensor<4xf32>
})mlir",
                    "NaN with a payload");
  expectExportFails(R"mlir(
shardc.mesh @m ["x"=2]
func.func @main(%a: tensor<4xi16>) -> tensor<4xi16> {
  return %a : tensor<4xi16>
})mlir",
                    "input #0 has type 'tensor<4xi16>'");
  expectExportFails(R"mlir(
shardc.mesh @m ["x"=2]
func.func @main(%a: tensor<4xf32>) {
  return
})mlir",
                    "needs at least one output");
  expectExportFails(R"mlir(
shardc.mesh @m ["x"=2]
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> { return %a : tensor<4xf32> }
func.func @g(%a: tensor<4xf32>) -> tensor<4xf32> { return %a : tensor<4xf32> }
)mlir",
                    "found 2 functions");
}

} // namespace

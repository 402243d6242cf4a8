//===- MeshLookupTest.cpp - which mesh a function runs on -----------------===//

#include "shardc/Dialect/MeshLookup.h"
#include "shardc/Dialect/ShardcDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace shardc;

namespace {

class MeshLookupTest : public ::testing::Test {
protected:
  MeshLookupTest() {
    ctx.getOrLoadDialect<ShardcDialect>();
    ctx.getOrLoadDialect<func::FuncDialect>();
  }

  /// Parses `src` and looks up the mesh of its function @f; returns the
  /// mesh's name, or the diagnostic getFunctionMesh emitted.
  std::string meshOf(StringRef src) {
    module = parseSourceString<ModuleOp>(src, &ctx);
    if (!module)
      return "<parse error>";
    auto func = module->lookupSymbol<func::FuncOp>("f");
    std::string message;
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
      message = diag.str();
      return success();
    });
    FailureOr<MeshOp> mesh = getFunctionMesh(func);
    if (failed(mesh))
      return "error: " + message;
    return mesh->getSymName().str();
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
};

constexpr const char *kFunc =
    "func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>%s) { return }\n";

std::string withFunc(StringRef meshes, StringRef yAttrs) {
  std::string func = kFunc;
  func.replace(func.find("%s"), 2, yAttrs.str());
  return meshes.str() + func;
}

TEST_F(MeshLookupTest, OnlyMesh) {
  EXPECT_EQ(meshOf(withFunc("shardc.mesh @m [\"x\"=2]\n", "")), "m");
}

TEST_F(MeshLookupTest, FirstShardedArgumentChoosesAmongSeveral) {
  EXPECT_EQ(meshOf(withFunc("shardc.mesh @a [\"x\"=2]\n"
                            "shardc.mesh @b [\"x\"=2]\n",
                            " {shardc.sharding = #shardc.sharding<@b, "
                            "[{\"x\"}]>}")),
            "b");
}

TEST_F(MeshLookupTest, NoMesh) {
  EXPECT_EQ(meshOf(withFunc("", "")),
            "error: 'func.func' op has no mesh: the module holds no "
            "shardc.mesh");
}

TEST_F(MeshLookupTest, SeveralMeshesNoShardedArgument) {
  EXPECT_EQ(meshOf(withFunc("shardc.mesh @a [\"x\"=2]\n"
                            "shardc.mesh @b [\"x\"=2]\n",
                            "")),
            "error: 'func.func' op has no mesh: the module holds 2 meshes "
            "and no argument sharding names one");
}

TEST_F(MeshLookupTest, UnknownSymbol) {
  // The verifier rejects a sharding on an unknown mesh, so the module is
  // built unverified: the lookup must still say what is wrong.
  std::string src = withFunc("shardc.mesh @a [\"x\"=2]\n"
                             "shardc.mesh @b [\"x\"=2]\n",
                             "");
  ParserConfig config(&ctx, /*verifyAfterParse=*/false);
  module = parseSourceString<ModuleOp>(src, config);
  ASSERT_TRUE(module);
  auto func = module->lookupSymbol<func::FuncOp>("f");
  func.setArgAttr(1, ShardcDialect::getShardingAttrName(),
                  ShardingAttr::getReplicated(
                      &ctx, FlatSymbolRefAttr::get(&ctx, "c"), 1));
  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  EXPECT_TRUE(failed(getFunctionMesh(func)));
  EXPECT_EQ(message, "'func.func' op has no mesh: argument #1's sharding "
                     "names @c, which is not a shardc.mesh");
}

} // namespace

//===- PropagateTest.cpp - --shardc-propagate through the C++ API ---------===//

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <string>

using namespace mlir;
using namespace shardc;

namespace {

/// A residual chain of `blocks` Megatron MLP blocks (6 ops each), batch
/// split over "data", first weights split over "model".
std::string mlpChain(int blocks) {
  std::string args = "%x: tensor<16x64xf32> {shardc.sharding = "
                     "#shardc.sharding<@mesh, [{\"data\"}, {}]>}";
  std::string body, cur = "%x";
  for (int i = 0; i < blocks; ++i) {
    std::string n = std::to_string(i);
    args += ", %w0_" + n +
            ": tensor<64x256xf32> {shardc.sharding = #shardc.sharding<@mesh, "
            "[{}, {\"model\"}]>}, %w1_" +
            n + ": tensor<256x64xf32>, %b_" + n + ": tensor<256xf32>";
    body += "%h" + n + " = shardc.matmul " + cur + ", %w0_" + n +
            " : (tensor<16x64xf32>, tensor<64x256xf32>) -> "
            "tensor<16x256xf32>\n";
    body += "%bb" + n + " = shardc.broadcast_in_dim %b_" + n +
            " dims = [1] : (tensor<256xf32>) -> tensor<16x256xf32>\n";
    body += "%a" + n + " = shardc.add %h" + n + ", %bb" + n +
            " : tensor<16x256xf32>\n";
    body += "%g" + n + " = shardc.gelu %a" + n + " : tensor<16x256xf32>\n";
    body += "%y" + n + " = shardc.matmul %g" + n + ", %w1_" + n +
            " : (tensor<16x256xf32>, tensor<256x64xf32>) -> "
            "tensor<16x64xf32>\n";
    body += "%r" + n + " = shardc.add %y" + n + ", " + cur +
            " : tensor<16x64xf32>\n";
    cur = "%r" + n;
  }
  return "shardc.mesh @mesh [\"data\"=2, \"model\"=4]\n"
         "func.func @main(" +
         args + ") -> tensor<16x64xf32> {\n" + body + "return " + cur +
         " : tensor<16x64xf32>\n}\n";
}

class PropagateTest : public ::testing::Test {
protected:
  PropagateTest() {
    ctx.getOrLoadDialect<ShardcDialect>();
    ctx.getOrLoadDialect<func::FuncDialect>();
  }

  LogicalResult propagate(ModuleOp module, bool explain = false) {
    PassManager pm(&ctx);
    ShardcPropagateOptions options;
    options.explain = explain;
    pm.addPass(createShardcPropagate(options));
    return pm.run(module);
  }

  static std::string str(Attribute attr) {
    std::string out;
    llvm::raw_string_ostream os(out);
    os << attr;
    return out;
  }

  MLIRContext ctx;
};

// The benchmark's shape: thousands of blocks must propagate, completely.
// 5,000 blocks take a fraction of a second; no bound on the seconds is
// asserted (a test's outcome may not depend on the machine's speed): a
// quadratic slip would run for minutes and meet ctest's timeout.
TEST_F(PropagateTest, LongChainIsComplete) {
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(mlpChain(5000), &ctx);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(propagate(*module)));

  auto func = *module->getOps<func::FuncOp>().begin();
  StringRef name = ShardcDialect::getShardingAttrName();
  int64_t ops = 0;
  func.walk([&](Operation *op) {
    if (op->getNumResults() == 1) {
      ++ops;
      EXPECT_TRUE(op->hasAttr(name)) << op->getName().getStringRef().str();
    }
  });
  EXPECT_EQ(ops, 6 * 5000);
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    EXPECT_TRUE(func.getArgAttr(i, name));
  EXPECT_TRUE(func.getResultAttr(0, name));

  // Every block gets the Megatron plan with the batch split on top.
  Block &body = func.getBody().front();
  auto it = body.begin();
  for (int block = 0; block < 5000; ++block) {
    std::string expect[] = {
        "#shardc.sharding<@mesh, [{\"data\"}, {\"model\"}]>", // matmul
        "#shardc.sharding<@mesh, [{\"data\"}, {\"model\"}]>", // broadcast
        "#shardc.sharding<@mesh, [{\"data\"}, {\"model\"}]>", // add
        "#shardc.sharding<@mesh, [{\"data\"}, {\"model\"}]>", // gelu
        "#shardc.sharding<@mesh, [{\"data\"}, {}]>",          // matmul
        "#shardc.sharding<@mesh, [{\"data\"}, {}]>",          // residual
    };
    for (const std::string &e : expect) {
      ASSERT_EQ(str(it->getAttr(name)), e) << "block " << block;
      ++it;
    }
  }
  // w1 of every block is split by rows.
  EXPECT_EQ(str(func.getArgAttr(2, name)),
            "#shardc.sharding<@mesh, [{\"model\"}, {}]>");
  EXPECT_EQ(str(func.getArgAttr(3 * 4999 + 2, name)),
            "#shardc.sharding<@mesh, [{\"model\"}, {}]>");
}

TEST_F(PropagateTest, RunningTwiceChangesNothing) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(mlpChain(3), &ctx);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(propagate(*module)));
  std::string once;
  llvm::raw_string_ostream(once) << *module;
  ASSERT_TRUE(succeeded(propagate(*module)));
  std::string twice;
  llvm::raw_string_ostream(twice) << *module;
  EXPECT_EQ(once, twice);
}

TEST_F(PropagateTest, ExplainEmitsRemarks) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(mlpChain(1), &ctx);
  ASSERT_TRUE(module);
  std::vector<std::string> remarks;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Remark)
      remarks.push_back(diag.str());
    return success();
  });
  ASSERT_TRUE(succeeded(propagate(*module, /*explain=*/true)));
  // 4 arguments, 6 op results, 1 function result; no conflict.
  EXPECT_EQ(remarks.size(), 11u);
  EXPECT_EQ(remarks.front(), "argument #0 is #shardc.sharding<@mesh, "
                             "[{\"data\"}, {}]> (annotation: argument #0)");
}

TEST_F(PropagateTest, ModuleWithoutMeshIsLeftAlone) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %r = shardc.relu %a : tensor<4xf32>\n"
      "  return %r : tensor<4xf32>\n}\n",
      &ctx);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(propagate(*module)));
  bool any = false;
  module->walk([&](Operation *op) {
    any |= op->hasAttr(ShardcDialect::getShardingAttrName());
  });
  EXPECT_FALSE(any);
}

} // namespace

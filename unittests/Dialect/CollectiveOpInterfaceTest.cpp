//===- CollectiveOpInterfaceTest.cpp - what each collective reports -------===//
//
// Every collective answers CollectiveOpInterface: its kind, dims, reduction,
// pairs and the bytes it sends. The simulator, explain and the interpreter
// rely on these answers, so each op's is pinned here.
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/ShardcDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace shardc;

namespace {

class CollectiveOpInterfaceTest : public ::testing::Test {
protected:
  CollectiveOpInterfaceTest() {
    ctx.getOrLoadDialect<ShardcDialect>();
    ctx.getOrLoadDialect<func::FuncDialect>();
  }

  /// The only collective of a function on a 1-D `x`=4 mesh whose body is
  /// `body` over `%a: tensor<8x8xf32>`.
  CollectiveOpInterface parse(StringRef body) {
    std::string src = ("shardc.mesh @mesh [\"x\"=4]\n"
                       "func.func @f(%a: tensor<8x8xf32>) {\n" +
                       body + "\n return\n}\n")
                          .str();
    module = parseSourceString<ModuleOp>(src, &ctx);
    CollectiveOpInterface found;
    if (module)
      module->walk([&](CollectiveOpInterface op) { found = op; });
    return found;
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
};

TEST_F(CollectiveOpInterfaceTest, AllGather) {
  CollectiveOpInterface op =
      parse("%g = shardc.all_gather %a on @mesh axes = [\"x\"] dim = 1 : "
            "tensor<8x8xf32> -> tensor<8x32xf32>");
  ASSERT_TRUE(op);
  EXPECT_EQ(op.getCollectiveKind(), CollectiveKind::AllGather);
  EXPECT_EQ(op.getMeshAttr().getValue(), "mesh");
  EXPECT_EQ(op.getAxes().size(), 1u);
  EXPECT_EQ(op.getCollectiveDim(), 1);
  EXPECT_EQ(op.getCollectiveConcatDim(), -1);
  EXPECT_EQ(op.getCollectiveReduction(), ReductionKind::Sum);
  EXPECT_TRUE(op.getCollectivePairs().empty());
  EXPECT_EQ(op.getBytesSentPerDevice(4, 256), 3 * 256);
  EXPECT_EQ(stringifyCollectiveKind(op.getCollectiveKind()), "all_gather");
}

TEST_F(CollectiveOpInterfaceTest, ReduceScatterWithMax) {
  CollectiveOpInterface op = parse(
      "%r = shardc.reduce_scatter %a on @mesh axes = [\"x\"] dim = 0 "
      "{reduction = #shardc.reduction<max>} : tensor<8x8xf32> -> "
      "tensor<2x8xf32>");
  ASSERT_TRUE(op);
  EXPECT_EQ(op.getCollectiveKind(), CollectiveKind::ReduceScatter);
  EXPECT_EQ(op.getCollectiveDim(), 0);
  EXPECT_EQ(op.getCollectiveReduction(), ReductionKind::Max);
  EXPECT_EQ(op.getBytesSentPerDevice(4, 256), 3 * 256 / 4);
}

TEST_F(CollectiveOpInterfaceTest, AllReduce) {
  CollectiveOpInterface op = parse(
      "%s = shardc.all_reduce %a on @mesh axes = [\"x\"] : tensor<8x8xf32>");
  ASSERT_TRUE(op);
  EXPECT_EQ(op.getCollectiveKind(), CollectiveKind::AllReduce);
  EXPECT_EQ(op.getCollectiveDim(), -1);
  EXPECT_EQ(op.getBytesSentPerDevice(4, 256), 2 * 3 * 256 / 4);
  // Four devices: recursive doubling (2 rounds, the whole block each) or
  // Rabenseifner's halving and doubling (4 rounds, the ring's bytes).
  auto four = collectiveAlgorithms(CollectiveKind::AllReduce, 4, 256);
  ASSERT_EQ(four.size(), 2u);
  EXPECT_EQ(four[0].messages, 2);
  EXPECT_EQ(four[0].bytesPerDevice, 2 * 256);
  EXPECT_EQ(four[1].messages, 4);
  EXPECT_EQ(four[1].bytesPerDevice, 2 * 3 * 256 / 4);
  // Six: two extra rounds fold in the devices beyond four.
  EXPECT_EQ(collectiveAlgorithms(CollectiveKind::AllReduce, 6, 256)[0].messages,
            4);
  // Two devices swap their blocks: one exchange.
  auto two = collectiveAlgorithms(CollectiveKind::AllReduce, 2, 256);
  ASSERT_EQ(two.size(), 1u);
  EXPECT_EQ(two[0].messages, 1);
  EXPECT_EQ(op.getBytesSentPerDevice(2, 256), 256);
}

TEST_F(CollectiveOpInterfaceTest, AllToAll) {
  CollectiveOpInterface op =
      parse("%t = shardc.all_to_all %a on @mesh axes = [\"x\"] split_dim = 1 "
            "concat_dim = 0 : tensor<8x8xf32> -> tensor<32x2xf32>");
  ASSERT_TRUE(op);
  EXPECT_EQ(op.getCollectiveKind(), CollectiveKind::AllToAll);
  EXPECT_EQ(op.getCollectiveDim(), 1);
  EXPECT_EQ(op.getCollectiveConcatDim(), 0);
}

TEST_F(CollectiveOpInterfaceTest, AllSliceSendsNothing) {
  CollectiveOpInterface op =
      parse("%s = shardc.all_slice %a on @mesh axes = [\"x\"] dim = 0 : "
            "tensor<8x8xf32> -> tensor<2x8xf32>");
  ASSERT_TRUE(op);
  EXPECT_EQ(op.getCollectiveKind(), CollectiveKind::AllSlice);
  EXPECT_EQ(op.getBytesSentPerDevice(4, 256), 0);
}

TEST_F(CollectiveOpInterfaceTest, PermuteInPlaceSendsNothing) {
  CollectiveOpInterface moving =
      parse("%p = shardc.collective_permute %a on @mesh axes = [\"x\"] pairs "
            "= [[0, 1], [1, 0]] : tensor<8x8xf32>");
  ASSERT_TRUE(moving);
  EXPECT_EQ(moving.getCollectiveKind(), CollectiveKind::CollectivePermute);
  auto pairs = moving.getCollectivePairs();
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0], std::make_pair(int64_t(0), int64_t(1)));
  EXPECT_EQ(moving.getBytesSentPerDevice(4, 256), 256);

  CollectiveOpInterface staying =
      parse("%p = shardc.collective_permute %a on @mesh axes = [\"x\"] pairs "
            "= [[0, 0]] : tensor<8x8xf32>");
  ASSERT_TRUE(staying);
  EXPECT_EQ(staying.getBytesSentPerDevice(4, 256), 0);
}

TEST_F(CollectiveOpInterfaceTest, TensorOpsAreNotCollectives) {
  EXPECT_FALSE(parse("%r = shardc.relu %a : tensor<8x8xf32>"));
}

} // namespace

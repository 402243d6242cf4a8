//===- TensorOpQueriesTest.cpp - each query holds of what ops compute -----===//
//
// The queries of TensorOpQueries.h describe an op's result by a property
// (a conversion of its operand, its own index along a dim, its operand
// repeated), which passes rely on instead of the op's class. Here every
// tensor op of Inputs/every-op.mlir and of a few more instances runs its
// kernel, and each answer a query gives is checked against the values the
// kernel computed. Each query must answer for some instance (so that none
// is checked vacuously), and for what the matching builder of
// TensorOpBuilders.h builds.
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/TensorOpQueries.h"
#include "OperandTensors.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/TensorOpBuilders.h"
#include "shardc/Dialect/TensorOpTraits.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Interpreter/Kernels.h"
#include "shardc/Support/RandomTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir;
using namespace shardc;

namespace {

/// Instances every-op.mlir lacks: conversions that change the element
/// type both ways, an iota counting dim 0, a broadcast creating dim 0.
constexpr const char *kMoreInstances = R"mlir(
func.func @more(%x: tensor<2x3xf32>, %i: tensor<2x3xi32>, %v: tensor<3xf32>)
    -> (tensor<2x3xi32>, tensor<2x3xf32>, tensor<4x2x3xf32>, tensor<4x3xf32>) {
  %a = shardc.convert %x dtype = i32 : (tensor<2x3xf32>) -> tensor<2x3xi32>
  %b = shardc.convert %i dtype = f32 : (tensor<2x3xi32>) -> tensor<2x3xf32>
  %c = shardc.iota dimension = 0 : tensor<4x2x3xf32>
  %d = shardc.broadcast_in_dim %v dims = [1] : (tensor<3xf32>) -> tensor<4x3xf32>
  return %a, %b, %c, %d : tensor<2x3xi32>, tensor<2x3xf32>, tensor<4x2x3xf32>, tensor<4x3xf32>
}
)mlir";

class TensorOpQueriesTest : public ::testing::Test {
protected:
  TensorOpQueriesTest() {
    DialectRegistry registry;
    registry.insert<ShardcDialect, func::FuncDialect>();
    registerKernelModels(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadAllAvailableDialects();
    ctx.getDiagEngine().registerHandler(
        [this](Diagnostic &d) { diagnostics += d.str() + "\n"; });
  }

  /// The tensor ops of `module`.
  static SmallVector<Operation *> tensorOpsOf(ModuleOp module) {
    SmallVector<Operation *> out;
    module.walk([&](Operation *op) {
      if (op->hasTrait<shardc::OpTrait::TensorOp>())
        out.push_back(op);
    });
    return out;
  }

  MLIRContext ctx;
  std::string diagnostics;
};

/// The multi-index of row-major element `linear` of `shape`.
SmallVector<int64_t> indexOf(int64_t linear, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> index(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = linear % shape[d];
    linear /= shape[d];
  }
  return index;
}

/// The row-major position of `index` in `shape`.
int64_t linearOf(ArrayRef<int64_t> index, ArrayRef<int64_t> shape) {
  int64_t linear = 0;
  for (auto [i, n] : llvm::zip(index, shape))
    linear = linear * n + i;
  return linear;
}

TEST_F(TensorOpQueriesTest, AnswersHoldOfTheKernelsResults) {
  OwningOpRef<ModuleOp> everyOp =
      parseSourceFile<ModuleOp>(SHARDC_EVERY_OP_MLIR, &ctx);
  ASSERT_TRUE(everyOp) << diagnostics;
  OwningOpRef<ModuleOp> more =
      parseSourceString<ModuleOp>(kMoreInstances, &ctx);
  ASSERT_TRUE(more) << diagnostics;
  SmallVector<Operation *> ops = tensorOpsOf(*everyOp);
  llvm::append_range(ops, tensorOpsOf(*more));

  unsigned conversions = 0, counts = 0, broadcasts = 0;
  uint64_t seed = 1;
  for (Operation *op : ops) {
    SCOPED_TRACE(op->getName().getStringRef().str());
    Value converted = getConvertedOperand(op);
    std::optional<int64_t> counted = getCountedDim(op);
    std::optional<ArrayRef<int64_t>> dims = getBroadcastDims(op);
    if (!converted && !counted && !dims)
      continue;
    std::vector<Tensor> inputs = operandTensors(op, seed);
    FailureOr<Tensor> y = evaluateOnTensors(op, inputs);
    ASSERT_TRUE(succeeded(y)) << diagnostics;
    ArrayRef<int64_t> shape = y->shape();

    if (converted) {
      ++conversions;
      // The operand's elements, in place, of another element type: equal
      // where both represent them, and within a unit of an integer result.
      ASSERT_EQ(op->getNumOperands(), 1u);
      ASSERT_EQ(converted, op->getOperand(0));
      ASSERT_EQ(inputs[0].shape(), shape);
      for (int64_t i = 0; i < y->numElements(); ++i)
        EXPECT_LT(
            std::fabs(y->elementAsDouble(i) - inputs[0].elementAsDouble(i)),
            1.0)
            << "element " << i;
      if (y->dtype() == inputs[0].dtype() || !isIntegerDType(y->dtype()))
        for (int64_t i = 0; i < y->numElements(); ++i)
          EXPECT_EQ(y->elementAsDouble(i), inputs[0].elementAsDouble(i))
              << "element " << i;
    }
    if (counted) {
      ++counts;
      ASSERT_EQ(op->getNumOperands(), 0u);
      ASSERT_LT(*counted, static_cast<int64_t>(shape.size()));
      for (int64_t i = 0; i < y->numElements(); ++i)
        EXPECT_EQ(y->elementAsDouble(i),
                  static_cast<double>(indexOf(i, shape)[*counted]))
            << "element " << i;
    }
    if (dims) {
      ++broadcasts;
      ASSERT_EQ(op->getNumOperands(), 1u);
      ArrayRef<int64_t> in = inputs[0].shape();
      ASSERT_EQ(dims->size(), in.size());
      for (int64_t i = 0; i < y->numElements(); ++i) {
        SmallVector<int64_t> at = indexOf(i, shape);
        SmallVector<int64_t> from;
        for (auto [k, d] : llvm::enumerate(*dims))
          from.push_back(in[k] == 1 ? 0 : at[d]);
        EXPECT_EQ(y->elementAsDouble(i),
                  inputs[0].elementAsDouble(linearOf(from, in)))
            << "element " << i;
      }
    }
  }
  EXPECT_GE(conversions, 3u);
  EXPECT_GE(counts, 2u);
  EXPECT_GE(broadcasts, 2u);
}

TEST_F(TensorOpQueriesTest, BuiltOpsAnswerWhatTheyWereBuiltWith) {
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto f32 = RankedTensorType::get({2, 3}, b.getF32Type());
  auto func = func::FuncOp::create(b, loc, "f", b.getFunctionType({f32}, {}));
  b.setInsertionPointToStart(func.addEntryBlock());
  Value x = func.getArgument(0);

  Value converted = buildConvert(b, loc, x, b.getI32Type());
  EXPECT_EQ(getConvertedOperand(converted.getDefiningOp()), x);
  EXPECT_EQ(cast<RankedTensorType>(converted.getType()).getElementType(),
            b.getI32Type());
  EXPECT_FALSE(getCountedDim(converted.getDefiningOp()));
  EXPECT_FALSE(getBroadcastDims(converted.getDefiningOp()));

  Value counted = buildIota(b, loc, f32, 1);
  EXPECT_EQ(getCountedDim(counted.getDefiningOp()), 1);
  EXPECT_FALSE(getConvertedOperand(counted.getDefiningOp()));

  Value repeated = buildBroadcastInDim(
      b, loc, RankedTensorType::get({4, 2, 3}, b.getF32Type()), x, {1, 2});
  std::optional<ArrayRef<int64_t>> dims =
      getBroadcastDims(repeated.getDefiningOp());
  ASSERT_TRUE(dims);
  EXPECT_EQ(*dims, ArrayRef<int64_t>({1, 2}));
  EXPECT_FALSE(getCountedDim(repeated.getDefiningOp()));

  // Ops of none of these kinds, and no op, answer nothing.
  Value sum = buildAdd(b, loc, x, x);
  EXPECT_FALSE(getConvertedOperand(sum.getDefiningOp()));
  EXPECT_FALSE(getCountedDim(sum.getDefiningOp()));
  EXPECT_FALSE(getBroadcastDims(sum.getDefiningOp()));
  EXPECT_FALSE(getConvertedOperand(nullptr));
  EXPECT_FALSE(getCountedDim(nullptr));
  EXPECT_FALSE(getBroadcastDims(nullptr));
  func::ReturnOp::create(b, loc);
}

} // namespace

//===- OpCompletenessTest.cpp - every tensor op has everything it needs ---===//
//
// Enumerates the ops registered by the shardc dialect (from the context, not
// from a list) and checks that every op with the TensorOp trait has a
// sharding rule, a kernel, a cost and a gradient rule, that it has an
// instance in Inputs/every-op.mlir, and, on that instance, that its rule
// matches its shapes, its kernel runs, its cost is finite, and its gradient
// rule agrees with finite differences of its kernel.
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Interpreter/Kernels.h"
#include "shardc/Support/RandomTensor.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringMap.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir;
using namespace shardc;

namespace {

class OpCompletenessTest : public ::testing::Test {
protected:
  OpCompletenessTest() {
    DialectRegistry registry;
    registry.insert<ShardcDialect, func::FuncDialect>();
    registerKernelModels(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadAllAvailableDialects();
    ctx.getDiagEngine().registerHandler([this](Diagnostic &d) {
      diagnostics += d.str() + "\n";
    });
  }

  /// The registered ops of the shardc dialect with the TensorOp trait.
  SmallVector<RegisteredOperationName> tensorOps() {
    SmallVector<RegisteredOperationName> out;
    for (RegisteredOperationName name : ctx.getRegisteredOperations())
      if (name.getDialectNamespace() == ShardcDialect::getDialectNamespace() &&
          name.hasTrait<shardc::OpTrait::TensorOp>())
        out.push_back(name);
    return out;
  }

  /// The op of each instance function of every-op.mlir, by op name.
  llvm::StringMap<Operation *> instances(ModuleOp module) {
    llvm::StringMap<Operation *> out;
    module.walk([&](Operation *op) {
      if (op->getDialect() == ctx.getLoadedDialect<ShardcDialect>() &&
          op->hasTrait<shardc::OpTrait::TensorOp>())
        out.try_emplace(op->getName().getStringRef(), op);
    });
    return out;
  }

  MLIRContext ctx;
  std::string diagnostics;
};

/// Inputs in [0.5, 1.5]: inside every op's domain (log, sqrt, rsqrt, div),
/// away from the kinks of relu and step.
Tensor inputTensor(ArrayRef<int64_t> shape, uint64_t seed) {
  Tensor t = randomTensor(shape, seed, "x");
  for (float &v : t.values())
    v = 1.0f + 0.5f * v;
  return t;
}

Tensor copyOf(const Tensor &t) { return t.clone(); }

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

bool isF32(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType().isF32();
}

/// An input for operand `v`: floats in [0.5, 1.5], integers in [0, 16),
/// booleans both ways.
Tensor operandTensor(Value v, uint64_t seed) {
  if (isF32(v))
    return inputTensor(shapeOf(v), seed);
  std::optional<DType> dtype =
      executableDType(cast<RankedTensorType>(v.getType()).getElementType());
  return cantFail(tryRandomTensor(shapeOf(v), seed, "x",
                                  defaultMaxTensorBytes(),
                                  dtype.value_or(DType::F32)));
}

TEST_F(OpCompletenessTest, EveryTensorOpHasRuleKernelCostAndGradient) {
  SmallVector<RegisteredOperationName> ops = tensorOps();
  // The dialect registers more than a handful: an empty list means the
  // trait was lost, which would make this test vacuous.
  ASSERT_GE(ops.size(), 20u);
  for (RegisteredOperationName name : ops) {
    SCOPED_TRACE(name.getStringRef().str());
    EXPECT_TRUE(name.hasInterface<ShardingRuleOpInterface>())
        << "no sharding rule";
    EXPECT_TRUE(name.hasInterface<KernelOpInterface>()) << "no kernel";
    EXPECT_TRUE(name.hasInterface<CostOpInterface>()) << "no cost";
    EXPECT_TRUE(name.hasInterface<DifferentiableOpInterface>())
        << "no gradient rule";
  }
}

TEST_F(OpCompletenessTest, NonTensorOpsAreTheMeshAndTheCollectives) {
  // An op that forgot the TensorOp trait would skip every check above.
  for (RegisteredOperationName name : ctx.getRegisteredOperations()) {
    if (name.getDialectNamespace() != ShardcDialect::getDialectNamespace() ||
        name.hasTrait<shardc::OpTrait::TensorOp>())
      continue;
    SCOPED_TRACE(name.getStringRef().str());
    EXPECT_TRUE(name.getStringRef() == "shardc.mesh" ||
                name.hasInterface<SymbolUserOpInterface>())
        << "neither a tensor op, the mesh, nor a collective";
  }
}

TEST_F(OpCompletenessTest, EveryTensorOpRunsAndDifferentiatesOnItsInstance) {
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(SHARDC_EVERY_OP_MLIR, &ctx);
  ASSERT_TRUE(module) << diagnostics;
  llvm::StringMap<Operation *> byName = instances(*module);
  uint64_t seed = 1;
  for (RegisteredOperationName name : tensorOps()) {
    SCOPED_TRACE(name.getStringRef().str());
    Operation *op = byName.lookup(name.getStringRef());
    ASSERT_NE(op, nullptr) << "no instance in every-op.mlir";

    // The rule describes the op's shapes; the cost is finite.
    ShardingRule rule = cast<ShardingRuleOpInterface>(op).getShardingRule();
    std::string why;
    EXPECT_TRUE(rule.matchesOp(op, why)) << why;
    SmallVector<double> sizes;
    for (const Factor &f : rule.getFactors())
      sizes.push_back(f.size);
    double flops = cast<CostOpInterface>(op).getFlops(sizes);
    EXPECT_TRUE(std::isfinite(flops) && flops >= 0) << flops;

    // The kernel runs.
    std::vector<Tensor> inputs;
    SmallVector<const Tensor *> operands;
    for (Value v : op->getOperands())
      inputs.push_back(operandTensor(v, seed++));
    for (const Tensor &t : inputs)
      operands.push_back(&t);
    FailureOr<Tensor> y = evaluateTensorOp(op, operands);
    ASSERT_TRUE(succeeded(y)) << diagnostics;
    if (op->getNumOperands() == 0)
      continue;

    // Differentiability follows the types: an operand has a cotangent only
    // if it and the result are floating point. An op with no such operand
    // (compare, a conversion to an integer) must build none; the others
    // are checked by finite differences over their float operands.
    bool floatResult = isF32(op->getResult(0));

    // The gradient rule, run as a function (x..., g) -> (dx...).
    Tensor g = floatResult ? randomTensor(y->shape(), seed++, "g")
                           : operandTensor(op->getResult(0), seed++);
    OpBuilder b(&ctx);
    b.setInsertionPointToEnd(module->getBody());
    SmallVector<Type> argTypes(op->getOperandTypes());
    argTypes.push_back(op->getResult(0).getType());
    auto func = func::FuncOp::create(b, op->getLoc(), "grad",
                                     b.getFunctionType(argTypes, {}));
    Block *body = func.addEntryBlock();
    b.setInsertionPointToEnd(body);
    IRMapping map;
    for (auto [v, arg] : llvm::zip(op->getOperands(), body->getArguments()))
      map.map(v, arg);
    Operation *clone = b.clone(*op, map);
    SmallVector<bool> wanted(op->getNumOperands(), true);
    SmallVector<Value> cotangents;
    ASSERT_TRUE(succeeded(cast<DifferentiableOpInterface>(clone)
                              .buildOperandCotangents(
                                  b, op->getLoc(), body->getArguments().back(),
                                  wanted, cotangents)));
    SmallVector<Value> returned;
    SmallVector<unsigned> returnedOperand;
    for (auto [i, c] : llvm::enumerate(cotangents)) {
      if (!floatResult || !isF32(op->getOperand(i)))
        EXPECT_FALSE(c) << "operand #" << i
                        << " is not differentiable but gets a cotangent";
      if (c) {
        returned.push_back(c);
        returnedOperand.push_back(i);
      }
    }
    func::ReturnOp::create(b, op->getLoc(), returned);
    func.setFunctionType(b.getFunctionType(
        argTypes, ValueRange(returned).getTypes()));
    std::vector<Tensor> args;
    for (const Tensor &t : inputs)
      args.push_back(copyOf(t));
    args.push_back(copyOf(g));
    FailureOr<SmallVector<Tensor>> grads = interpretFunction(func, args);
    ASSERT_TRUE(succeeded(grads)) << diagnostics;
    func.erase();
    if (!floatResult)
      continue;

    // Central differences of L(x) = sum(g * f(x)), element by element.
    auto loss = [&](ArrayRef<const Tensor *> in) {
      FailureOr<Tensor> out = evaluateTensorOp(op, in);
      double sum = 0;
      for (auto [gv, yv] : llvm::zip(g.values(), out->values()))
        sum += double(gv) * double(yv);
      return sum;
    };
    constexpr float eps = 1e-2f;
    for (unsigned i = 0; i < inputs.size(); ++i) {
      if (!isF32(op->getOperand(i)))
        continue; // held fixed (a select's pred)
      const Tensor *analytic = nullptr;
      for (auto [k, j] : llvm::enumerate(returnedOperand))
        if (j == i)
          analytic = &(*grads)[k];
      for (int64_t e = 0; e < inputs[i].numElements(); ++e) {
        float saved = inputs[i].data()[e];
        inputs[i].data()[e] = saved + eps;
        double up = loss(operands);
        inputs[i].data()[e] = saved - eps;
        double down = loss(operands);
        inputs[i].data()[e] = saved;
        double numeric = (up - down) / (2 * eps);
        // stop_gradient's rule is zero by definition (autodiff treats its
        // result as a constant), not its derivative (the identity's).
        if (name.getStringRef() == "shardc.stop_gradient")
          numeric = 0;
        double exact = analytic ? analytic->data()[e] : 0.0;
        EXPECT_NEAR(exact, numeric, 2e-2 * (1 + std::abs(numeric)))
            << "operand #" << i << " element " << e;
      }
    }
  }
}

} // namespace

//===- OpCompletenessTest.cpp - every tensor op has everything it needs ---===//
//
// Enumerates the ops registered by the shardc dialect (from the context, not
// from a list) and checks that every op with the TensorOp trait has a
// sharding rule, a kernel, a cost and a gradient rule, that it has an
// instance in Inputs/every-op.mlir, and, on that instance, that its rule
// matches its shapes, its kernel runs, its cost is finite, and its gradient
// rule agrees with finite differences of its kernel.
//
// Composite ops (DecomposableOpInterface) are the other category: they have
// none of these by design, since --shardc-decompose replaces them by
// primitives first. Each must have an instance too, expand into tensor ops
// only, and its expansion, run by the interpreter, must agree with a direct
// computation of the composite written here in double precision.
//
//===----------------------------------------------------------------------===//

#include "OperandTensors.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Interpreter/Kernels.h"
#include "shardc/Support/RandomTensor.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/xxhash.h"

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

  /// The registered composite ops of the shardc dialect.
  SmallVector<RegisteredOperationName> compositeOps() {
    SmallVector<RegisteredOperationName> out;
    for (RegisteredOperationName name : ctx.getRegisteredOperations())
      if (name.getDialectNamespace() == ShardcDialect::getDialectNamespace() &&
          name.hasInterface<DecomposableOpInterface>())
        out.push_back(name);
    return out;
  }

  /// The op of each instance function of every-op.mlir, by op name.
  llvm::StringMap<Operation *> instances(ModuleOp module) {
    llvm::StringMap<Operation *> out;
    module.walk([&](Operation *op) {
      if (op->getDialect() == ctx.getLoadedDialect<ShardcDialect>() &&
          (op->hasTrait<shardc::OpTrait::TensorOp>() ||
           isa<DecomposableOpInterface>(op)))
        out.try_emplace(op->getName().getStringRef(), op);
    });
    return out;
  }

  MLIRContext ctx;
  std::string diagnostics;
};

Tensor copyOf(const Tensor &t) { return t.clone(); }

bool isF32(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType().isF32();
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

TEST_F(OpCompletenessTest, NonTensorOpsAreTheMeshCollectivesAndComposites) {
  // An op that forgot the TensorOp trait would skip every check above.
  for (RegisteredOperationName name : ctx.getRegisteredOperations()) {
    if (name.getDialectNamespace() != ShardcDialect::getDialectNamespace() ||
        name.hasTrait<shardc::OpTrait::TensorOp>())
      continue;
    SCOPED_TRACE(name.getStringRef().str());
    EXPECT_TRUE(name.getStringRef() == "shardc.mesh" ||
                name.hasInterface<SymbolUserOpInterface>() ||
                name.hasInterface<DecomposableOpInterface>())
        << "neither a tensor op, the mesh, a collective nor a composite";
  }
}

TEST_F(OpCompletenessTest, EveryTensorOpRunsAndDifferentiatesOnItsInstance) {
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(SHARDC_EVERY_OP_MLIR, &ctx);
  ASSERT_TRUE(module) << diagnostics;
  llvm::StringMap<Operation *> byName = instances(*module);
  for (RegisteredOperationName name : tensorOps()) {
    SCOPED_TRACE(name.getStringRef().str());
    // Each op's inputs are drawn from seeds of its own name: a new op does
    // not redraw the others' (max's, near its kink, failed its finite
    // differences when tan was added before it).
    uint64_t seed = llvm::xxh3_64bits(name.getStringRef());
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
    std::vector<Tensor> inputs = operandTensors(op, seed);
    // The finite differences below change `inputs` in place and rerun.
    SmallVector<const Tensor *> operands;
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
    // Where an op's derivative jumps (relu, abs, max), a central difference
    // straddling the jump says nothing of either side: the one-sided
    // differences disagree there, and such elements are not compared.
    bool jumps = getContinuity(op->getName()) != Continuity::Continuous;
    double base = loss(operands);
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
        double forward = (up - base) / eps, backward = (base - down) / eps;
        if (jumps &&
            std::abs(forward - backward) > 2e-2 * (1 + std::abs(numeric)))
          continue;
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

//===----------------------------------------------------------------------===//
// Composites
//===----------------------------------------------------------------------===//

/// For every element group of `shape` that varies only along `dims` (one
/// per index of the other dims, row-major), the flat indices of its
/// elements, row-major over `dims` (ascending).
std::vector<std::vector<int64_t>> groupsAlong(ArrayRef<int64_t> shape,
                                              SmallVector<int64_t> dims) {
  int64_t rank = shape.size();
  for (int64_t &d : dims)
    d = d < 0 ? d + rank : d;
  llvm::sort(dims);
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(dims, d))
      kept.push_back(d);
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  // Visits every index of `which` dims row-major, calling f(offset).
  auto forEach = [&](ArrayRef<int64_t> which, auto f) {
    SmallVector<int64_t> idx(which.size(), 0);
    int64_t count = 1;
    for (int64_t d : which)
      count *= shape[d];
    for (int64_t n = 0; n < count; ++n) {
      int64_t offset = 0;
      for (auto [i, d] : llvm::enumerate(which))
        offset += idx[i] * strides[d];
      f(offset);
      for (int64_t i = static_cast<int64_t>(which.size()) - 1; i >= 0; --i) {
        if (++idx[i] < shape[which[i]])
          break;
        idx[i] = 0;
      }
    }
  };
  std::vector<std::vector<int64_t>> groups;
  forEach(kept, [&](int64_t base) {
    std::vector<int64_t> group;
    forEach(dims, [&](int64_t offset) { group.push_back(base + offset); });
    groups.push_back(std::move(group));
  });
  return groups;
}

/// The composite `op` computed directly from `in`, in double precision;
/// nullopt for an op this test does not know (a new composite needs its
/// reference here).
std::optional<std::vector<double>> referenceOf(Operation *op,
                                               ArrayRef<Tensor> in) {
  auto f = [&](unsigned i, int64_t e) { return double(in[i].data()[e]); };
  ArrayRef<int64_t> shape = in[0].shape();
  std::vector<double> out(in[0].numElements());
  auto softmaxLike = [&](int64_t axis, bool log) {
    for (const auto &group : groupsAlong(shape, {axis})) {
      double max = -INFINITY, sum = 0;
      for (int64_t e : group)
        max = std::max(max, f(0, e));
      for (int64_t e : group)
        sum += std::exp(f(0, e) - max);
      for (int64_t e : group)
        out[e] =
            log ? f(0, e) - max - std::log(sum) : std::exp(f(0, e) - max) / sum;
    }
    return out;
  };
  auto norm = [&](ArrayRef<int64_t> axes, double eps, bool centered,
                  bool hasBeta) {
    for (const auto &group : groupsAlong(shape, llvm::to_vector(axes))) {
      double n = group.size(), mean = 0, square = 0;
      for (int64_t e : group)
        mean += f(0, e) / n;
      if (!centered)
        mean = 0;
      for (int64_t e : group)
        square += (f(0, e) - mean) * (f(0, e) - mean) / n;
      for (auto [k, e] : llvm::enumerate(group))
        out[e] = (f(0, e) - mean) / std::sqrt(square + eps) * f(1, k) +
                 (hasBeta ? f(2, k) : 0.0);
    }
    return out;
  };
  if (auto softmax = dyn_cast<SoftmaxOp>(op))
    return softmaxLike(static_cast<int64_t>(softmax.getAxis()), /*log=*/false);
  if (auto logSoftmax = dyn_cast<LogSoftmaxOp>(op))
    return softmaxLike(static_cast<int64_t>(logSoftmax.getAxis()),
                       /*log=*/true);
  if (auto layerNorm = dyn_cast<LayerNormOp>(op))
    return norm(layerNorm.getAxes(), layerNorm.getEpsilon().convertToDouble(),
                true, true);
  if (auto rmsNorm = dyn_cast<RmsNormOp>(op))
    return norm(rmsNorm.getAxes(), rmsNorm.getEpsilon().convertToDouble(),
                false, false);
  if (auto mean = dyn_cast<MeanOp>(op)) {
    std::vector<double> means;
    for (const auto &group :
         groupsAlong(shape, llvm::to_vector(mean.getDims()))) {
      double sum = 0;
      for (int64_t e : group)
        sum += f(0, e);
      means.push_back(sum / group.size());
    }
    return means;
  }
  if (isa<CrossEntropyOp>(op)) {
    double total = 0;
    auto groups = groupsAlong(shape, {-1});
    const int32_t *labels = in[1].dataAs<int32_t>();
    for (auto [p, group] : llvm::enumerate(groups)) {
      double max = -INFINITY, sum = 0;
      for (int64_t e : group)
        max = std::max(max, f(0, e));
      for (int64_t e : group)
        sum += std::exp(f(0, e) - max);
      total += max + std::log(sum) - f(0, group[labels[p]]);
    }
    return std::vector<double>{total / groups.size()};
  }
  return std::nullopt;
}

TEST_F(OpCompletenessTest, EveryCompositeExpandsToPrimitivesThatMatchIt) {
  SmallVector<RegisteredOperationName> ops = compositeOps();
  ASSERT_GE(ops.size(), 6u); // softmax ... cross_entropy, at least
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(SHARDC_EVERY_OP_MLIR, &ctx);
  ASSERT_TRUE(module) << diagnostics;
  llvm::StringMap<Operation *> byName = instances(*module);
  uint64_t seed = 1000;
  for (RegisteredOperationName name : ops) {
    SCOPED_TRACE(name.getStringRef().str());
    // A composite is not a tensor op: nothing after decomposition runs it.
    EXPECT_FALSE(name.hasTrait<shardc::OpTrait::TensorOp>());
    EXPECT_FALSE(name.hasInterface<KernelOpInterface>());
    Operation *op = byName.lookup(name.getStringRef());
    ASSERT_NE(op, nullptr) << "no instance in every-op.mlir";

    // The expansion, as a function of the composite's operands.
    OpBuilder b(&ctx);
    b.setInsertionPointToEnd(module->getBody());
    SmallVector<Type> argTypes(op->getOperandTypes());
    auto func =
        func::FuncOp::create(b, op->getLoc(), "expanded",
                             b.getFunctionType(argTypes, op->getResultTypes()));
    Block *body = func.addEntryBlock();
    b.setInsertionPointToEnd(body);
    IRMapping map;
    for (auto [v, arg] : llvm::zip(op->getOperands(), body->getArguments()))
      map.map(v, arg);
    Operation *clone = b.clone(*op, map);
    Value expanded = cast<DecomposableOpInterface>(clone).decompose(b);
    ASSERT_TRUE(expanded);
    EXPECT_EQ(expanded.getType(), op->getResult(0).getType());
    func::ReturnOp::create(b, op->getLoc(), expanded);
    clone->erase();
    ASSERT_TRUE(succeeded(verify(func))) << diagnostics;
    func.walk([&](Operation *inner) {
      if (inner != func && !isa<func::ReturnOp>(inner))
        EXPECT_TRUE(inner->hasTrait<shardc::OpTrait::TensorOp>())
            << inner->getName().getStringRef().str()
            << " in the expansion is not a primitive tensor op";
    });

    std::vector<Tensor> inputs = operandTensors(op, seed);
    // Spread the floats over [-4, 4]: a softmax of [0.5, 1.5] is nearly
    // uniform and would hide a wrong axis.
    for (Tensor &t : inputs)
      if (t.dtype() == DType::F32)
        for (float &v : t.values())
          v = 8.0f * (v - 1.0f);
    std::vector<Tensor> args;
    for (const Tensor &t : inputs)
      args.push_back(copyOf(t));
    FailureOr<SmallVector<Tensor>> got = interpretFunction(func, args);
    ASSERT_TRUE(succeeded(got)) << diagnostics;
    std::optional<std::vector<double>> want = referenceOf(op, inputs);
    ASSERT_TRUE(want.has_value()) << "no direct reference in this test";
    const Tensor &result = (*got)[0];
    ASSERT_EQ(static_cast<size_t>(result.numElements()), want->size());
    for (size_t e = 0; e < want->size(); ++e)
      EXPECT_NEAR(result.data()[e], (*want)[e],
                  1e-5 * (1 + std::abs((*want)[e])))
          << "element " << e;
    func.erase();
  }
}

} // namespace

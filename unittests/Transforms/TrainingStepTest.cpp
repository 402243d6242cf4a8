//===- TrainingStepTest.cpp - against the textbook update -----------------===//
//
// The step the pass builds, run by the reference interpreter with its state
// fed back, must follow SGD and Adam (Kingma & Ba, Algorithm 1) as written
// out here in double precision, over several steps (Adam's bias correction
// changes with every step). The loss is sum(w * c), so the gradient is c:
// the test checks the update, not the autodiff (AutodiffTest does that).
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/FunctionInterface.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Interpreter/Kernels.h"
#include "shardc/Support/RandomTensor.h"
#include "shardc/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace mlir;
using namespace shardc;

namespace {

constexpr const char *kLinearLoss = R"mlir(
func.func @main(%c: tensor<3x4xf32> {shardc.name = "c"},
                %w: tensor<3x4xf32> {shardc.name = "w", shardc.param})
    -> tensor<f32> {
  %p = shardc.mul %w, %c : tensor<3x4xf32>
  %l = shardc.reduce_sum %p dims = [0, 1] : (tensor<3x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
)mlir";

struct StepRun {
  std::vector<double> params; ///< after the steps
  std::vector<float> losses;
};

/// Runs `steps` steps of the pass's program from w0 with gradient c.
StepRun runSteps(StringRef optimizer, const Tensor &c, const Tensor &w0,
                 float lr, int steps) {
  MLIRContext ctx;
  ctx.loadDialect<ShardcDialect>();
  shardc::registerKernelModels(ctx);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kLinearLoss, &ctx);
  EXPECT_TRUE(module);
  PassManager pm(&ctx);
  ShardcTrainingStepOptions options;
  options.optimizer = optimizer.str();
  pm.addPass(createShardcTrainingStep(options));
  EXPECT_TRUE(succeeded(pm.run(*module)));
  func::FuncOp step = getEntryFunction(*module);

  llvm::StringMap<unsigned> argIndex;
  SmallVector<Tensor> args;
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    std::string name = getArgumentName(step, i);
    argIndex[name] = i;
    auto type = cast<RankedTensorType>(step.getArgumentTypes()[i]);
    Tensor t = llvm::cantFail(Tensor::allocate(type.getShape()));
    if (name == "c")
      t = c.clone();
    else if (name == "w")
      t = w0.clone();
    else if (name == "learning_rate")
      t.data()[0] = lr;
    else if (auto init = step.getArgAttrOfType<FloatAttr>(
                 i, ShardcDialect::getOptimizerStateAttrName()))
      for (float &v : t.values())
        v = float(init.getValueAsDouble());
    else
      ADD_FAILURE() << "unexpected input " << name;
    args.push_back(std::move(t));
  }
  StepRun run;
  for (int s = 0; s < steps; ++s) {
    SmallVector<Tensor> in;
    for (const Tensor &t : args)
      in.push_back(t.clone());
    FailureOr<SmallVector<Tensor>> out = interpretFunction(step, in);
    EXPECT_TRUE(succeeded(out));
    if (failed(out))
      return run;
    run.losses.push_back((*out)[0].data()[0]);
    for (unsigned r = 0; r < step.getNumResults(); ++r)
      if (auto next = step.getResultAttrOfType<StringAttr>(
              r, ShardcDialect::getNextAttrName()))
        args[argIndex.lookup(next.getValue())] = std::move((*out)[r]);
  }
  for (float v : args[argIndex.lookup("w")].values())
    run.params.push_back(v);
  return run;
}

double maxRelErr(ArrayRef<double> got, ArrayRef<double> want) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::abs(got[i] - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return err / scale;
}

TEST(TrainingStepTest, SgdIsParamMinusRateTimesGradient) {
  Tensor c = randomTensor({3, 4}, 1, "c"), w = randomTensor({3, 4}, 2, "w");
  const float lr = 0.1f;
  const int steps = 4;
  StepRun run = runSteps("sgd", c, w, lr, steps);
  std::vector<double> want;
  for (int64_t i = 0; i < w.numElements(); ++i)
    want.push_back(double(w.data()[i]) - steps * double(lr) * c.data()[i]);
  ASSERT_EQ(run.params.size(), want.size());
  EXPECT_LT(maxRelErr(run.params, want), 1e-6);
}

TEST(TrainingStepTest, AdamFollowsKingmaAndBa) {
  Tensor c = randomTensor({3, 4}, 3, "c"), w = randomTensor({3, 4}, 4, "w");
  const double lr = 0.05, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  const int steps = 5;
  StepRun run = runSteps("adam", c, w, float(lr), steps);
  std::vector<double> want, m(w.numElements()), v(w.numElements());
  for (float x : w.values())
    want.push_back(x);
  for (int t = 1; t <= steps; ++t)
    for (size_t i = 0; i < want.size(); ++i) {
      double g = c.data()[i];
      m[i] = b1 * m[i] + (1 - b1) * g;
      v[i] = b2 * v[i] + (1 - b2) * g * g;
      double mHat = m[i] / (1 - std::pow(b1, t));
      double vHat = v[i] / (1 - std::pow(b2, t));
      want[i] -= lr * mHat / (std::sqrt(vHat) + eps);
    }
  ASSERT_EQ(run.params.size(), want.size());
  // f32 steps against a double reference; a mistake in the bias correction
  // or the moments is off by far more (at t=1 each element moves by ~lr).
  EXPECT_LT(maxRelErr(run.params, want), 1e-5);
  // The loss is the one before each update: sum(w_t * c).
  ASSERT_EQ(run.losses.size(), size_t(steps));
  double first = 0;
  for (int64_t i = 0; i < w.numElements(); ++i)
    first += double(w.data()[i]) * c.data()[i];
  EXPECT_NEAR(run.losses[0], first, 1e-5 * std::abs(first) + 1e-6);
}

} // namespace

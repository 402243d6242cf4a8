//===- ShardedEngineTest.cpp - the engine's lifecycle and its errors ------===//
//
// Every engine result is checked against the reference interpreter on the
// unsharded program with the same tensors.
//
//===----------------------------------------------------------------------===//

#include "shardc/Engine/ShardedEngine.h"
#include "shardc/Interpreter/Kernels.h"

#include "shardc/Dialect/FunctionInterface.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Runtime/ShardedExecution.h"
#include "shardc/Support/RandomTensor.h"
#include "shardc/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace shardc;

namespace {

/// The Megatron MLP of the seed: x replicated, w0 column-split, w1 left to
/// propagation.
constexpr const char *kMegatron = R"mlir(
shardc.mesh @mesh ["model"=4]
func.func @main(%x: tensor<8x16xf32> {shardc.name = "x"},
                %w0: tensor<16x32xf32> {shardc.name = "w0",
                  shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"}]>},
                %w1: tensor<32x16xf32> {shardc.name = "w1"})
    -> (tensor<8x16xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}) {
  %h = shardc.matmul %x, %w0 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %u = shardc.relu %h : tensor<8x32xf32>
  %y = shardc.matmul %u, %w1 : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
)mlir";

class ShardedEngineTest : public ::testing::Test {
protected:
  ShardedEngineTest() {
    ctx.getOrLoadDialect<ShardcDialect>();
    shardc::registerKernelModels(ctx);
    ctx.getOrLoadDialect<func::FuncDialect>();
    ctx.getDiagEngine().registerHandler([this](Diagnostic &diag) {
      errors += diag.str() + "\n";
      return success();
    });
  }

  OwningOpRef<ModuleOp> parse(const char *text) {
    return parseSourceString<ModuleOp>(text, &ctx);
  }

  /// An engine over `text` whose parameters are w0 and w1 unless
  /// `options` names others.
  std::unique_ptr<ShardedEngine> compile(const char *text,
                                         EngineOptions options = {}) {
    if (options.parameters.empty())
      options.parameters = {"w0", "w1"};
    FailureOr<std::unique_ptr<ShardedEngine>> engine =
        ShardedEngine::compile(parse(text), options);
    if (failed(engine))
      return nullptr;
    return std::move(*engine);
  }

  static Tensor random(ArrayRef<int64_t> shape, uint64_t seed) {
    return randomTensor(shape, seed, "t");
  }

  /// Weights for kMegatron.
  static std::map<std::string, Tensor> megatronCheckpoint() {
    std::map<std::string, Tensor> checkpoint;
    checkpoint.emplace("w0", random({16, 32}, 1));
    checkpoint.emplace("w1", random({32, 16}, 2));
    return checkpoint;
  }

  /// The unsharded program's outputs on the same tensors.
  SmallVector<Tensor> reference(const char *text, ArrayRef<Tensor> args) {
    OwningOpRef<ModuleOp> module = parse(text);
    return *interpretFunction(getEntryFunction(*module), args);
  }

  MLIRContext ctx;
  std::string errors;
};

TEST_F(ShardedEngineTest, ForwardMatchesTheUnshardedProgram) {
  EngineOptions options;
  options.training = false;
  auto engine = compile(kMegatron, options);
  ASSERT_TRUE(engine) << errors;
  EXPECT_EQ(engine->numDevices(), 4);
  EXPECT_EQ(engine->parameterNames(), (std::vector<std::string>{"w0", "w1"}));
  EXPECT_EQ(engine->inputNames(), (std::vector<std::string>{"x"}));

  std::map<std::string, Tensor> checkpoint = megatronCheckpoint();
  ASSERT_TRUE(succeeded(engine->loadCheckpoint(checkpoint))) << errors;

  for (uint64_t seed : {3, 4}) {
    Tensor x = random({8, 16}, seed);
    SmallVector<Tensor> args;
    args.push_back(x.clone());
    args.push_back(checkpoint.at("w0").clone());
    args.push_back(checkpoint.at("w1").clone());
    SmallVector<Tensor> want = reference(kMegatron, args);

    std::vector<Tensor> inputs;
    inputs.push_back(std::move(x));
    FailureOr<std::vector<Tensor>> got = engine->forward(inputs);
    ASSERT_TRUE(succeeded(got)) << errors;
    ASSERT_EQ(got->size(), 1u);
    EXPECT_LT(compareToReference((*got)[0], want[0]).first, 1e-5);
  }

  // The parameters come back as they went in.
  FailureOr<std::map<std::string, Tensor>> params = engine->parameters();
  ASSERT_TRUE(succeeded(params)) << errors;
  for (const auto &[name, tensor] : checkpoint)
    EXPECT_EQ(compareToReference(params->at(name), tensor).second, 0.0);
}

TEST_F(ShardedEngineTest, InferenceLoopStreamsEveryInput) {
  EngineOptions options;
  options.training = false;
  auto engine = compile(kMegatron, options);
  ASSERT_TRUE(engine) << errors;
  std::map<std::string, Tensor> checkpoint = megatronCheckpoint();
  ASSERT_TRUE(succeeded(engine->loadCheckpoint(checkpoint)));

  int next = 0;
  std::vector<Tensor> written;
  LogicalResult done = engine->inferenceLoop(
      [&]() -> FailureOr<std::optional<std::vector<Tensor>>> {
        if (next == 3)
          return std::optional<std::vector<Tensor>>();
        std::vector<Tensor> in;
        in.push_back(random({8, 16}, 10 + next++));
        return std::optional<std::vector<Tensor>>(std::move(in));
      },
      [&](std::vector<Tensor> out) {
        written.push_back(std::move(out[0]));
        return success();
      });
  ASSERT_TRUE(succeeded(done)) << errors;
  ASSERT_EQ(written.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    SmallVector<Tensor> args;
    args.push_back(random({8, 16}, 10 + i));
    args.push_back(checkpoint.at("w0").clone());
    args.push_back(checkpoint.at("w1").clone());
    EXPECT_LT(
        compareToReference(written[i], reference(kMegatron, args)[0]).first,
        1e-5);
  }
}

TEST_F(ShardedEngineTest, CheckpointErrorsNameTheParameter) {
  EngineOptions options;
  options.training = false;
  auto engine = compile(kMegatron, options);
  ASSERT_TRUE(engine) << errors;

  std::vector<Tensor> inputs;
  inputs.push_back(random({8, 16}, 3));
  EXPECT_TRUE(failed(engine->forward(inputs)));
  EXPECT_NE(errors.find("call loadCheckpoint first"), std::string::npos)
      << errors;

  std::map<std::string, Tensor> missing;
  missing.emplace("w0", random({16, 32}, 1));
  EXPECT_TRUE(failed(engine->loadCheckpoint(missing)));
  EXPECT_NE(errors.find("no entry for parameter 'w1'"), std::string::npos)
      << errors;

  std::map<std::string, Tensor> wrongShape;
  wrongShape.emplace("w0", random({16, 32}, 1));
  wrongShape.emplace("w1", random({16, 32}, 2));
  EXPECT_TRUE(failed(engine->loadCheckpoint(wrongShape)));
  EXPECT_NE(errors.find("parameter 'w1' must have shape [32, 16]"),
            std::string::npos)
      << errors;

  std::map<std::string, Tensor> unknown;
  unknown.emplace("w2", random({2}, 1));
  EXPECT_TRUE(failed(engine->loadCheckpoint(unknown)));
  EXPECT_NE(errors.find("'w2' is not a parameter"), std::string::npos)
      << errors;
}

TEST_F(ShardedEngineTest, CheckpointElementTypesAreCheckedAtLoad) {
  EngineOptions options;
  options.training = false;
  auto engine = compile(kMegatron, options);
  ASSERT_TRUE(engine) << errors;

  // An i32 array for an f32 parameter: refused when loaded, by name, not
  // at the next forward (never converted: docs/engine.md).
  std::map<std::string, Tensor> integers;
  integers.emplace("w0", random({16, 32}, 1));
  integers.emplace("w1", cantFail(Tensor::allocate({32, 16}, DType::I32)));
  EXPECT_TRUE(failed(engine->loadCheckpoint(integers)));
  EXPECT_NE(errors.find("parameter 'w1' holds f32 elements, got "
                        "tensor<32x16xi32>"),
            std::string::npos)
      << errors;

  // An input of the wrong element type, likewise, before any device runs.
  std::map<std::string, Tensor> good;
  good.emplace("w0", random({16, 32}, 1));
  good.emplace("w1", random({32, 16}, 2));
  ASSERT_TRUE(succeeded(engine->loadCheckpoint(good))) << errors;
  errors.clear();
  std::vector<Tensor> inputs;
  inputs.push_back(cantFail(Tensor::allocate({8, 16}, DType::I64)));
  EXPECT_TRUE(failed(engine->forward(inputs)));
  EXPECT_NE(errors.find("input 'x' holds f32 elements, got tensor<8x16xi64>"),
            std::string::npos)
      << errors;
}

/// kMegatron as an ONNX import with a buffer leaves it: the module records
/// "mask", a constant of the model (its value is folded in), whose entry a
/// torch state_dict still holds.
/// The module wraps kMegatron itself, so the two cannot drift apart.
std::string withBuffer() {
  return std::string("module attributes {shardc.buffers = [\"mask\"]} {\n") +
         kMegatron + "}\n";
}

TEST_F(ShardedEngineTest, CheckpointEntriesOfRecordedBuffersAreSkipped) {
  EngineOptions options;
  options.training = false;
  auto engine = compile(withBuffer().c_str(), options);
  ASSERT_TRUE(engine) << errors;

  std::map<std::string, Tensor> stateDict = megatronCheckpoint();
  stateDict.emplace("mask", random({8, 8}, 5));
  ASSERT_TRUE(succeeded(engine->loadCheckpoint(stateDict))) << errors;
  // The buffer's entry set nothing: the results are the program's on the
  // parameters alone.
  Tensor x = random({8, 16}, 3);
  SmallVector<Tensor> args;
  args.push_back(x.clone());
  args.push_back(stateDict.at("w0").clone());
  args.push_back(stateDict.at("w1").clone());
  SmallVector<Tensor> want = reference(withBuffer().c_str(), args);
  std::vector<Tensor> inputs;
  inputs.push_back(std::move(x));
  FailureOr<std::vector<Tensor>> got = engine->forward(inputs);
  ASSERT_TRUE(succeeded(got)) << errors;
  EXPECT_LT(compareToReference((*got)[0], want[0]).first, 1e-5);
  FailureOr<std::map<std::string, Tensor>> params = engine->parameters();
  ASSERT_TRUE(succeeded(params)) << errors;
  EXPECT_EQ(params->count("mask"), 0u);

  // An entry naming neither a parameter nor a recorded buffer still fails.
  stateDict.emplace("mask2", random({8, 8}, 6));
  EXPECT_TRUE(failed(engine->loadCheckpoint(stateDict)));
  EXPECT_NE(errors.find("'mask2' is not a parameter"), std::string::npos)
      << errors;
  // Without the record, "mask" is unknown too.
  auto plain = compile(kMegatron, options);
  ASSERT_TRUE(plain) << errors;
  stateDict.erase("mask2");
  EXPECT_TRUE(failed(plain->loadCheckpoint(stateDict)));
  EXPECT_NE(errors.find("'mask' is not a parameter"), std::string::npos)
      << errors;
}

TEST_F(ShardedEngineTest, UnknownParameterNameIsAnError) {
  EngineOptions options;
  options.training = false;
  options.parameters = {"w0", "bias"};
  EXPECT_FALSE(compile(kMegatron, options));
  EXPECT_NE(errors.find("parameter 'bias' is not an input of @main"),
            std::string::npos)
      << errors;
}

TEST_F(ShardedEngineTest, BackwardNeedsTraining) {
  EngineOptions options;
  options.training = false;
  auto engine = compile(kMegatron, options);
  ASSERT_TRUE(engine) << errors;
  std::vector<Tensor> dy;
  dy.push_back(random({8, 16}, 3));
  EXPECT_TRUE(failed(engine->backward(dy)));
  EXPECT_NE(errors.find("compiled without training"), std::string::npos)
      << errors;
}

TEST_F(ShardedEngineTest, BackwardMatchesTheUnshardedVjp) {
  for (BackendKind backend : {BackendKind::Sim, BackendKind::Threads}) {
    EngineOptions options;
    options.backend = backend;
    auto engine = compile(kMegatron, options);
    ASSERT_TRUE(engine) << errors;
    std::map<std::string, Tensor> checkpoint = megatronCheckpoint();
    ASSERT_TRUE(succeeded(engine->loadCheckpoint(checkpoint))) << errors;

    // The reference: the unsharded VJP on the same tensors.
    OwningOpRef<ModuleOp> global = parse(kMegatron);
    PassManager pm(&ctx);
    ShardcAutodiffOptions wrt;
    wrt.wrt = {"w0", "w1"};
    pm.addPass(createShardcAutodiff(wrt));
    ASSERT_TRUE(succeeded(pm.run(*global))) << errors;
    SmallVector<Tensor> args;
    args.push_back(random({8, 16}, 3));
    args.push_back(checkpoint.at("w0").clone());
    args.push_back(checkpoint.at("w1").clone());
    args.push_back(random({8, 16}, 4));
    FailureOr<SmallVector<Tensor>> want =
        interpretFunction(getEntryFunction(*global), args);
    ASSERT_TRUE(succeeded(want)) << errors;

    std::vector<Tensor> inputs, dy;
    inputs.push_back(args[0].clone());
    dy.push_back(args[3].clone());
    FailureOr<std::vector<Tensor>> out = engine->forward(inputs);
    ASSERT_TRUE(succeeded(out)) << errors;
    EXPECT_LT(compareToReference((*out)[0], (*want)[0]).first, 1e-5);
    FailureOr<std::map<std::string, Tensor>> grads = engine->backward(dy);
    ASSERT_TRUE(succeeded(grads)) << errors;
    EXPECT_LT(compareToReference(grads->at("w0"), (*want)[1]).first, 1e-5);
    EXPECT_LT(compareToReference(grads->at("w1"), (*want)[2]).first, 1e-5);

    // One backward per forward: the tape was used up.
    EXPECT_TRUE(failed(engine->backward(dy)));
    EXPECT_NE(errors.find("backward needs a forward first"), std::string::npos)
        << errors;
    // And trainStep needs a scalar loss first.
    EXPECT_TRUE(failed(engine->trainStep(inputs, OptimizerOptions())));
    EXPECT_NE(errors.find("first output is the scalar loss"), std::string::npos)
        << errors;
  }
}

} // namespace

namespace {

/// Data parallel with a mean-squared-error loss: batch split over "data",
/// the weight replicated.
constexpr const char *kDataParallelLoss = R"mlir(
shardc.mesh @mesh ["data"=4]
func.func @main(%x: tensor<8x16xf32> {shardc.name = "x",
                  shardc.sharding = #shardc.sharding<@mesh, [{"data"}, {}]>},
                %w0: tensor<16x4xf32> {shardc.name = "w0", shardc.param})
    -> tensor<f32> {
  %y = shardc.matmul %x, %w0 : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %s = shardc.mul %y, %y : tensor<8x4xf32>
  %l = shardc.reduce_sum %s dims = [0, 1] : (tensor<8x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
)mlir";

TEST_F(ShardedEngineTest, TrainStepIsTheSameWithAndWithoutZero) {
  // The same Adam steps with the state laid out like the (replicated)
  // weight and split over "data" (ZeRO-2) give the same weights, on the
  // simulator and on threads; ZeRO holds a quarter of the gradient and of
  // the moments per device.
  Tensor x = random({8, 16}, 5);
  std::vector<std::map<std::string, Tensor>> finals;
  std::vector<DeviceMemory> memories;
  for (BackendKind backend : {BackendKind::Sim, BackendKind::Threads})
    for (bool zero : {false, true}) {
      EngineOptions options;
      options.backend = backend;
      options.parameters = {"w0"};
      auto engine = compile(kDataParallelLoss, options);
      ASSERT_TRUE(engine) << errors;
      std::map<std::string, Tensor> checkpoint;
      checkpoint.emplace("w0", random({16, 4}, 6));
      ASSERT_TRUE(succeeded(engine->loadCheckpoint(checkpoint))) << errors;
      OptimizerOptions adam;
      adam.kind = OptimizerOptions::Kind::Adam;
      if (zero)
        adam.zeroAxes = {"data"};
      std::vector<Tensor> inputs;
      inputs.push_back(x.clone());
      for (int step = 0; step < 3; ++step)
        ASSERT_TRUE(succeeded(engine->trainStep(inputs, adam))) << errors;
      memories.push_back(engine->memoryPerDevice().front());
      FailureOr<std::map<std::string, Tensor>> params = engine->parameters();
      ASSERT_TRUE(succeeded(params)) << errors;
      finals.push_back(std::move(*params));

      // Only the learning rate may change between steps.
      OptimizerOptions sgd;
      EXPECT_TRUE(failed(engine->trainStep(inputs, sgd)));
      EXPECT_NE(errors.find("the optimizer settings changed"),
                std::string::npos)
          << errors;
      // loadCheckpoint starts over, with any optimizer.
      ASSERT_TRUE(succeeded(engine->loadCheckpoint(checkpoint))) << errors;
      EXPECT_TRUE(succeeded(engine->trainStep(inputs, sgd))) << errors;
    }
  // The weight moved, and equally in all four runs.
  EXPECT_GT(compareToReference(finals[0].at("w0"), random({16, 4}, 6)).first,
            1e-3);
  for (size_t i = 1; i < finals.size(); ++i)
    EXPECT_LT(compareToReference(finals[i].at("w0"), finals[0].at("w0")).first,
              1e-6);
  // 64 f32 parameters: replicated 256 B; gradient and moments 256 + 512 B,
  // or a quarter of that with ZeRO; + 8 B of Adam powers.
  for (size_t i = 0; i < memories.size(); ++i) {
    bool zero = i % 2 == 1;
    EXPECT_EQ(memories[i].parameters, 256);
    EXPECT_EQ(memories[i].gradients, zero ? 64 : 256);
    EXPECT_EQ(memories[i].optimizerState, zero ? 128 + 8 : 512 + 8);
  }
}

} // namespace

//===- PipelineTrainingTest.cpp - pipelined training from C++ -------------===//
//
// An embedder trains a model pipelined with one Driver call
// (shardc/Driver/PipelinedModel.h), as `shardc pipeline` does: the check
// against the unsharded steps passes, the whole parameters it returns are
// those steps' parameters, and every backend in the process trains the
// same parameters.
//
//===----------------------------------------------------------------------===//

#include "shardc/Driver/PipelinedModel.h"

#include "shardc/Dialect/ValueNames.h"
#include "shardc/Engine/Setup.h"
#include "shardc/Import/ModelLoader.h"
#include "shardc/Support/NumericCheck.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/SourceMgr.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace shardc;

namespace {

class PipelineTrainingTest : public ::testing::Test {
protected:
  PipelineTrainingTest() { setUpContext(context); }

  /// An 8-layer MLP on pipe=2 x data=2 x model=2: each stage's parameters
  /// are split over "model", its batch over "data".
  OwningOpRef<ModuleOp> loadMlp() {
    return loadModel(SHARDC_EXAMPLES_DIR "/mlp8_pipeline_3d.json",
                     ModelFormat::Json, sourceMgr, &context);
  }

  FailureOr<PipelinedModelTraining> train(BackendKind backend,
                                          StringRef optimizer = "sgd",
                                          int64_t steps = 1,
                                          StringRef recompute = "none") {
    module = loadMlp();
    if (!module)
      return failure();
    PipelineTrainingOptions options;
    options.backend = backend;
    options.pipeline.microbatches = 4;
    options.pipeline.optimizer.optimizer = optimizer.str();
    options.pipeline.optimizer.recompute = recompute.str();
    // The MLP's layers: pairs of blocks between the activations a1, a3, a5
    // (a3 crosses the stages: stage 1's first layer starts at its entry).
    options.pipeline.optimizer.layerInputs = "^a[135]$";
    options.steps = steps;
    return trainModelPipelined(*module, {}, /*seed=*/0, options);
  }

  MLIRContext context;
  llvm::SourceMgr sourceMgr;
  OwningOpRef<ModuleOp> module;
};

/// The largest max_rel_err of a training's whole parameters against its
/// reference steps' (on the parameters' family scale, as the check judges).
double worstAgainstReference(const PipelinedModelTraining &t) {
  std::vector<Tensor> want;
  for (const auto &entry : t.training.reference.next)
    want.push_back(entry.second.clone());
  double scale = familyScale(want), worst = 0;
  func::FuncOp func = t.plan.func;
  for (const auto &[index, expected] : t.training.reference.next) {
    std::string name = getArgumentName(func, index);
    auto got = t.values.parameters.find(name);
    EXPECT_NE(got, t.values.parameters.end()) << name;
    if (got != t.values.parameters.end())
      worst = std::max(
          worst,
          compareToReference(got->second, expected, nullptr, scale).first);
  }
  return worst;
}

TEST_F(PipelineTrainingTest, SimulatedStepMatchesTheUnshardedStep) {
  FailureOr<PipelinedModelTraining> t = train(BackendKind::Sim);
  ASSERT_TRUE(succeeded(t));
  EXPECT_TRUE(t->training.check.ok) << t->training.check.verdicts;
  EXPECT_EQ(t->values.parameters.size(), 8u);
  EXPECT_LE(worstAgainstReference(*t), 1e-4);
  EXPECT_LE(
      compareToReference(t->values.loss, t->training.reference.loss).first,
      1e-4);
  EXPECT_EQ(t->plan.program.numStages, 2);
  EXPECT_GT(t->training.run.simulation.stepSeconds, 0);
}

TEST_F(PipelineTrainingTest, ThreadsTrainTheSimulatorsParameters) {
  FailureOr<PipelinedModelTraining> sim = train(BackendKind::Sim, "adam", 2);
  ASSERT_TRUE(succeeded(sim));
  std::map<std::string, Tensor> simulated = std::move(sim->values.parameters);
  FailureOr<PipelinedModelTraining> threads =
      train(BackendKind::Threads, "adam", 2);
  ASSERT_TRUE(succeeded(threads));
  EXPECT_TRUE(threads->training.check.ok) << threads->training.check.verdicts;
  // The same stage programs with one BLAS thread per device: the same bits.
  for (const auto &[name, tensor] : simulated)
    EXPECT_EQ(
        compareToReference(threads->values.parameters.at(name), tensor).first,
        0)
        << name;
}

TEST_F(PipelineTrainingTest, RecomputeTrainsTheSameBits) {
  // Full recompute runs the copies of each layer's forward ops (their
  // tensor-parallel collectives included) in its backward action: the
  // same ops on the same operands, so the same parameters to the bit, on
  // the simulator and on threads.
  for (BackendKind backend : {BackendKind::Sim, BackendKind::Threads}) {
    FailureOr<PipelinedModelTraining> kept = train(backend, "adam", 2);
    ASSERT_TRUE(succeeded(kept));
    std::map<std::string, Tensor> expected = std::move(kept->values.parameters);
    int64_t keptBytes =
        kept->plan.program.stages[0].activationBytesPerMicrobatch;
    FailureOr<PipelinedModelTraining> recomputed =
        train(backend, "adam", 2, "full");
    ASSERT_TRUE(succeeded(recomputed));
    EXPECT_TRUE(recomputed->training.check.ok)
        << recomputed->training.check.verdicts;
    for (const auto &[name, tensor] : expected)
      EXPECT_EQ(
          compareToReference(recomputed->values.parameters.at(name), tensor)
              .first,
          0)
          << name;
    // Stage 0 keeps a1 and a3 rather than every activation of its layers.
    EXPECT_LT(recomputed->plan.program.stages[0].activationBytesPerMicrobatch,
              keptBytes);
  }
}

TEST_F(PipelineTrainingTest, AnInputWithoutValueOrSeedIsADiagnostic) {
  module = loadMlp();
  ASSERT_TRUE(module);
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  FailureOr<PipelinedModelTraining> t =
      trainModelPipelined(*module, {}, std::nullopt, {});
  EXPECT_TRUE(failed(t));
  EXPECT_EQ(message, "input 'x' has no value: give it, or a seed");
}

} // namespace

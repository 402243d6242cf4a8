//===- WorkflowTest.cpp - training and simulation from C++ ----------------===//
//
// An embedder trains a model, or simulates its sharded program, with one
// Driver call each (shardc/Driver/TrainWorkflow.h, SimulateWorkflow.h), as
// `shardc train` and `shardc simulate` do: the check against the unsharded
// program passes, and a wrong plan (an all_reduce dropped) is caught.
//
//===----------------------------------------------------------------------===//

#include "shardc/Driver/SeededInputs.h"
#include "shardc/Driver/SimulateWorkflow.h"
#include "shardc/Driver/TrainWorkflow.h"

#include "shardc/Dialect/FunctionInterface.h"
#include "shardc/Engine/Setup.h"
#include "shardc/Import/ModelLoader.h"
#include "shardc/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/SourceMgr.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace shardc;

namespace {

class WorkflowTest : public ::testing::Test {
protected:
  WorkflowTest() { setUpContext(context); }

  /// The example `name`, its composites expanded (the reference
  /// interpreter runs primitives), and its inputs drawn from seed 0.
  OwningOpRef<ModuleOp> load(StringRef name, SmallVector<Tensor> &inputs) {
    std::string path = (SHARDC_EXAMPLES_DIR "/" + name).str();
    OwningOpRef<ModuleOp> module =
        loadModel(path, ModelFormat::Json, sourceMgr, &context);
    if (!module)
      return nullptr;
    PassManager pm(&context, ModuleOp::getOperationName());
    pm.addPass(createShardcDecompose());
    if (failed(pm.run(*module)))
      return nullptr;
    FailureOr<SmallVector<Tensor>> bound =
        bindInputs(getEntryFunction(*module), {}, /*seed=*/0);
    if (failed(bound))
      return nullptr;
    inputs = std::move(*bound);
    return module;
  }

  MLIRContext context;
  llvm::SourceMgr sourceMgr;
};

TEST_F(WorkflowTest, TrainingMatchesTheUnshardedSteps) {
  SmallVector<Tensor> inputs;
  OwningOpRef<ModuleOp> module = load("mlp_train.json", inputs);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(checkLossFunction(getEntryFunction(*module))));
  TrainWorkflowOptions options;
  options.optimizer.kind = OptimizerOptions::Kind::Adam;
  options.steps = 5;
  std::string report;
  llvm::raw_string_ostream os(report);
  FailureOr<bool> ok = runTrainWorkflow(std::move(module), inputs, options, os);
  ASSERT_TRUE(succeeded(ok));
  EXPECT_TRUE(*ok) << report;
  EXPECT_NE(report.find("step 5/5 loss"), std::string::npos) << report;
  EXPECT_NE(report.find("final parameters vs the unsharded run"),
            std::string::npos)
      << report;
}

TEST_F(WorkflowTest, SimulationMatchesTheUnshardedProgram) {
  SmallVector<Tensor> inputs;
  OwningOpRef<ModuleOp> module = load("megatron_mlp.json", inputs);
  ASSERT_TRUE(module);
  SimulateWorkflowOptions options;
  options.quiet = true;
  std::string report;
  llvm::raw_string_ostream os(report);
  FailureOr<bool> ok =
      runSimulateWorkflow(std::move(module), inputs, options, os);
  ASSERT_TRUE(succeeded(ok));
  EXPECT_TRUE(*ok) << report;
  EXPECT_NE(report.find("devices=4 collectives=1"), std::string::npos)
      << report;
}

/// Each device keeps its partial sum: the devices that should hold the
/// same replica disagree, and the run says so.
TEST_F(WorkflowTest, SimulationCatchesAWrongPlan) {
  SmallVector<Tensor> inputs;
  OwningOpRef<ModuleOp> module = load("megatron_mlp.json", inputs);
  ASSERT_TRUE(module);
  SimulateWorkflowOptions options;
  options.quiet = true;
  options.dropAllReduce = 0;
  std::string errors;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    errors += diag.str() + "\n";
    return success();
  });
  std::string report;
  llvm::raw_string_ostream os(report);
  FailureOr<bool> ok =
      runSimulateWorkflow(std::move(module), inputs, options, os);
  EXPECT_TRUE(failed(ok) || !*ok) << report;
  EXPECT_NE(errors.find("replicas disagree"), std::string::npos) << errors;
}

} // namespace

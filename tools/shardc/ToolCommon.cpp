//===- ToolCommon.cpp - what the shardc subcommands share -----------------===//

#include "ToolCommon.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Transforms/Passes.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> autodiff(
    "autodiff",
    cl::desc("First rewrite the model into its backward pass "
             "(--shardc-autodiff): outputs, then the gradient of each input "
             "named (--autodiff=w0,w1), else of each \"param\" input, else "
             "of all; one cotangent input <output>.grad per output"),
    cl::ValueOptional, cl::value_desc("input,..."), cl::init(""),
    cl::sub(shardc::compileCommand), cl::sub(shardc::runCommand),
    cl::sub(shardc::simulateCommand), cl::sub(shardc::execCommand));

static cl::opt<std::string> trainStep(
    "train-step",
    cl::desc("First rewrite the model, whose first output is a scalar loss, "
             "into one optimizer step (--shardc-optimizer): gradients of the "
             "\"param\" inputs, then the sgd or adam update; inputs "
             "learning_rate and the optimizer state, outputs the gradients "
             "and every parameter's and state's next value"),
    cl::value_desc("sgd|adam"), cl::init(""), cl::sub(shardc::compileCommand),
    cl::sub(shardc::runCommand), cl::sub(shardc::simulateCommand),
    cl::sub(shardc::execCommand));

static cl::list<std::string> zeroAxes(
    "zero-axes",
    cl::desc("Split the optimizer state (and the update) over these mesh "
             "axes as well, ZeRO-1/2 style: gradients are reduce-scattered "
             "and the new parameters all-gathered"),
    cl::CommaSeparated, cl::value_desc("axis,..."),
    cl::sub(shardc::compileCommand), cl::sub(shardc::runCommand),
    cl::sub(shardc::simulateCommand), cl::sub(shardc::execCommand),
    cl::sub(shardc::trainCommand));

ArrayRef<std::string> shardc::getZeroAxes() { return zeroAxes; }

bool shardc::isAutodiffRequested() {
  return autodiff.getNumOccurrences() > 0 || trainStep.getNumOccurrences() > 0;
}

LogicalResult shardc::addCommandPipeline(OpPassManager &pm,
                                         bool propagateFirst,
                                         ShardingStage then, bool explain) {
  if (!zeroAxes.empty() && !trainStep.getNumOccurrences()) {
    llvm::errs() << "shardc: error: --zero-axes shards optimizer state; it "
                    "needs --train-step\n";
    return failure();
  }
  if (!isAutodiffRequested()) {
    buildShardingStage(pm, then, explain);
    return success();
  }
  if (autodiff.getNumOccurrences() && trainStep.getNumOccurrences()) {
    llvm::errs() << "shardc: error: give --autodiff (the backward pass) or "
                    "--train-step (backward and update), not both\n";
    return failure();
  }
  if (trainStep.getNumOccurrences()) {
    if (trainStep != "sgd" && trainStep != "adam") {
      llvm::errs() << "shardc: error: unknown --train-step '" << trainStep
                   << "' (expected sgd or adam)\n";
      return failure();
    }
    ShardcOptimizerOptions options;
    options.optimizer = trainStep;
    options.zeroAxes.assign(zeroAxes.begin(), zeroAxes.end());
    buildTrainPipeline(pm, options, propagateFirst, then, explain);
    return success();
  }
  ShardcAutodiffOptions options;
  SmallVector<StringRef> names;
  StringRef(autodiff).split(names, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef name : names)
    options.wrt.push_back(name.trim().str());
  buildAutodiffPipeline(pm, options, propagateFirst, then, explain);
  return success();
}

LogicalResult shardc::applyAutodiff(ModuleOp module, bool propagateFirst) {
  if (!isAutodiffRequested())
    return success();
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  if (failed(addCommandPipeline(pm, propagateFirst, ShardingStage::None,
                                /*explain=*/false)))
    return failure();
  return pm.run(module);
}

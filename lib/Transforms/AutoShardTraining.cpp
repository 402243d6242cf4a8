//===- AutoShardTraining.cpp - a training model's plan, pinned ------------===//
//
// The engine compiles a model's forward, backward and step programs one by
// one from the same annotated model, so they agree on every parameter's
// layout. `--auto-shard` there plans the whole training step once (forward,
// backward and the optimizer update, as `--train-step --auto-shard` does)
// and writes the layouts the plan gives the model's arguments and results
// back onto the model as its annotations; each program is then compiled as
// if the user had written them (docs/auto-sharding.md, "Engine").
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/FunctionInterface.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Transforms/AutoShard.h"
#include "shardc/Transforms/Pipelines.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace shardc;

LogicalResult
shardc::pinAutoShardPlan(ModuleOp module, const ShardcTrainingStepOptions *step,
                         const ShardcAutoShardOptions &autoShard) {
  OwningOpRef<ModuleOp> planned = module.clone();
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  if (step)
    buildTrainPipeline(pm, *step, /*propagateFirst=*/true,
                       ShardingStage::Propagate, /*explain=*/false,
                       &autoShard);
  else
    buildPropagatePipeline(pm, /*explain=*/false, &autoShard);
  if (failed(pm.run(*planned)))
    return failure();
  func::FuncOp func = getEntryFunction(module);
  func::FuncOp done = getEntryFunction(*planned);
  if (!func || !done)
    return failure();
  StringRef key = ShardcDialect::getShardingAttrName();
  // The step's arguments are the model's and then the learning rate and
  // the optimizer state: matched by name.
  llvm::StringMap<Attribute> byName;
  for (unsigned i = 0; i < done.getNumArguments(); ++i)
    if (Attribute s = done.getArgAttr(i, key))
      byName[getArgumentName(done, i)] = s;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (!func.getArgAttr(i, key))
      if (Attribute s = byName.lookup(getArgumentName(func, i)))
        func.setArgAttr(i, key, s);
  // Its first results are the model's (the loss and the others).
  for (unsigned i = 0; i < func.getNumResults() && i < done.getNumResults();
       ++i)
    if (!func.getResultAttr(i, key))
      if (Attribute s = done.getResultAttr(i, key))
        func.setResultAttr(i, key, s);
  return success();
}

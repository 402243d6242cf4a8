//===- Pipelines.cpp - the pass sequences the tools and engine run --------===//

#include "shardc/Transforms/Pipelines.h"

#include "shardc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

void shardc::addShardingPipeline(OpPassManager &pm, bool partition,
                                 bool explain) {
  ShardcPropagateOptions propagate;
  propagate.explain = explain;
  pm.addPass(createShardcPropagate(propagate));
  if (partition) {
    pm.addPass(createShardcPartition());
    pm.addNestedPass<func::FuncOp>(createShardcCleanup());
  }
}

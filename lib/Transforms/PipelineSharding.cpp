//===- PipelineSharding.cpp - sharding a pipeline stage's halves ----------===//

#include "PipelineSharding.h"

#include "shardc/Dialect/ShardcOps.h"
#include "shardc/Dialect/ValueNames.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace shardc;

/// Whether `sharding` splits or sums over `axis`.
static bool usesAxis(ShardingAttr sharding, StringRef axis) {
  for (size_t d = 0; d < sharding.getRank(); ++d)
    if (llvm::is_contained(sharding.getDimAxes(d), axis))
      return true;
  return llvm::is_contained(sharding.getPartialAxes(), axis);
}

FailureOr<bool> shardc::statesShardings(func::FuncOp func, StringRef axis) {
  StringRef name = ShardcDialect::getShardingAttrName();
  bool any = false;
  auto check = [&](ShardingAttr sharding, auto emit) -> LogicalResult {
    if (!sharding)
      return success();
    any = true;
    if (!usesAxis(sharding, axis))
      return success();
    emit() << " is sharded over the pipeline axis \"" << axis
           << "\" (" << sharding
           << "); a device's coordinate on it is its stage, so only the "
              "other axes shard within a stage";
    return failure();
  };
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (failed(check(func.getArgAttrOfType<ShardingAttr>(i, name), [&] {
          return func.emitError() << "input '" << getArgumentName(func, i)
                                  << "'";
        })))
      return failure();
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (failed(check(func.getResultAttrOfType<ShardingAttr>(i, name),
                     [&] { return func.emitError() << "output #" << i; })))
      return failure();
  WalkResult walk = func.walk([&](Operation *op) {
    ShardingAttr sharding = op->getAttrOfType<ShardingAttr>(name);
    if (auto constraint = dyn_cast<ShardingConstraintOp>(op))
      sharding = constraint.getSharding();
    if (failed(check(sharding, [&] {
          return op->emitError() << describeValue(op->getResult(0));
        })))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return any;
}

LogicalResult shardc::shardFunctionAlone(func::FuncOp fn, MeshOp mesh,
                                         ShardingStage stage) {
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(fn.getLoc());
  OpBuilder::atBlockEnd(scratch->getBody()).clone(*mesh);
  Block *home = fn->getBlock();
  Operation *next = fn->getNextNode();
  fn->remove();
  scratch->getBody()->push_back(fn);
  PassManager pm(fn.getContext(), ModuleOp::getOperationName());
  buildShardingStage(pm, stage);
  LogicalResult result = pm.run(*scratch);
  fn->remove();
  if (next)
    home->getOperations().insert(Block::iterator(next), fn);
  else
    home->push_back(fn);
  return result;
}

ShardingAttr shardc::getStatedSharding(Value v) {
  StringRef name = ShardcDialect::getShardingAttrName();
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    return fn ? fn.getArgAttrOfType<ShardingAttr>(arg.getArgNumber(), name)
              : ShardingAttr();
  }
  return v.getDefiningOp()->getAttrOfType<ShardingAttr>(name);
}

/// Fails at `fn` when `sharding` does not split `type` evenly.
static LogicalResult checkEven(func::FuncOp fn, MeshOp mesh,
                               ShardingAttr sharding, Type type,
                               llvm::function_ref<std::string()> what) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!sharding || !tensor)
    return success();
  for (size_t d = 0; d < sharding.getRank() && d < size_t(tensor.getRank());
       ++d) {
    int64_t split = 1;
    for (StringRef a : sharding.getDimAxes(d))
      split *= std::max<int64_t>(mesh.getAxisSize(a), 1);
    // At the location alone: the function is the builder's scratch copy.
    if (tensor.getDimSize(d) % split)
      return mlir::emitError(fn.getLoc())
             << what() << " " << tensor << " in a pipeline stage: dim " << d
             << " of size " << tensor.getDimSize(d)
             << " does not split evenly over " << split
             << " devices; choose a batch and micro-batch count whose "
                "micro-batch divides by the axes sharding it";
  }
  return success();
}

LogicalResult
shardc::partitionStageFunction(func::FuncOp fn, MeshOp mesh,
                               ArrayRef<ShardingAttr> argShardings,
                               ArrayRef<ShardingAttr> resultShardings) {
  StringRef name = ShardcDialect::getShardingAttrName();
  for (auto [i, sharding] : llvm::enumerate(argShardings)) {
    if (!sharding)
      continue;
    if (failed(checkEven(fn, mesh, sharding, fn.getArgumentTypes()[i], [&] {
          return "'" + getArgumentName(fn, i) + "'";
        })))
      return failure();
    fn.setArgAttr(i, name, sharding);
  }
  for (auto [i, sharding] : llvm::enumerate(resultShardings)) {
    if (!sharding)
      continue;
    if (failed(checkEven(fn, mesh, sharding, fn.getResultTypes()[i], [&] {
          return "result #" + std::to_string(i);
        })))
      return failure();
    fn.setResultAttr(i, name, sharding);
  }
  return shardFunctionAlone(fn, mesh, ShardingStage::Partition);
}

//===- PipelineUpdate.cpp - the optimizer step of a pipeline stage --------===//

#include "PipelineUpdate.h"

#include "shardc/Dialect/TensorOpBuilders.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace shardc;

FailureOr<OwningOpRef<ModuleOp>>
shardc::buildOptimizerStep(Location loc, MeshOp mesh, ArrayRef<Type> paramTypes,
                           ArrayRef<std::string> paramNames,
                           const ShardcTrainingStepOptions &options) {
  MLIRContext *ctx = loc.getContext();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  OpBuilder b = OpBuilder::atBlockEnd(module->getBody());
  b.clone(*mesh);
  SmallVector<Type> argTypes(paramTypes);
  argTypes.append(paramTypes.begin(), paramTypes.end());
  auto scalar = RankedTensorType::get(
      {}, cast<RankedTensorType>(paramTypes.front()).getElementType());
  auto fn = func::FuncOp::create(b, loc, "update",
                                 FunctionType::get(ctx, argTypes, {scalar}));
  Block *entry = fn.addEntryBlock();
  size_t n = paramTypes.size();
  for (size_t k = 0; k < n; ++k) {
    fn.setArgAttr(k, ShardcDialect::getNameAttrName(),
                  StringAttr::get(ctx, paramNames[k]));
    fn.setArgAttr(k, ShardcDialect::getParamAttrName(), UnitAttr::get(ctx));
    fn.setArgAttr(n + k, ShardcDialect::getNameAttrName(),
                  StringAttr::get(ctx, paramNames[k] + ".summed_grad"));
  }
  b.setInsertionPointToEnd(entry);
  Value loss;
  for (size_t k = 0; k < n; ++k) {
    Value product = buildMul(b, loc, entry->getArgument(k),
                             entry->getArgument(n + k));
    auto all = llvm::to_vector(
        llvm::seq<int64_t>(0, cast<RankedTensorType>(paramTypes[k]).getRank()));
    Value sum = buildReduceSum(b, loc, product, all);
    loss = loss ? buildAdd(b, loc, loss, sum) : sum;
  }
  func::ReturnOp::create(b, loc, loss);
  PassManager pm(ctx, ModuleOp::getOperationName());
  ShardcTrainingStepOptions step = options;
  step.params.clear();
  step.zeroAxes.clear();
  pm.addPass(createShardcTrainingStep(step));
  if (failed(pm.run(*module)))
    return mlir::emitError(loc) << "cannot build the " << options.optimizer
                                << " update of a pipeline stage";
  // The gradient of the linear loss is g itself: the update reads g, and
  // the VJP's product with a broadcast 1 is left dead for the caller to
  // drop (with the loss).
  Operation *ret = fn.getBody().front().getTerminator();
  for (size_t k = 0; k < n; ++k)
    ret->getOperand(1 + k).replaceAllUsesWith(fn.getArgument(n + k));
  return module;
}

//===- FunctionInterface.cpp - a program's entry function -----------------===//

#include "shardc/Dialect/FunctionInterface.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ShardcOps.h"

using namespace mlir;

func::FuncOp shardc::getEntryFunction(ModuleOp module) {
  auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
  for (func::FuncOp f : funcs)
    if (f.getSymName() == "main")
      return f;
  if (funcs.size() == 1)
    return funcs.front();
  emitError(module.getLoc())
      << (funcs.empty() ? "the model has no function"
                        : "the model has several functions and none is @main");
  return nullptr;
}

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

void shardc::copyInterfaceShardings(func::FuncOp from, func::FuncOp to) {
  StringRef key = ShardcDialect::getShardingAttrName();
  for (unsigned i = 0; i < from.getNumArguments(); ++i)
    if (Attribute s = from.getArgAttr(i, key))
      to.setArgAttr(i, key, s);
  for (unsigned i = 0; i < from.getNumResults(); ++i)
    if (Attribute s = from.getResultAttr(i, key))
      to.setResultAttr(i, key, s);
}

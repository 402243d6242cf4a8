//===- FunctionInterface.cpp - a program's entry, inputs and outputs ------===//

#include "shardc/Dialect/FunctionInterface.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ShardcOps.h"

#include "llvm/ADT/StringSet.h"

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

std::string shardc::getInputName(func::FuncOp func, unsigned i) {
  if (auto name = func.getArgAttrOfType<StringAttr>(
          i, ShardcDialect::getNameAttrName()))
    return name.getValue().str();
  if (StringRef name = getNameFromLoc(func.getArgument(i).getLoc());
      !name.empty())
    return name.str();
  return "arg" + std::to_string(i);
}

std::vector<std::string> shardc::getOutputNames(func::FuncOp func) {
  std::vector<std::string> names;
  llvm::StringSet<> used;
  Operation *ret = func.getBody().front().getTerminator();
  for (auto [i, v] : llvm::enumerate(ret->getOperands())) {
    std::string name;
    if (auto arg = dyn_cast<BlockArgument>(v))
      name = getInputName(func, arg.getArgNumber());
    else
      name = getNameFromLoc(v.getLoc()).str();
    if (name.empty())
      name = "output" + std::to_string(i);
    std::string unique = name;
    for (int k = 1; used.contains(unique); ++k)
      unique = name + "_" + std::to_string(k);
    used.insert(unique);
    names.push_back(unique);
  }
  return names;
}

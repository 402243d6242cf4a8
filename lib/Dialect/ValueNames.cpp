//===- ValueNames.cpp - the names users know inputs and outputs by --------===//

#include "shardc/Dialect/ValueNames.h"
#include "shardc/Dialect/ShardcDialect.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;

std::string shardc::getArgumentName(func::FuncOp func, unsigned i) {
  if (auto name = func.getArgAttrOfType<StringAttr>(
          i, ShardcDialect::getNameAttrName()))
    return name.getValue().str();
  if (StringRef name = getNameFromLoc(func.getArgument(i).getLoc());
      !name.empty())
    return name.str();
  return "arg" + std::to_string(i);
}

std::vector<std::string> shardc::getResultNames(func::FuncOp func) {
  std::vector<std::string> names;
  llvm::StringSet<> used;
  Operation *ret = func.getBody().front().getTerminator();
  for (auto [i, v] : llvm::enumerate(ret->getOperands())) {
    std::string name;
    if (auto arg = dyn_cast<BlockArgument>(v))
      name = getArgumentName(func, arg.getArgNumber());
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

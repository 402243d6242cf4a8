//===- ValueNames.cpp - the names users know values by --------------------===//

#include "shardc/Dialect/ValueNames.h"
#include "shardc/Dialect/ShardcDialect.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace shardc;

StringRef shardc::getNameFromLoc(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().getValue();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (StringRef n = getNameFromLoc(inner); !n.empty())
        return n;
  return "";
}

/// The `shardc.name` of a function argument, or a null attribute.
static StringAttr getArgumentNameAttr(BlockArgument arg) {
  auto func = dyn_cast_or_null<func::FuncOp>(arg.getOwner()->getParentOp());
  if (!func)
    return {};
  return func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                           ShardcDialect::getNameAttrName());
}

StringRef shardc::getSourceName(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    if (StringAttr name = getArgumentNameAttr(arg))
      return name.getValue();
  return getNameFromLoc(value.getLoc());
}

void shardc::setResultNameFromLoc(Operation *op,
                                  OpAsmSetValueNameFn setNameFn) {
  if (op->getNumResults() != 1)
    return;
  StringRef name = getNameFromLoc(op->getLoc());
  // MLIR only accepts identifier-like SSA names; others print as %N.
  if (!name.empty() && (isalpha(name[0]) || name[0] == '_') &&
      llvm::all_of(name, [](char c) {
        return isalnum(c) || c == '_' || c == '.' || c == '$' || c == '-';
      }))
    setNameFn(op->getResult(0), name);
}

std::string shardc::describeValue(Value value) {
  std::string out;
  llvm::raw_string_ostream os(out);
  if (auto arg = dyn_cast<BlockArgument>(value))
    if (StringAttr name = getArgumentNameAttr(arg)) {
      os << "input \"" << name.getValue() << "\"";
      return out;
    }
  if (StringRef name = getNameFromLoc(value.getLoc()); !name.empty()) {
    os << "value \"" << name << "\"";
    return out;
  }
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    os << "argument #" << arg.getArgNumber();
    return out;
  }
  auto result = cast<OpResult>(value);
  os << "result #" << result.getResultNumber() << " of '"
     << result.getOwner()->getName() << "'";
  return out;
}

std::string shardc::getArgumentName(func::FuncOp func, unsigned i) {
  if (StringRef name = getSourceName(func.getArgument(i)); !name.empty())
    return name.str();
  return "arg" + std::to_string(i);
}

SmallVector<int64_t> shardc::getCheckpointShape(func::FuncOp func, unsigned i) {
  if (auto shape = func.getArgAttrOfType<DenseI64ArrayAttr>(
          i, ShardcDialect::getCheckpointShapeAttrName()))
    return SmallVector<int64_t>(shape.asArrayRef());
  return SmallVector<int64_t>(
      cast<ShapedType>(func.getArgumentTypes()[i]).getShape());
}

std::vector<std::string> shardc::getModelBufferNames(Operation *op) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    module = op->getParentOfType<ModuleOp>();
  std::vector<std::string> names;
  if (!module)
    return names;
  // The verifier keeps it an array of strings.
  if (auto list =
          module->getAttrOfType<ArrayAttr>(ShardcDialect::getBuffersAttrName()))
    for (Attribute name : list)
      if (auto s = dyn_cast<StringAttr>(name))
        names.push_back(s.str());
  return names;
}

std::vector<std::string> shardc::getResultNames(func::FuncOp func) {
  std::vector<std::string> names;
  UniqueNames unique;
  Operation *ret = func.getBody().front().getTerminator();
  for (auto [i, v] : llvm::enumerate(ret->getOperands())) {
    std::string name = isa<BlockArgument>(v)
                           ? getArgumentName(func, cast<BlockArgument>(v)
                                                       .getArgNumber())
                           : getSourceName(v).str();
    if (name.empty())
      name = "output" + std::to_string(i);
    names.push_back(unique.claim(name));
  }
  return names;
}

std::string UniqueNames::claim(StringRef preferred) {
  std::string name = preferred.str();
  for (unsigned k = 1; !used.insert(name).second; ++k)
    name = preferred.str() + "_" + std::to_string(k);
  return name;
}

//===- OpCatalog.cpp - which registered ops the generator draws -----------===//

#include "OpCatalog.h"

#include "shardc/Dialect/ShardcDialect.h"

#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace shardc;

namespace {

/// The ops the generator does not draw, each with why. The list must stay
/// exact: an op drawn again is reported until it is taken out.
const llvm::StringMap<StringRef> &notDrawn() {
  static const llvm::StringMap<StringRef> reasons = {
      {"shardc.compare", "an i1 result: the generator keeps f32 values only"},
      {"shardc.select", "needs an i1 predicate (compare)"},
      {"shardc.convert", "the generator keeps f32 values only"},
      {"shardc.axis_index",
       "partitioned programs only; not drawn into global ones"},
      {"shardc.send", "partitioned programs only; not drawn into global ones"},
      {"shardc.recv", "partitioned programs only; not drawn into global ones"},
  };
  return reasons;
}

} // namespace

OpCatalog::OpCatalog(MLIRContext &ctx) {
  for (RegisteredOperationName name : ctx.getRegisteredOperations())
    if (name.getDialectNamespace() == ShardcDialect::getDialectNamespace())
      drawn[name.getStringRef().str()] = 0;
}

void OpCatalog::count(ModuleOp module) {
  module->walk([&](Operation *op) {
    auto it = drawn.find(op->getName().getStringRef().str());
    if (it != drawn.end())
      ++it->second;
  });
}

bool OpCatalog::print(llvm::raw_ostream &os) const {
  bool complete = true;
  os << "difftest: ops drawn:";
  for (const auto &[name, count] : drawn)
    if (count)
      os << " " << name << "=" << count;
  os << "\n";
  for (const auto &[name, count] : drawn) {
    auto reason = notDrawn().find(name);
    if (reason != notDrawn().end() && count) {
      os << "difftest: " << name
         << " is declared not drawn but was drawn: take it out of the "
            "list in OpCatalog.cpp\n";
      complete = false;
    } else if (reason != notDrawn().end()) {
      os << "difftest: not drawn: " << name << ": " << reason->second << "\n";
    } else if (!count) {
      os << "difftest: " << name
         << " is never drawn and declares no reason (OpCatalog.cpp)\n";
      complete = false;
    }
  }
  for (const auto &entry : notDrawn())
    if (!drawn.count(entry.getKey().str())) {
      os << "difftest: " << entry.getKey()
         << " is declared not drawn but is not a registered op\n";
      complete = false;
    }
  return complete;
}

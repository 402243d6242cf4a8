//===- AutoShardStarts.cpp - the standard layouts, propagated -------------===//
//
// Each standard layout is laid out on a copy of the function's module with
// the user's annotations put back, then propagated, so that every value
// has the sharding the hand-written layout gives it (AutoShardStarts.h).
//
//===----------------------------------------------------------------------===//

#include "AutoShardStarts.h"
#include "Propagation.h"

#include "shardc/Dialect/FunctionInterface.h"
#include "shardc/Transforms/StandardLayouts.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"

#include <thread>

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;

namespace {
/// The tensor-producing ops of `func`'s body, in order.
SmallVector<Operation *> bodyOps(func::FuncOp func) {
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().front().without_terminator())
    ops.push_back(&op);
  return ops;
}

/// Puts `from`'s shardings back on `to`, a copy of it laid out otherwise.
void restoreAnnotations(func::FuncOp from, func::FuncOp to) {
  copyInterfaceShardings(from, to);
  StringRef key = ShardcDialect::getShardingAttrName();
  for (auto [a, b] : llvm::zip(bodyOps(from), bodyOps(to)))
    if (Attribute s = a->getAttr(key))
      b->setAttr(key, s);
}
} // namespace

std::vector<LaidOutShardings>
shardc::detail::propagateStandardLayouts(func::FuncOp func, MeshOp mesh) {
  std::vector<LaidOutShardings> out;
  auto module = func->getParentOfType<ModuleOp>();
  if (!module)
    return out;
  StringRef key = ShardcDialect::getShardingAttrName();
  for (const NamedStandardLayout &layout : getStandardLayouts()) {
    OwningOpRef<ModuleOp> copy = module.clone();
    auto laidOut = copy->lookupSymbol<func::FuncOp>(func.getSymNameAttr());
    MeshOp copyMesh = copy->lookupSymbol<MeshOp>(mesh.getSymNameAttr());
    if (!laidOut || !copyMesh ||
        !applyStandardLayout(laidOut, copyMesh, layout.layout))
      continue;
    restoreAnnotations(func, laidOut);
    // A layout the user's annotations contradict is only not a start. The
    // context may be planning other functions on other threads (the whole
    // plan search's solves): only this thread's diagnostics are dropped.
    std::thread::id self = std::this_thread::get_id();
    ScopedDiagnosticHandler quiet(func.getContext(), [self](Diagnostic &) {
      return success(std::this_thread::get_id() == self);
    });
    MeshTable meshes(*copy);
    FactorShardingCache factorCache;
    FunctionPropagation propagation(laidOut, meshes, factorCache,
                                    /*explain=*/false);
    if (failed(propagation.run()))
      continue;
    LaidOutShardings &s = out.emplace_back();
    s.layout = layout.name;
    for (unsigned i = 0; i < laidOut.getNumArguments(); ++i)
      s.arguments.push_back(laidOut.getArgAttrOfType<ShardingAttr>(i, key));
    for (Operation *op : bodyOps(laidOut))
      s.opResults.push_back(op->getAttrOfType<ShardingAttr>(key));
    for (unsigned i = 0; i < laidOut.getNumResults(); ++i)
      s.functionResults.push_back(
          laidOut.getResultAttrOfType<ShardingAttr>(i, key));
  }
  return out;
}

//===- Decompose.cpp - composites into primitives -------------------------===//
//
// Every composite op builds its own expansion (DecomposableOpInterface);
// this pass only applies it, so a new composite needs nothing here.
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Transforms/Passes.h"

namespace shardc {
#define GEN_PASS_DEF_SHARDCDECOMPOSE
#include "shardc/Transforms/Passes.h.inc"
} // namespace shardc

using namespace mlir;
using namespace shardc;

namespace {
struct DecomposePass : shardc::impl::ShardcDecomposeBase<DecomposePass> {
  void runOnOperation() override {
    SmallVector<DecomposableOpInterface> composites;
    getOperation()->walk(
        [&](DecomposableOpInterface op) { composites.push_back(op); });
    StringRef shardingName = ShardcDialect::getShardingAttrName();
    for (DecomposableOpInterface composite : composites) {
      Operation *op = composite.getOperation();
      OpBuilder b(op);
      Value replacement = composite.decompose(b);
      if (!replacement || replacement.getType() != op->getResult(0).getType()) {
        op->emitError("internal error: the expansion of ")
            << op->getName() << " does not have the op's result type";
        return signalPassFailure();
      }
      // The user's sharding of the composite's result is the expansion's.
      if (Attribute sharding = op->getAttr(shardingName))
        if (Operation *def = replacement.getDefiningOp())
          def->setAttr(shardingName, sharding);
      op->getResult(0).replaceAllUsesWith(replacement);
      op->erase();
    }
  }
};
} // namespace

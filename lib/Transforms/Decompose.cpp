//===- Decompose.cpp - composites into primitives -------------------------===//
//
// Every composite op builds its own expansion (DecomposableOpInterface);
// this pass only applies it, so a new composite needs nothing here.
//
//===----------------------------------------------------------------------===//

#include "shardc/Transforms/Decompose.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Transforms/Passes.h"

namespace shardc {
#define GEN_PASS_DEF_SHARDCDECOMPOSE
#include "shardc/Transforms/Passes.h.inc"
} // namespace shardc

using namespace mlir;
using namespace shardc;

FailureOr<Value> shardc::decomposeComposite(DecomposableOpInterface composite) {
  Operation *op = composite.getOperation();
  OpBuilder b(op);
  Value replacement = composite.decompose(b);
  if (!replacement || replacement.getType() != op->getResult(0).getType())
    return op->emitError("internal error: the expansion of ")
           << op->getName() << " does not have the op's result type";
  // The user's sharding of the composite's result is the expansion's.
  StringRef shardingName = ShardcDialect::getShardingAttrName();
  if (Attribute sharding = op->getAttr(shardingName))
    if (Operation *def = replacement.getDefiningOp())
      def->setAttr(shardingName, sharding);
  op->getResult(0).replaceAllUsesWith(replacement);
  op->erase();
  return replacement;
}

namespace {
struct DecomposePass : shardc::impl::ShardcDecomposeBase<DecomposePass> {
  using ShardcDecomposeBase::ShardcDecomposeBase;

  void runOnOperation() override {
    SmallVector<DecomposableOpInterface> composites;
    getOperation()->walk([&](DecomposableOpInterface op) {
      // Autodiff applies a composite's own gradient rule.
      if (!(keepDifferentiable &&
            isa<DifferentiableOpInterface>(op.getOperation())))
        composites.push_back(op);
    });
    for (DecomposableOpInterface composite : composites)
      if (failed(decomposeComposite(composite)))
        return signalPassFailure();
  }
};
} // namespace

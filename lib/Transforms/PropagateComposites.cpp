//===- PropagateComposites.cpp - propagation through composites -----------===//
//
// A training step is differentiated before its composite ops are expanded
// (their gradient rules read fewer values than their expansions'), and is
// propagated before it is differentiated, so that each cotangent is laid
// out like its value. Composites have no sharding rule: the function is
// propagated through a copy whose composites are expanded, exactly as
// the expanded program would be, and each value of the function takes its
// copy's sharding (a composite's result, that of the value its expansion
// computes). The expansion's intermediates get theirs again when the step,
// expanded after autodiff, is propagated.
//
//===----------------------------------------------------------------------===//

#include "Propagation.h"

#include "shardc/Transforms/Decompose.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;

LogicalResult shardc::detail::propagateThroughExpansions(
    func::FuncOp func, const MeshTable &meshes, FactorShardingCache &cache,
    bool explain) {
  OpBuilder builder(func.getContext());
  builder.setInsertionPointAfter(func);
  auto copy = cast<func::FuncOp>(builder.clone(*func.getOperation()));
  copy.setSymName((func.getSymName() + ".expanded").str());
  // The copy has the same ops in the same order: pair them up.
  SmallVector<Operation *> ops, copies;
  func.walk([&](Operation *op) { ops.push_back(op); });
  copy.walk([&](Operation *op) { copies.push_back(op); });
  // The op whose sharding each op of `func` takes.
  llvm::DenseMap<Operation *, Operation *> source;
  for (auto [op, c] : llvm::zip_equal(ops, copies))
    source[op] = c;
  auto fail = [&] {
    copy.erase();
    return failure();
  };
  for (Operation *op : ops) {
    auto composite = dyn_cast<DecomposableOpInterface>(source[op]);
    if (!composite)
      continue;
    FailureOr<Value> expansion = decomposeComposite(composite);
    if (failed(expansion))
      return fail();
    source[op] = expansion->getDefiningOp();
  }
  FunctionPropagation propagation(copy, meshes, cache, explain);
  if (failed(propagation.run()))
    return fail();

  SmallVector<DictionaryAttr> attrs;
  copy.getAllArgAttrs(attrs);
  func.setAllArgAttrs(attrs);
  attrs.clear();
  copy.getAllResultAttrs(attrs);
  func.setAllResultAttrs(attrs);
  StringRef shardingName = ShardcDialect::getShardingAttrName();
  for (Operation *op : ops)
    if (Operation *from = source[op]; from && op != func.getOperation())
      if (Attribute sharding = from->getAttr(shardingName))
        op->setAttr(shardingName, sharding);
  copy.erase();
  return success();
}

//===- StandardLayouts.cpp - the layouts an expert writes by hand ---------===//
//
// The standard hand-written layouts (StandardLayouts.h), as argument
// annotations: the one definition `explain --auto-shard` simulates and the
// auto-sharder starts from.
//
//===----------------------------------------------------------------------===//

#include "shardc/Transforms/StandardLayouts.h"

#include "shardc/Dialect/ShardingRule.h"
#include "shardc/Dialect/TensorOpBuilders.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace shardc;

ArrayRef<NamedStandardLayout> shardc::getStandardLayouts() {
  static const NamedStandardLayout layouts[] = {
      {"replicated", StandardLayout::Replicated},
      {"data parallel", StandardLayout::DataParallel},
      {"fsdp", StandardLayout::Fsdp},
      {"megatron", StandardLayout::Megatron},
      {"2d", StandardLayout::TwoD}};
  return layouts;
}

/// Drops every user sharding but the sharding_constraints (the program's
/// own reshards).
void shardc::stripShardingAnnotations(func::FuncOp func) {
  StringRef key = ShardcDialect::getShardingAttrName();
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    func.removeArgAttr(i, key);
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    func.removeResultAttr(i, StringAttr::get(func.getContext(), key));
  func.walk([&](Operation *op) {
    if (!getConstrainedSharding(op))
      op->removeAttr(key);
  });
}

namespace {
/// Whether argument `i` is a weight: a `shardc.param` argument or, in a
/// model marking none, every argument but the first.
bool isWeight(func::FuncOp func, unsigned i) {
  bool anyParam = false;
  for (unsigned a = 0; a < func.getNumArguments(); ++a)
    anyParam |= bool(func.getArgAttr(a, ShardcDialect::getParamAttrName()));
  return anyParam ? bool(func.getArgAttr(i, ShardcDialect::getParamAttrName()))
                  : i > 0;
}

/// Annotates argument `i` split on dim `dim` over `axis`.
void splitArgument(func::FuncOp func, MeshOp mesh, unsigned i, int64_t dim,
                   StringRef axis) {
  auto type = cast<RankedTensorType>(func.getArgument(i).getType());
  SmallVector<SmallVector<StringRef>> dims(type.getRank());
  dims[dim].push_back(axis);
  func.setArgAttr(i, ShardcDialect::getShardingAttrName(),
                  ShardingAttr::get(
                      func.getContext(),
                      FlatSymbolRefAttr::get(mesh.getSymNameAttr()), dims, {}));
}

/// Megatron's weights over `axis`: the weights that ops read as
/// `activation x weight` (every weight dim a single factor, one of them
/// summed away, the row, and one kept in the result, the column) are split
/// by columns where the activation has passed an even number of such ops
/// since the inputs, and by rows where odd: q, k and v by heads, the
/// attention output projection by heads (rows), an MLP's up-projection by
/// columns and its down-projection by rows. A weight read so twice is split
/// for its first read; one whose dim the axis does not divide is left to
/// propagation. Returns how many were split.
int splitMatmulWeights(func::FuncOp func, MeshOp mesh, StringRef axis) {
  int64_t size = mesh.getAxisSize(axis);
  llvm::SmallDenseSet<unsigned> seen;
  // How many weighted matmuls lie on the longest path to each value.
  llvm::DenseMap<Value, int64_t> depth;
  int split = 0;
  func.walk([&](Operation *op) {
    int64_t in = 0;
    for (Value v : op->getOperands())
      in = std::max(in, depth.lookup(v));
    for (Value r : op->getResults())
      depth[r] = in;
    auto ruled = dyn_cast<ShardingRuleOpInterface>(op);
    if (!ruled || op->getNumOperands() != 2 || op->getNumResults() != 1)
      return;
    ShardingRule rule = ruled.getShardingRule();
    for (unsigned w = 0; w < 2; ++w) {
      auto arg = dyn_cast<BlockArgument>(op->getOperand(w));
      auto other = dyn_cast<BlockArgument>(op->getOperand(1 - w));
      // Both floats: an embedding's gather reads ids, not an activation.
      auto isFloat = [](Value v) {
        return isa<FloatType>(getElementTypeOrSelf(v.getType()));
      };
      if (!arg || (other && isWeight(func, other.getArgNumber())) ||
          !isWeight(func, arg.getArgNumber()) || !isFloat(op->getOperand(0)) ||
          !isFloat(op->getOperand(1)))
        continue;
      ArrayRef<DimFactors> dims = rule.getOperand(w);
      int64_t row = -1, column = -1;
      for (auto [d, factors] : llvm::enumerate(dims)) {
        if (factors.size() != 1) {
          row = column = -1;
          break;
        }
        const Factor &f = rule.getFactor(factors[0]);
        bool inResult = llvm::any_of(rule.getResult(0), [&](auto &r) {
          return llvm::is_contained(r, factors[0]);
        });
        if (f.kind == FactorKind::Reduction && row < 0)
          row = d;
        if (f.kind == FactorKind::Parallel && inResult && column < 0)
          column = d;
      }
      if (row < 0 || column < 0)
        continue;
      int64_t level = depth.lookup(op->getOperand(1 - w));
      depth[op->getResult(0)] = level + 1;
      if (!seen.insert(arg.getArgNumber()).second)
        continue;
      int64_t dim = level % 2 == 0 ? column : row;
      auto type = cast<RankedTensorType>(arg.getType());
      if (type.getDimSize(dim) % size != 0)
        continue;
      splitArgument(func, mesh, arg.getArgNumber(), dim, axis);
      ++split;
    }
  });
  return split;
}

} // namespace

bool shardc::applyStandardLayout(func::FuncOp func, MeshOp mesh,
                                 StandardLayout layout) {
  stripShardingAnnotations(func);
  if (layout == StandardLayout::Replicated)
    return true;
  SmallVector<StringRef> axes = mesh.getAxisNameList();
  StringRef axis = llvm::is_contained(axes, "data") ? "data" : axes.front();
  if (layout == StandardLayout::Megatron || layout == StandardLayout::TwoD) {
    StringRef model = axes.back();
    if (llvm::is_contained(axes, "model"))
      model = "model";
    else if (model == axis && axes.size() > 1)
      model = axes[axes.size() - 2];
    if (layout == StandardLayout::TwoD && model == axis)
      return false;
    if (splitMatmulWeights(func, mesh, model) == 0)
      return false;
    if (layout == StandardLayout::Megatron)
      return true;
  }
  int64_t size = mesh.getAxisSize(axis);
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
    if (!type || type.getRank() == 0 || type.getDimSize(0) % size != 0)
      continue;
    if (isWeight(func, i) && layout != StandardLayout::Fsdp)
      continue;
    splitArgument(func, mesh, i, 0, axis);
  }
  return true;
}

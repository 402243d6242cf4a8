//===- Propagation.h - state of --shardc-propagate --------------*- C++ -*-===//
//
// Private to lib/Transforms: the propagation of one function
// (Propagate.cpp) and its explain remarks (PropagateExplain.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_TRANSFORMS_PROPAGATION_H
#define SHARDC_LIB_TRANSFORMS_PROPAGATION_H

#include "shardc/Analysis/FactorSharding.h"
#include "shardc/Analysis/FactorShardingCache.h"
#include "shardc/Dialect/ShardcDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace shardc::detail {

/// The module's meshes by name, looked up once.
class MeshTable {
public:
  explicit MeshTable(mlir::ModuleOp module);
  MeshOp lookup(mlir::FlatSymbolRefAttr name) const;
  MeshOp getFirst() const { return first; }

private:
  llvm::StringMap<MeshOp> meshes;
  MeshOp first;
};

/// What propagation knows of one tensor: an SSA value, or a function result.
struct TensorState {
  ShardingAttr sharding;
  bool isUser = false;
  /// A function argument marked `shardc.param` (TensorShardingInput).
  bool isStationary = false;
  /// The annotation this sharding comes from (index into `annotations`).
  int origin = -1;
  /// Per dim, the annotation its axes come from (-1: none yet): one
  /// tensor's dims may be split by different annotations (a batch split
  /// from the tokens, a feature split from a weight).
  llvm::SmallVector<int, 4> dimOrigin;
  /// The last op a propagated sharding came through.
  mlir::Operation *via = nullptr;
  /// The tensor: a value, or else function result `funcResult`.
  mlir::Value value;
  int funcResult = -1;
};

/// An op (or one value of func.return) seen through its sharding rule.
struct Node {
  /// The rule is built in place: a ShardingRule keeps its vectors inline,
  /// so moving one copies them (a sixth of building the node list).
  Node(mlir::Operation *op, ShardingRuleOpInterface ruled)
      : op(op), rule(ruled.getShardingRule()) {}
  Node(mlir::Operation *op, ShardingRule rule,
       llvm::SmallVector<unsigned, 4> tensors)
      : op(op), rule(std::move(rule)), tensors(std::move(tensors)) {}

  mlir::Operation *op;
  ShardingRule rule;
  /// Tensor ids, the rule's operands then results.
  llvm::SmallVector<unsigned, 4> tensors;
  /// The op creates dims its operands lack (broadcast_in_dim): its results
  /// take shardings from its operands only once every other edge of the
  /// graph is at its fixed point (FunctionPropagation::propagate).
  bool expands = false;
};

/// `file:line:col` of the first file location inside `loc`.
std::string formatLoc(mlir::Location loc);

class FunctionPropagation {
public:
  FunctionPropagation(mlir::func::FuncOp func, const MeshTable &meshes,
                      FactorShardingCache &factorCache, bool explain)
      : func(func), meshes(meshes), factorCache(factorCache), explain(explain),
        shardingAttrName(mlir::StringAttr::get(
            func.getContext(), ShardcDialect::getShardingAttrName())) {}

  /// Propagates and writes the shardings; fails on an op whose rule does
  /// not fit it (an internal error, reported on the op).
  mlir::LogicalResult run();

private:
  unsigned getId(mlir::Value value);
  void annotate(unsigned id, ShardingAttr sharding,
                llvm::function_ref<std::string()> describe);
  mlir::LogicalResult build();
  /// The node's factor shardings now (owned by `factorCache`), or null
  /// when none of its tensors has a sharding yet.
  const FactorShardings *computeFactors(const Node &node) const;
  void visit(unsigned n, bool expandForward, std::deque<unsigned> &queue,
             llvm::BitVector &queued);
  /// Runs the worklist from `queue` (`queued` marks its nodes) to a fixed
  /// point; expanding nodes grow their results only if `expandForward`.
  void runWorklist(bool expandForward, std::deque<unsigned> &queue,
                   llvm::BitVector &queued);
  void propagate();
  ShardingAttr finalSharding(unsigned id, mlir::Type type) const;
  void writeBack();

  // Explain (PropagateExplain.cpp).
  void emitRemarks();
  std::string describeTensor(unsigned id) const;
  std::string describeNodeTensor(const Node &node, int pos) const;
  void emitValueRemark(mlir::Location loc, unsigned id, mlir::Type type) const;
  void emitConflictRemarks(const Node &node) const;

  mlir::func::FuncOp func;
  const MeshTable &meshes;
  FactorShardingCache &factorCache;
  bool explain;
  /// "shardc.sharding", uniqued once per function instead of once per op.
  mlir::StringAttr shardingAttrName;
  /// Used for values no sharding reached.
  MeshOp defaultMesh;

  std::vector<TensorState> tensors;
  llvm::DenseMap<mlir::Value, unsigned> valueIds;
  llvm::SmallVector<unsigned> resultIds;
  std::vector<Node> nodes;
  /// For each tensor, the nodes it is part of.
  std::vector<llvm::SmallVector<unsigned, 2>> tensorNodes;
  /// Descriptions of the user annotations (filled only with `explain`).
  std::vector<std::string> annotations;
};

/// Propagates `func`, which holds composite ops (which have no sharding
/// rule), through a copy of it whose composites are expanded, and writes
/// the copy's shardings back: every value gets its copy's, a composite's
/// result its expansion's (PropagateComposites.cpp).
mlir::LogicalResult propagateThroughExpansions(mlir::func::FuncOp func,
                                               const MeshTable &meshes,
                                               FactorShardingCache &cache,
                                               bool explain);

} // namespace shardc::detail

#endif // SHARDC_LIB_TRANSFORMS_PROPAGATION_H

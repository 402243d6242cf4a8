//===- FunctionPartitioner.h - one function's SPMD rewrite ------*- C++ -*-===//
//
// Private to lib/Transforms: the partitioner of one function, shared by
// Partition.cpp (the rewrite: each op's local computation, the reshards
// into it, the pass) and PartitionCandidates.cpp (which layout each op is
// computed in: its candidates and their prices).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_TRANSFORMS_FUNCTIONPARTITIONER_H
#define SHARDC_LIB_TRANSFORMS_FUNCTIONPARTITIONER_H

#include "PartitionLayout.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ShardingVerifier.h"
#include "shardc/Transforms/ReshardRecord.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <tuple>

namespace shardc::detail {

inline int64_t elementBytes(mlir::Type type) {
  auto tensor = mlir::cast<mlir::RankedTensorType>(type);
  return (tensor.getElementTypeBitWidth() + 7) / 8;
}

/// The location collectives get: the source position of the value they
/// move, without its name (the name belongs to the op computing the value).
inline mlir::Location stripName(mlir::Location loc) {
  if (auto name = mlir::dyn_cast<mlir::NameLoc>(loc))
    return name.getChildLoc();
  return loc;
}

class FunctionPartitioner {
public:
  FunctionPartitioner(mlir::func::FuncOp func, MeshOp mesh,
                      LayoutChoices &choices, bool explain,
                      const MachineModel &machine)
      : func(func), mesh(mesh), explain(explain), machine(machine),
        meshRef(mlir::FlatSymbolRefAttr::get(mesh.getSymNameAttr())),
        builder(func.getContext()), choices(choices),
        shardingAttrName(mlir::StringAttr::get(
            func.getContext(), ShardcDialect::getShardingAttrName())) {}

  mlir::LogicalResult run();

private:
  /// The sharding propagation assigned to `v`.
  ShardingAttr getAssigned(mlir::Value v);
  /// `v`'s local value, moved into `target`; the collectives a move emits
  /// carry `record` (ReshardRecord.h) if it is set.
  mlir::FailureOr<mlir::Value> getLocal(mlir::Value v, ShardingAttr target,
                                        mlir::Location loc,
                                        mlir::DictionaryAttr record = {});
  /// Materializes `plan` on `local`.
  mlir::Value emitPlan(mlir::Value local, const ReshardPlan &plan,
                       mlir::Location loc, mlir::DictionaryAttr record);
  /// The layout to compute `op` in (owned by `choices`), or null if no
  /// candidate layout works.
  const LayoutChoice *
  chooseLayout(mlir::Operation *op, const ShardingRule &rule,
               llvm::ArrayRef<TensorShardingInput> assigned);
  /// Calls `fn` on each candidate layout of `op` (the views chooseLayout
  /// weighs, then `extra`), priced, until it returns true.
  void forEachCandidate(
      mlir::Operation *op, const ShardingRule &rule,
      llvm::ArrayRef<TensorShardingInput> assigned, ExtraViews extra,
      bool withMoves,
      llvm::function_ref<bool(const LayoutChoice &, const LayoutPrice &)> fn);
  /// Whether every reader of `v` is linear in it on its own
  /// (ShardingRuleOpInterface::getLinearOperands): a pending sum of `v` may
  /// then stay pending through all of them, each reducing its own result.
  bool isCarriedByReaders(mlir::Value v);
  /// `choice`'s price (LayoutPrice), with its moves if `withMoves`.
  LayoutPrice priceCandidate(mlir::Operation *op, const ShardingRule &rule,
                             llvm::ArrayRef<TensorShardingInput> assigned,
                             const LayoutChoice &choice, bool withMoves);
  /// With `explain`: the record of `operand`'s move into `best` (null if
  /// it moves nothing), or without one, of `op`'s own all_reduce max.
  mlir::DictionaryAttr
  explainReshard(mlir::Operation *op, const ShardingRule &rule,
                 llvm::ArrayRef<TensorShardingInput> assigned,
                 const LayoutChoice &best, std::optional<unsigned> operand);
  /// With `explain`: the record of `v`'s move into `target` for output
  /// `output` or for `constraint`.
  mlir::DictionaryAttr explainFixed(mlir::Value v, ShardingAttr target,
                                    int64_t output,
                                    mlir::Operation *constraint) {
    return explain
               ? encodeReshardRecord(func.getContext(),
                                     shardc::detail::explainFixedReshard(
                                         v, current.lookup(v).second, target,
                                         output, constraint, mesh, machine))
               : nullptr;
  }
  /// Emits `local`'s all_reduce of kind max over `axes` (a sharded
  /// max_reduction factor), with the sharding `after`.
  mlir::Value emitAllReduceMax(mlir::Value local,
                               llvm::ArrayRef<llvm::StringRef> axes,
                               ShardingAttr after, mlir::Location loc,
                               mlir::DictionaryAttr record);
  /// Overwrites, in `locals`, the padding of every unevenly split dim that
  /// `op` would fold into real elements with the fill the op asks for
  /// (ShardingRuleOpInterface::getPaddingFill).
  void fillPadding(mlir::Operation *op, const ShardingRule &rule,
                   const LayoutChoice &layout,
                   llvm::SmallVectorImpl<mlir::Value> &locals);
  mlir::LogicalResult partitionRuleOp(mlir::Operation *op,
                                      const ShardingRule &rule);
  mlir::LogicalResult partitionConstant(mlir::Operation *op);

  mlir::RankedTensorType localType(mlir::Value global, ShardingAttr sharding) {
    auto type = mlir::cast<mlir::RankedTensorType>(global.getType());
    return mlir::RankedTensorType::get(
        getLocalShape(sharding, mesh, type.getShape()), type.getElementType());
  }

  mlir::func::FuncOp func;
  MeshOp mesh;
  /// Whether collectives get the record of the reshard they belong to.
  bool explain;
  /// The machine candidates are priced on (the pass's `machine` option,
  /// else cost-model.md's defaults).
  MachineModel machine;
  /// `@mesh`, made once: every local computation and collective names it.
  mlir::FlatSymbolRefAttr meshRef;
  mlir::OpBuilder builder;
  LayoutChoices &choices;
  /// Each global value's local value and the layout it is in.
  llvm::DenseMap<mlir::Value, std::pair<mlir::Value, ShardingAttr>> current;
  /// Reshards already made: (global value, target) -> local value.
  llvm::DenseMap<std::pair<mlir::Value, mlir::Attribute>, mlir::Value> moved;
  /// Plans by (from, to, global type): models reshard the same layouts of
  /// the same shapes layer after layer, and planning one is the costly part.
  llvm::DenseMap<std::tuple<mlir::Attribute, mlir::Attribute, mlir::Type>,
                 ReshardPlan>
      plans;
  /// "shardc.sharding", uniqued once per function instead of once per op.
  mlir::StringAttr shardingAttrName;
  /// Padding already filled: (local value, dim, fill) -> filled value, so a
  /// value read by several sums (forward and backward) is masked once.
  llvm::DenseMap<std::tuple<mlir::Value, int64_t, unsigned>, mlir::Value>
      filled;
};

} // namespace shardc::detail

#endif // SHARDC_LIB_TRANSFORMS_FUNCTIONPARTITIONER_H

//===- ElementwiseFusion.h - fused elementwise passes -----------*- C++ -*-===//
//
// Private to lib/Interpreter. A decomposed softmax, layer norm or GELU, an
// Adam update or a cross-entropy's one-hot mask is a chain of elementwise
// ops, each of which, run on its own, reads and writes whole tensors: ten
// passes over memory where one would do, and broadcasts and splat constants
// materialized at full size just to be read once. The plan below groups
// such chains once per function, and the interpreter runs each group as one
// pass over blocks of elements that stay in the cache.
//
// Which ops take part is asked of the hooks their kernel files register
// next to their KernelOpInterface models (FusionHooks): ops that
// `computesElementwise` are computed block by block with `evaluateElements`;
// ops whose result is a `getOperandView` of their operand (broadcast_in_dim)
// are read through the view. No op is named here.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_INTERPRETER_ELEMENTWISEFUSION_H
#define SHARDC_LIB_INTERPRETER_ELEMENTWISEFUSION_H

#include "shardc/Support/Tensor.h"

#include "mlir/IR/Block.h"
#include "mlir/Support/TypeID.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <optional>
#include <vector>

namespace shardc::detail {

class FusedChain;

/// How an op's kernel takes part in fused passes. The kernel file of an op
/// registers them (registerElementwiseHooks, registerViewHooks) in the same
/// attach function as its KernelOpInterface model; an op without hooks runs
/// on its own.
struct FusionHooks {
  /// True when element `i` (row-major) of the result depends only on
  /// element `i` of each operand, which all have the result's element
  /// count, and on `i` itself (elementwise ops, compare, select, convert,
  /// iota, a splat constant).
  bool (*computesElementwise)(mlir::Operation *op) = nullptr;
  /// For an op that computesElementwise: its result's elements `begin` ..
  /// `begin + count - 1` into `result` from the operands' same elements
  /// (`operands[k]` points at element `begin` of operand `k`; storage as in
  /// shardc::Tensor, one byte per i1). Must give the bits the op's
  /// evaluateKernel gives for those elements (the kernel files compute both
  /// with one function).
  void (*evaluateElements)(mlir::Operation *op,
                           llvm::ArrayRef<const void *> operands, void *result,
                           int64_t begin, int64_t count) = nullptr;
  /// True when the result is a strided view of operand 0: the result
  /// element at multi-index `idx` is the operand's element at row-major
  /// offset `sum_d idx[d] * strides[d]`, with `strides` (one per result dim,
  /// 0 along repeated dims) set here.
  bool (*getOperandView)(mlir::Operation *op,
                         llvm::SmallVectorImpl<int64_t> &strides) = nullptr;
};

/// Registers the hooks of the op class `opType` (process-wide; registering
/// again replaces them, so every context may register).
void registerFusionHooks(mlir::TypeID opType, FusionHooks hooks);
/// The hooks of `op`'s class, if its kernel file registered any.
std::optional<FusionHooks> lookupFusionHooks(mlir::Operation *op);

/// Registers `Model::computesElementwise` and `Model::evaluateElements`
/// (static functions) for `OpT`.
template <typename OpT, typename Model> void registerElementwiseHooks() {
  FusionHooks hooks;
  hooks.computesElementwise = &Model::computesElementwise;
  hooks.evaluateElements = &Model::evaluateElements;
  registerFusionHooks(mlir::TypeID::get<OpT>(), hooks);
}
/// Registers `Model::getOperandView` (a static function) for `OpT`.
template <typename OpT, typename Model> void registerViewHooks() {
  FusionHooks hooks;
  hooks.getOperandView = &Model::getOperandView;
  registerFusionHooks(mlir::TypeID::get<OpT>(), hooks);
}

/// Ops computed together in one pass, block by block: `nodes` in an order
/// where every node comes after the nodes it reads; the last is the root.
/// The root's and the stored nodes' results are materialized.
struct FusedGroup {
  /// An operand of a node: another node, or a leaf (a materialized tensor).
  struct Input {
    bool isNode;
    unsigned index;
  };
  struct Node {
    mlir::Operation *op;
    FusionHooks hooks;
    llvm::SmallVector<Input, 3> inputs;
    /// Bytes per element of the node's result.
    unsigned width;
    /// Whether the node's result is also written out as a tensor (the root
    /// always is).
    bool stored;
    /// Whether every element of the result is the same (a splat constant,
    /// or an op on such values only): its block is computed once per pass
    /// instead of once per block.
    bool uniform = false;
  };
  /// A tensor the pass reads: whole (no strides), or through a view op's
  /// strides (one per element of the view's `shape`).
  struct Leaf {
    mlir::Value value;
    llvm::SmallVector<int64_t> viewShape;
    llvm::SmallVector<int64_t> viewStrides;
    bool isView;
    unsigned width;
    /// A view that repeats one element (every stride 0): gathered once per
    /// pass.
    bool uniform = false;
  };
  llvm::SmallVector<Node> nodes;
  llvm::SmallVector<Leaf> leaves;
  /// Elements of the root's result (and of every node's).
  int64_t numElements = 0;
  /// The loop written for the group's chain of ops, which computes it
  /// instead of the node-by-node pass, if one matches (FusedChains.h).
  std::shared_ptr<const FusedChain> chain;
};

/// The fused groups of a function body, decided once from the IR: which
/// ops are computed inside a later op's pass, and where each op's operands
/// are last read.
class FusionPlan {
public:
  explicit FusionPlan(mlir::Block &body);

  /// The group `op` is the root of, or null (the op runs on its own, or is
  /// fused into a later op's group).
  const FusedGroup *groupRootedAt(mlir::Operation *op) const {
    auto it = groupOfRoot.find(op);
    return it == groupOfRoot.end() ? nullptr : groups[it->second].get();
  }
  /// True for an op computed inside later ops' groups: it has no result
  /// tensor of its own.
  bool isFused(mlir::Operation *op) const {
    return fused.count(op) || stored.count(op);
  }
  /// The latest position in the body at which `op` is computed: its own
  /// index, or that of the last group root it is fused into.
  size_t position(mlir::Operation *op) const { return positions.lookup(op); }
  /// How many ops are computed inside groups (group roots excluded).
  size_t numFusedOps() const { return fused.size() + stored.size(); }

private:
  std::vector<std::unique_ptr<FusedGroup>> groups;
  llvm::DenseMap<mlir::Operation *, unsigned> groupOfRoot;
  llvm::DenseSet<mlir::Operation *> fused;
  /// Computed inside a later op's group and written out from there.
  llvm::DenseSet<mlir::Operation *> stored;
  llvm::DenseMap<mlir::Operation *, size_t> positions;
};

/// Results at least this large are written with streaming stores: an
/// ordinary store into memory that is not cached first reads the line (so
/// an Adam step over a large parameter read its three fresh outputs as well
/// as its four inputs), and a result this size does not stay in the cache
/// for its readers anyway.
inline constexpr int64_t kStreamedResultBytes = 4 << 20;

/// Orders a pass's streaming stores before it returns.
void streamOutFence();

/// Computes `group` into `outputs` (allocated with the result types of the
/// stored nodes, in node order, then of the root), with its chain loop if
/// it has one; `leaves[i]` is the tensor of `group.leaves[i]`. Every element
/// comes out with the bits the ops' own kernels give, op by op: blocks are
/// multiples of 64 bytes from the tensor's start and scratch blocks are 64-byte
/// aligned, as every tensor's storage is (kStorageAlignment), so the
/// vectorized kernels split each block as they split the whole tensor.
void runFusedGroup(const FusedGroup &group,
                   llvm::ArrayRef<const Tensor *> leaves,
                   llvm::ArrayRef<Tensor *> outputs);

} // namespace shardc::detail

#endif // SHARDC_LIB_INTERPRETER_ELEMENTWISEFUSION_H

//===- Recompute.cpp - activation recomputation in a training step --------===//
//
// The backward pass of a training step reads forward values; keeping them
// all is most of a large model's memory. This pass copies the forward ops
// making some of them into the backward pass, just before their first
// backward reader, and points the backward readers at the copies: the
// forward values die at their last forward use and the copies live only
// while their layer's backward pass runs. Which values are recomputed is
// the policy (full: all but each layer's input; selective: the attention
// core); docs/recompute.md and the pass description in Passes.td say how
// layers and the attention core are found.
//
// The copies are the same ops on the same operands, so the step computes
// bit-identical results; they carry `shardc.recomputed`, which is how
// `shardc estimate` tells recompute FLOPs from the model's.
//
//===----------------------------------------------------------------------===//

#include "shardc/Transforms/Recompute.h"

#include "shardc/Analysis/ForwardPass.h"
#include "shardc/Dialect/RecomputedAttr.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Regex.h"

namespace shardc {
#define GEN_PASS_DEF_SHARDCRECOMPUTE
#include "shardc/Transforms/Passes.h.inc"
} // namespace shardc

using namespace mlir;
using namespace shardc;

namespace {

/// The shape of an attention-core value: rank 4 or more, its two last
/// dims equal (the [batch, heads, seq, seq] scores and probabilities),
/// so its size grows with the square of the sequence.
bool isAttentionCore(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || t.getRank() < 4)
    return false;
  int64_t r = t.getRank();
  return t.getDimSize(r - 1) == t.getDimSize(r - 2);
}

class Recomputer {
public:
  explicit Recomputer(func::FuncOp func) : func(func) {}

  /// Classifies the ops, the forward pass being what the first
  /// `forwardResults` results depend on.
  void classify(unsigned forwardResults);
  /// The groups of forward ops each recomputed together, in order; see
  /// RecomputeRequest for the layers `request` adds at the entry and exit.
  /// Fails when the request requires a layer input and none is found.
  LogicalResult groupFull(const llvm::Regex &layerInputs,
                          const RecomputeRequest &request);
  void groupSelective();
  /// Copies each group's ops the backward pass needs before its first
  /// backward reader.
  void rewrite();

private:
  bool isBackwardUse(Operation *user) const {
    return !forward.contains(user) && user != terminator;
  }
  void recomputeGroup(ArrayRef<Operation *> group);

  func::FuncOp func;
  Operation *terminator = nullptr;
  SmallVector<Operation *> ops;
  llvm::DenseMap<Operation *, unsigned> position;
  /// The loss's backward slice.
  llvm::DenseSet<Operation *> forward;
  /// Ops computed from constants alone (masks, scales): never copied, as
  /// they are the same wherever they are read.
  llvm::DenseSet<Operation *> constantDerived;
  /// Each group's ops in program order, groups in program order.
  SmallVector<SmallVector<Operation *>> groups;
};

} // namespace

void Recomputer::classify(unsigned forwardResults) {
  Block &body = func.getBody().front();
  terminator = body.getTerminator();
  for (Operation &op : body.without_terminator()) {
    position[&op] = ops.size();
    ops.push_back(&op);
    if (llvm::all_of(op.getOperands(), [&](Value v) {
          Operation *def = v.getDefiningOp();
          return def && constantDerived.contains(def);
        }))
      constantDerived.insert(&op);
  }
  forward = collectForwardPass(terminator, forwardResults);
}

LogicalResult Recomputer::groupFull(const llvm::Regex &layerInputs,
                                    const RecomputeRequest &request) {
  // Positions of the layer inputs; -1 stands for the function's entry,
  // ops.size() for its return.
  SmallVector<int64_t> boundaries;
  if (request.entryIsLayerInput)
    boundaries.push_back(-1);
  for (Operation *op : ops)
    if (forward.contains(op) && !constantDerived.contains(op) &&
        op->getNumResults() == 1 &&
        layerInputs.match(getSourceName(op->getResult(0))))
      boundaries.push_back(position[op]);
  if (boundaries.empty() && request.requireLayerInput)
    return func.emitError()
           << "full recompute needs the layers' inputs: no forward value's "
              "name matches the layer-input pattern \""
           << request.layerInputs << "\"";
  if (request.exitIsLayerInput)
    boundaries.push_back(static_cast<int64_t>(ops.size()));
  for (unsigned j = 0; j + 1 < boundaries.size(); ++j) {
    SmallVector<Operation *> group;
    for (int64_t p = boundaries[j] + 1; p < boundaries[j + 1]; ++p)
      if (forward.contains(ops[p]) && !constantDerived.contains(ops[p]))
        group.push_back(ops[p]);
    groups.push_back(std::move(group));
  }
  return success();
}

void Recomputer::groupSelective() {
  // The core starts at an op making an [.., s, s] value from other values
  // (the Q K^T contraction) and goes on through the ops computed from core
  // values, their statistics (softmax's row max and sum, recomputed too)
  // and constants alone. An op that mixes a core value with another activation
  // (the contraction with V) ends it, whatever its result's shape: with a head
  // dim equal to the sequence its result is [.., s, s] too, but no longer
  // grows with s^2 per head.
  enum class Kind { Core, Statistic, Other };
  llvm::DenseMap<Value, Kind> kinds;
  auto kindOf = [&](Value v) {
    auto it = kinds.find(v);
    return it == kinds.end() ? Kind::Other : it->second;
  };
  llvm::EquivalenceClasses<Operation *> chains;
  SmallVector<Operation *> core;
  for (Operation *op : ops) {
    if (!forward.contains(op) || constantDerived.contains(op))
      continue;
    bool fromCore = false, fromOther = false;
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (def && constantDerived.contains(def))
        continue;
      (kindOf(v) == Kind::Other ? fromOther : fromCore) = true;
    }
    bool isCore = false;
    for (Value r : op->getResults()) {
      Kind k = fromCore && fromOther ? Kind::Other
               : isAttentionCore(r)  ? Kind::Core
               : fromCore            ? Kind::Statistic
                                     : Kind::Other;
      kinds[r] = k;
      isCore |= k != Kind::Other;
    }
    if (!isCore)
      continue;
    core.push_back(op);
    chains.insert(op);
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp(); def && chains.contains(def))
        chains.unionSets(op, def);
  }
  llvm::MapVector<Operation *, SmallVector<Operation *>> byLeader;
  for (Operation *op : core)
    byLeader[chains.getLeaderValue(op)].push_back(op);
  for (auto &entry : byLeader)
    groups.push_back(std::move(entry.second));
}

void Recomputer::recomputeGroup(ArrayRef<Operation *> group) {
  llvm::DenseSet<Operation *> inGroup(group.begin(), group.end());
  // The ops to copy: the producers in the group of every value the
  // backward pass reads, and what they need from the group.
  llvm::DenseSet<Operation *> copied;
  SmallVector<Operation *> work;
  unsigned insertAt = ops.size();
  for (Operation *op : group)
    for (Value r : op->getResults())
      for (Operation *user : r.getUsers())
        if (isBackwardUse(user)) {
          work.push_back(op);
          insertAt = std::min(insertAt, position[user]);
        }
  if (work.empty())
    return;
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!copied.insert(op).second)
      continue;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp(); def && inGroup.contains(def))
        work.push_back(def);
  }
  // The copies go before the first backward reader; what they read from
  // outside the group must be made by then (a program whose backward pass
  // is interleaved with its forward pass keeps the group instead).
  for (Operation *op : copied)
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp();
          def && !inGroup.contains(def) && position[def] >= insertAt)
        return;

  OpBuilder builder(ops[insertAt]);
  IRMapping mapping;
  llvm::DenseSet<Operation *> copies;
  for (Operation *op : group) {
    if (!copied.contains(op))
      continue;
    Operation *copy = builder.clone(*op, mapping);
    copy->setAttr(kRecomputedAttrName, builder.getUnitAttr());
    copies.insert(copy);
  }
  for (Operation *op : group) {
    if (!copied.contains(op))
      continue;
    for (Value r : op->getResults())
      r.replaceUsesWithIf(mapping.lookup(r), [&](OpOperand &use) {
        Operation *user = use.getOwner();
        return isBackwardUse(user) && !copies.contains(user);
      });
  }
}

void Recomputer::rewrite() {
  for (SmallVector<Operation *> &group : groups)
    recomputeGroup(group);
}

LogicalResult shardc::recomputeActivations(func::FuncOp func,
                                           const RecomputeRequest &request) {
  StringRef mode = request.mode;
  if (mode != "none" && mode != "selective" && mode != "full")
    return func.emitError() << "unknown recompute mode '" << mode
                            << "' (expected none, selective or full)";
  llvm::Regex layerInputRegex(request.layerInputs);
  std::string why;
  if (!layerInputRegex.isValid(why))
    return func.emitError() << "the layer-input pattern \""
                            << request.layerInputs << "\" is no regex: " << why;
  if (mode == "none" || request.forwardResults == 0 ||
      !func.getBody().hasOneBlock() ||
      func.getBody().front().getTerminator()->getNumOperands() == 0)
    return success();
  Recomputer recomputer(func);
  recomputer.classify(request.forwardResults);
  if (mode == "full") {
    if (failed(recomputer.groupFull(layerInputRegex, request)))
      return failure();
  } else {
    recomputer.groupSelective();
  }
  recomputer.rewrite();
  return success();
}

namespace {

struct RecomputePass : public shardc::impl::ShardcRecomputeBase<RecomputePass> {
  using ShardcRecomputeBase::ShardcRecomputeBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // Only a training step is rewritten: a function returning gradients.
    bool trainingStep = false;
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      trainingStep |=
          bool(func.getResultAttr(i, ShardcDialect::getGradientOfAttrName()));
    RecomputeRequest request;
    request.mode = mode;
    request.layerInputs = layerInputs;
    request.forwardResults = trainingStep ? 1 : 0;
    if (failed(recomputeActivations(func, request)))
      signalPassFailure();
  }
};

} // namespace

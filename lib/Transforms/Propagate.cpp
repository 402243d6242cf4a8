//===- Propagate.cpp - --shardc-propagate ---------------------------------===//
//
// Sharding propagation over each function: every tensor (SSA value or
// function result) has a state, every op with a sharding rule (and every
// returned value, through an identity rule) is a node linking its tensors.
// A worklist visits nodes; a visit asks FactorShardings what the node's
// tensors should be and grows the inferred ones towards it, in two rounds
// (a broadcast's result waits for everything else). Inferred shardings only
// grow (an axis list is extended, never changed), so each tensor changes at
// most once per mesh axis and the whole run is linear in the program size.
// Explain remarks are in PropagateExplain.cpp.
//
//===----------------------------------------------------------------------===//

#include "Propagation.h"

#include "shardc/Dialect/MeshLookup.h"
#include "shardc/Dialect/ShardingVerifier.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Transforms/Passes.h"

#include "llvm/ADT/BitVector.h"

#include <deque>

namespace shardc {
#define GEN_PASS_DEF_SHARDCPROPAGATE
#include "shardc/Transforms/Passes.h.inc"
} // namespace shardc

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;

//===----------------------------------------------------------------------===//
// Building the graph
//===----------------------------------------------------------------------===//

MeshOp MeshTable::lookup(FlatSymbolRefAttr name) const {
  return name ? meshes.lookup(name.getValue()) : MeshOp();
}

MeshTable::MeshTable(ModuleOp module) {
  for (MeshOp mesh : module.getOps<MeshOp>()) {
    meshes.try_emplace(mesh.getSymName(), mesh);
    if (!first)
      first = mesh;
  }
}

unsigned FunctionPropagation::getId(Value value) {
  auto [it, inserted] = valueIds.try_emplace(value, tensors.size());
  if (inserted) {
    tensors.emplace_back();
    tensors.back().value = value;
  }
  return it->second;
}

void FunctionPropagation::annotate(unsigned id, ShardingAttr sharding,
                                   llvm::function_ref<std::string()> describe) {
  TensorState &state = tensors[id];
  state.sharding = sharding;
  state.isUser = true;
  state.origin = annotations.size();
  state.dimOrigin.assign(sharding.getRank(), state.origin);
  annotations.push_back(explain ? describe() : std::string());
  if (!defaultMesh)
    defaultMesh = meshes.lookup(sharding.getMesh());
}

static bool isTensor(Value v) { return isa<RankedTensorType>(v.getType()); }

/// True if a result of `rule` has a factor no operand has: the op makes new
/// dims out of its operands (broadcast_in_dim), so its results are larger.
static bool expandsOperands(const ShardingRule &rule) {
  if (rule.getNumOperands() == 0)
    return false; // a constant: nothing flows forward into it anyway
  llvm::BitVector inOperand(rule.getNumFactors());
  for (unsigned i = 0; i < rule.getNumOperands(); ++i)
    for (const DimFactors &dim : rule.getOperand(i))
      for (int64_t f : dim)
        inOperand.set(f);
  for (unsigned i = 0; i < rule.getNumResults(); ++i)
    for (const DimFactors &dim : rule.getResult(i))
      for (int64_t f : dim)
        if (!inOperand.test(f))
          return true;
  return false;
}

LogicalResult FunctionPropagation::build() {
  // The function's mesh (MeshLookup.h); with several meshes and no sharded
  // argument, the first annotation's mesh, else the module's first mesh.
  defaultMesh = findFunctionMesh(func).mesh;
  Block &entry = func.getBody().front();
  for (BlockArgument arg : entry.getArguments()) {
    if (!isTensor(arg))
      continue;
    unsigned id = getId(arg);
    tensors[id].isStationary =
        func.getArgAttr(arg.getArgNumber(), ShardcDialect::getParamAttrName()) !=
        nullptr;
    if (auto s = func.getArgAttrOfType<ShardingAttr>(
            arg.getArgNumber(), ShardcDialect::getShardingAttrName()))
      annotate(id, s, [&] { return describeValue(arg); });
  }
  ArrayRef<Type> resultTypes = func.getResultTypes();
  for (unsigned i = 0; i < resultTypes.size(); ++i) {
    resultIds.push_back(tensors.size());
    tensors.emplace_back();
    tensors.back().funcResult = i;
    if (auto s = func.getResultAttrOfType<ShardingAttr>(
            i, ShardcDialect::getShardingAttrName()))
      annotate(resultIds.back(), s,
               [&] { return "output #" + std::to_string(i); });
  }

  // A hint, not a bound: nodes hold rules whose SmallVectors the vector
  // would copy (their moves are not noexcept) every time it grows.
  nodes.reserve(entry.getOperations().size());
  WalkResult walk = func.getBody().walk<WalkOrder::PreOrder>(
      [&](Operation *op) -> WalkResult {
        if (op->getNumResults() == 1 && isTensor(op->getResult(0))) {
          unsigned id = getId(op->getResult(0));
          if (auto sc = dyn_cast<ShardingConstraintOp>(op))
            annotate(id, sc.getSharding(), [&] {
              return "sharding_constraint at " + formatLoc(op->getLoc());
            });
          else if (auto s = op->getAttrOfType<ShardingAttr>(shardingAttrName))
            annotate(id, s, [&] {
              return "annotation on " + describeValue(op->getResult(0)) +
                     " at " + formatLoc(op->getLoc());
            });
        }
        if (auto ruled = dyn_cast<ShardingRuleOpInterface>(op)) {
          if (!llvm::all_of(op->getOperands(), isTensor) ||
              !llvm::all_of(op->getResults(), isTensor))
            return WalkResult::advance();
          Node &node = nodes.emplace_back(op, ruled);
          std::string why;
          if (!node.rule.matchesOp(op, why)) {
            op->emitError("internal error: the sharding rule ")
                << node.rule.str() << " does not fit the op: " << why;
            return WalkResult::interrupt();
          }
          for (Value v : op->getOperands())
            node.tensors.push_back(getId(v));
          for (Value v : op->getResults())
            node.tensors.push_back(getId(v));
          node.expands = expandsOperands(node.rule);
        } else if (isa<func::ReturnOp>(op) && op->getParentOp() == func) {
          // The returned value and the function result are one tensor,
          // possibly with two annotations: an identity node links them.
          for (auto [index, v] : llvm::enumerate(op->getOperands())) {
            // A named copy: clang rejects capturing a structured binding.
            size_t i = index;
            if (i >= resultIds.size() || !isTensor(v))
              continue;
            auto shape = cast<RankedTensorType>(v.getType()).getShape();
            unsigned valueId = getId(v);
            // An output sharding constrains the value returned, like JAX's
            // out_shardings: the value is computed in that layout rather
            // than computed otherwise and resharded at the return. (A value
            // with its own annotation keeps it.)
            const TensorState &result = tensors[resultIds[i]];
            if (result.isUser && !tensors[valueId].isUser)
              annotate(valueId, result.sharding,
                       [&] { return "output #" + std::to_string(i); });
            nodes.emplace_back(
                op, ShardingRule::getIdentity(shape, 1, 1),
                llvm::SmallVector<unsigned, 4>{valueId, resultIds[i]});
          }
        }
        return WalkResult::advance();
      });
  if (walk.wasInterrupted())
    return failure();

  tensorNodes.resize(tensors.size());
  for (auto [n, node] : llvm::enumerate(nodes))
    for (unsigned id : node.tensors)
      if (tensorNodes[id].empty() || tensorNodes[id].back() != n)
        tensorNodes[id].push_back(n);
  if (!defaultMesh)
    defaultMesh = meshes.getFirst();
  return success();
}

//===----------------------------------------------------------------------===//
// The worklist
//===----------------------------------------------------------------------===//

const FactorShardings *
FunctionPropagation::computeFactors(const Node &node) const {
  // The node works on the mesh of its best-ranked sharded tensor (the same
  // ranking as candidates: user, then larger, then earlier).
  int bestPos = -1;
  auto key = [&](unsigned pos) {
    const TensorState &s = tensors[node.tensors[pos]];
    return std::make_tuple(!s.isUser, -node.rule.getTensorNumElements(pos),
                           pos);
  };
  for (unsigned pos = 0; pos < node.tensors.size(); ++pos)
    if (tensors[node.tensors[pos]].sharding &&
        (bestPos < 0 || key(pos) < key(bestPos)))
      bestPos = pos;
  if (bestPos < 0)
    return nullptr;
  MeshOp mesh =
      meshes.lookup(tensors[node.tensors[bestPos]].sharding.getMesh());
  if (!mesh)
    return nullptr;
  SmallVector<TensorShardingInput, 4> inputs;
  for (unsigned id : node.tensors)
    inputs.push_back(
        {tensors[id].sharding, tensors[id].isUser, tensors[id].isStationary});
  return &factorCache.get(node.rule, mesh, inputs);
}

/// `current` extended, dim by dim, towards `proposed` where it is a prefix
/// of it, skipping axes another dim already uses; null if nothing grew.
static ShardingAttr grow(ShardingAttr current, ShardingAttr proposed) {
  size_t rank = proposed.getRank();
  SmallVector<SmallVector<StringRef>> dims(rank);
  llvm::SmallDenseSet<StringRef, 8> used;
  if (current) {
    if (current.getRank() != rank)
      return {};
    for (size_t d = 0; d < rank; ++d) {
      dims[d] = current.getDimAxes(d);
      used.insert(dims[d].begin(), dims[d].end());
    }
  }
  bool changed = false;
  for (size_t d = 0; d < rank; ++d) {
    SmallVector<StringRef> want = proposed.getDimAxes(d);
    if (want.size() <= dims[d].size() ||
        !llvm::equal(ArrayRef(want).take_front(dims[d].size()), dims[d]))
      continue;
    for (StringRef axis : ArrayRef(want).drop_front(dims[d].size())) {
      if (!used.insert(axis).second)
        break;
      dims[d].push_back(axis);
      changed = true;
    }
  }
  if (!changed)
    return {};
  return ShardingAttr::get(proposed.getContext(), proposed.getMesh(), dims, {});
}

void FunctionPropagation::visit(unsigned n, bool expandForward,
                                std::deque<unsigned> &queue,
                                llvm::BitVector &queued) {
  const Node &node = nodes[n];
  const FactorShardings *fs = computeFactors(node);
  if (!fs)
    return;
  FlatSymbolRefAttr meshName =
      FlatSymbolRefAttr::get(fs->getMesh().getSymNameAttr());
  unsigned numTensors = node.tensors.size();
  if (node.expands && !expandForward)
    numTensors = node.rule.getNumOperands();
  for (unsigned pos = 0; pos < numTensors; ++pos) {
    TensorState &state = tensors[node.tensors[pos]];
    if (state.isUser ||
        (state.sharding && state.sharding.getMesh() != meshName))
      continue;
    ShardingAttr grown =
        grow(state.sharding, fs->getTensorSharding(pos, /*withPartial=*/false));
    if (!grown)
      continue;
    // Credit each dim that grew to where its first factor's axes came
    // from (the source tensor's dim holding that factor); the tensor's
    // origin is the first such dim's.
    state.dimOrigin.resize(grown.getRank(), -1);
    bool credited = false;
    for (size_t d = 0; d < grown.getRank(); ++d) {
      size_t before = state.sharding ? state.sharding.getDimAxes(d).size() : 0;
      if (before == grown.getDimAxes(d).size())
        continue;
      for (int64_t f : node.rule.getTensor(pos)[d])
        if (int src = fs->getFactorSource(f); src >= 0 && src != int(pos)) {
          const TensorState &from = tensors[node.tensors[src]];
          int origin = from.origin;
          for (auto [sd, factors] : llvm::enumerate(node.rule.getTensor(src)))
            if (llvm::is_contained(factors, f) && sd < from.dimOrigin.size() &&
                from.dimOrigin[sd] >= 0)
              origin = from.dimOrigin[sd];
          state.dimOrigin[d] = origin;
          if (!credited)
            state.origin = origin;
          credited = true;
          break;
        }
    }
    state.sharding = grown;
    state.via = node.op;
    for (unsigned m : tensorNodes[node.tensors[pos]])
      if (m != n && !queued.test(m)) {
        queued.set(m);
        queue.push_back(m);
      }
  }
}

void FunctionPropagation::runWorklist(bool expandForward,
                                      std::deque<unsigned> &queue,
                                      llvm::BitVector &queued) {
  while (!queue.empty()) {
    unsigned n = queue.front();
    queue.pop_front();
    queued.reset(n);
    visit(n, expandForward, queue, queued);
  }
}

void FunctionPropagation::propagate() {
  // Two rounds. An expanding op's operand is smaller than its result: taken
  // forward first, the operand's layout would fix the large result's before
  // the result's users say what they need, and a conflict would then
  // reshard the large tensor. So the first round takes every edge but those,
  // and the second adds them: the users decide, and a reshard, if any, lands
  // on the small operand (on Shardy's broadcast test, 8x fewer bytes).
  std::deque<unsigned> queue;
  llvm::BitVector queued(nodes.size(), true);
  for (unsigned n = 0; n < nodes.size(); ++n)
    queue.push_back(n);
  runWorklist(/*expandForward=*/false, queue, queued);
  for (auto [n, node] : llvm::enumerate(nodes))
    if (node.expands) {
      queued.set(n);
      queue.push_back(n);
    }
  runWorklist(/*expandForward=*/true, queue, queued);
}

//===----------------------------------------------------------------------===//
// Writing the result
//===----------------------------------------------------------------------===//

ShardingAttr FunctionPropagation::finalSharding(unsigned id, Type type) const {
  if (ShardingAttr s = tensors[id].sharding)
    return s;
  auto tensor = cast<RankedTensorType>(type);
  MeshOp mesh = defaultMesh;
  return ShardingAttr::getReplicated(
      mesh.getContext(), FlatSymbolRefAttr::get(mesh.getSymNameAttr()),
      tensor.getRank());
}

void FunctionPropagation::writeBack() {
  // All argument (result) attributes are set at once: setArgAttr rebuilds
  // the whole list, which is quadratic over thousands of weights.
  auto withSharding = [&](DictionaryAttr attrs, ShardingAttr sharding) {
    NamedAttrList list(attrs);
    list.set(shardingAttrName, sharding);
    return list.getDictionary(func.getContext());
  };
  SmallVector<DictionaryAttr> argAttrs;
  func.getAllArgAttrs(argAttrs);
  for (BlockArgument arg : func.getBody().front().getArguments()) {
    DictionaryAttr &attrs = argAttrs[arg.getArgNumber()];
    if (isTensor(arg) && !attrs.get(shardingAttrName))
      attrs = withSharding(attrs, finalSharding(getId(arg), arg.getType()));
  }
  func.setAllArgAttrs(argAttrs);
  SmallVector<DictionaryAttr> resultAttrs;
  func.getAllResultAttrs(resultAttrs);
  for (auto [i, id] : llvm::enumerate(resultIds))
    if (isa<RankedTensorType>(func.getResultTypes()[i]) &&
        !resultAttrs[i].get(shardingAttrName))
      resultAttrs[i] = withSharding(
          resultAttrs[i], finalSharding(id, func.getResultTypes()[i]));
  func.setAllResultAttrs(resultAttrs);
  func.getBody().walk([&](Operation *op) {
    if (op->getNumResults() == 1 && isTensor(op->getResult(0)) &&
        !op->hasAttr(shardingAttrName))
      op->setAttr(shardingAttrName, finalSharding(getId(op->getResult(0)),
                                                  op->getResult(0).getType()));
  });
}

LogicalResult FunctionPropagation::run() {
  if (failed(build()))
    return failure();
  if (!defaultMesh)
    return success(); // no mesh: no sharding can be written
  propagate();
  if (explain)
    emitRemarks();
  writeBack();
  return success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
struct PropagatePass : shardc::impl::ShardcPropagateBase<PropagatePass> {
  using ShardcPropagateBase::ShardcPropagateBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MeshTable meshes(module);
    FactorShardingCache factorCache;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || func->hasAttr(ShardcDialect::getSpmdAttrName()))
        continue;
      // Before differentiating, a training step still holds the
      // composites that have a gradient rule of their own.
      bool holdsComposites = func.walk([](DecomposableOpInterface) {
                                   return WalkResult::interrupt();
                                 })
                                 .wasInterrupted();
      if (holdsComposites) {
        if (failed(
                propagateThroughExpansions(func, meshes, factorCache, explain)))
          return signalPassFailure();
        continue;
      }
      FunctionPropagation propagation(func, meshes, factorCache, explain);
      if (failed(propagation.run()))
        return signalPassFailure();
    }
  }
};
} // namespace

//===- ElementwiseFusion.cpp - one pass over a chain of elementwise ops ---===//
//
// Planning: a value is *fused* (computed inside its users' passes, never
// materialized) when its op computes elementwise or is a view, every user
// computes elementwise over the same number of elements, and either its op
// reads nothing per element (a splat constant, an iota, a view of a
// materialized tensor: cheap to recompute in each user's pass) or it has a
// single use (so nothing is computed twice). Every elementwise op that is
// not fused and reads a fused value roots a group. A value that must be
// materialized (returned, or read by several ops) but that only one
// elementwise op reads is *stored*: computed in that op's pass and written
// out from there.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseFusion.h"

#include "FusedChains.h"

#include "KernelImpl.h"

#include "shardc/Dialect/CollectiveOpInterface.h"
#include "shardc/Support/HalfFloat.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"

#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;
using llvm::ArrayRef;
using llvm::SmallVector;

/// Elements per block: 8 KiB of f32, so a chain's blocks stay in the L1/L2
/// cache; a multiple of 64 bytes for every element width.
static constexpr int64_t kBlockElements = 2048;

//===----------------------------------------------------------------------===//
// The hooks
//===----------------------------------------------------------------------===//

namespace {
/// Never destroyed: kernel models may be attached while the process exits.
struct HookRegistry {
  std::mutex mutex;
  llvm::DenseMap<TypeID, FusionHooks> hooks;
};
HookRegistry &hookRegistry() {
  static HookRegistry *registry = new HookRegistry;
  return *registry;
}
} // namespace

void shardc::detail::registerFusionHooks(TypeID opType, FusionHooks hooks) {
  HookRegistry &registry = hookRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.hooks[opType] = hooks;
}

std::optional<FusionHooks> shardc::detail::lookupFusionHooks(Operation *op) {
  HookRegistry &registry = hookRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.hooks.find(op->getName().getTypeID());
  if (it == registry.hooks.end())
    return std::nullopt;
  return it->second;
}

//===----------------------------------------------------------------------===//
// Planning
//===----------------------------------------------------------------------===//

/// The element count of a value a fused pass can read or write: bf16 and
/// f16 values take no part (their kernels run on f32 copies, rounded on
/// store, which evaluateTensorOp does op by op).
static std::optional<int64_t> staticNumElements(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  std::optional<DType> dtype =
      type ? executableDType(type.getElementType()) : std::nullopt;
  if (!type || !type.hasStaticShape() || !dtype || isHalfDType(*dtype))
    return std::nullopt;
  return type.getNumElements();
}

namespace {
enum class Kind { None, Elementwise, View };
} // namespace

/// How `op` can take part in a fused pass.
static Kind classify(Operation *op) {
  if (op->getNumResults() != 1 || op->getNumRegions() != 0 ||
      isa<CollectiveOpInterface>(op))
    return Kind::None;
  std::optional<FusionHooks> hooks = lookupFusionHooks(op);
  if (!hooks)
    return Kind::None;
  std::optional<int64_t> n = staticNumElements(op->getResult(0));
  if (!n || *n == 0)
    return Kind::None;
  SmallVector<int64_t> strides;
  if (hooks->getOperandView && op->getNumOperands() == 1 &&
      staticNumElements(op->getOperand(0)) &&
      hooks->getOperandView(op, strides))
    return Kind::View;
  if (!hooks->computesElementwise || !hooks->evaluateElements ||
      !hooks->computesElementwise(op))
    return Kind::None;
  for (Value operand : op->getOperands())
    if (staticNumElements(operand) != n)
      return Kind::None;
  return Kind::Elementwise;
}

/// True for an op without operands whose value is a splat constant (every
/// element the same, whatever its position).
static bool isSplatConstant(Operation *op) {
  Attribute value;
  if (op->getNumOperands() != 0 || !matchPattern(op, m_Constant(&value)))
    return false;
  auto elements = dyn_cast<ElementsAttr>(value);
  return elements && elements.isSplat();
}

/// Marks the leaves and nodes of `group` whose every element is the same.
/// A node with operands computes each element from the operands' elements
/// at the same position (FusionHooks::computesElementwise), so equal
/// operand elements give equal result elements.
static void markUniform(FusedGroup &group) {
  for (FusedGroup::Leaf &leaf : group.leaves)
    leaf.uniform = leaf.isView && llvm::all_of(leaf.viewStrides, [](int64_t s) {
                     return s == 0;
                   });
  for (FusedGroup::Node &node : group.nodes) {
    if (node.inputs.empty()) {
      node.uniform = isSplatConstant(node.op);
      continue;
    }
    node.uniform = llvm::all_of(node.inputs, [&](FusedGroup::Input input) {
      return input.isNode ? group.nodes[input.index].uniform
                          : group.leaves[input.index].uniform;
    });
  }
}

FusionPlan::FusionPlan(Block &body) {
  llvm::DenseMap<Operation *, Kind> kinds;
  llvm::DenseMap<Operation *, size_t> index;
  for (auto [i, op] : llvm::enumerate(body)) {
    kinds[&op] = classify(&op);
    index[&op] = i;
  }
  auto kindOf = [&](Operation *op) {
    return op ? kinds.lookup(op) : Kind::None;
  };

  // Which values are fused: decided from their users' kinds alone (whether
  // a user is fused itself does not matter: it is computed either way).
  for (Operation &op : body) {
    Kind kind = kinds.lookup(&op);
    if (kind == Kind::None || op.getResult(0).use_empty())
      continue;
    Value value = op.getResult(0);
    bool cheap = kind == Kind::View || op.getNumOperands() == 0;
    if (!cheap && !value.hasOneUse())
      continue;
    bool usersFuse = llvm::all_of(value.getUsers(), [&](Operation *user) {
      return user->getBlock() == &body && kindOf(user) == Kind::Elementwise &&
             staticNumElements(user->getResult(0)) == staticNumElements(value);
    });
    if (usersFuse)
      fused.insert(&op);
  }

  // Which values are stored: a value the function returns (or that several
  // ops read, so it is materialized) whose only other reader is one
  // elementwise op is computed inside that op's pass and written out from
  // there, so the pass does not read it back (an Adam step's new moments,
  // returned and read by the parameter's update).
  for (Operation &op : body) {
    if (kinds.lookup(&op) != Kind::Elementwise || fused.count(&op))
      continue;
    Value value = op.getResult(0);
    Operation *reader = nullptr;
    bool storable = true;
    for (Operation *user : value.getUsers()) {
      if (user->getBlock() != &body) {
        storable = false;
        break;
      }
      if (isa<func::ReturnOp>(user))
        continue;
      if (kindOf(user) != Kind::Elementwise || (reader && reader != user) ||
          staticNumElements(user->getResult(0)) != staticNumElements(value)) {
        storable = false;
        break;
      }
      reader = user;
    }
    if (storable && reader)
      stored.insert(&op);
  }
  auto computedInside = [&](Operation *def) {
    return def && (fused.count(def) || stored.count(def));
  };

  // Groups: every elementwise op computed on its own that reads a value
  // computed inside.
  for (Operation &op : body) {
    if (kinds.lookup(&op) != Kind::Elementwise || computedInside(&op))
      continue;
    if (llvm::none_of(op.getOperands(), [&](Value v) {
          return computedInside(v.getDefiningOp());
        }))
      continue;
    auto group = std::make_unique<FusedGroup>();
    group->numElements = *staticNumElements(op.getResult(0));
    llvm::DenseMap<Operation *, unsigned> nodeOf;
    llvm::DenseMap<Value, unsigned> leafOf, viewLeafOf;
    auto widthOf = [](Value v) {
      return dtypeByteWidth(*executableDType(
          cast<RankedTensorType>(v.getType()).getElementType()));
    };
    // Post-order: a node's inputs are added before it.
    std::function<FusedGroup::Input(Operation *)> addNode =
        [&](Operation *node) -> FusedGroup::Input {
      if (auto it = nodeOf.find(node); it != nodeOf.end())
        return {true, it->second};
      FusedGroup::Node n{node,
                         *lookupFusionHooks(node),
                         {},
                         widthOf(node->getResult(0)),
                         stored.count(node) != 0};
      for (Value operand : node->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (computedInside(def) && kinds.lookup(def) == Kind::Elementwise) {
          n.inputs.push_back(addNode(def));
          continue;
        }
        if (def && fused.count(def)) { // a view of a materialized tensor
          Value result = def->getResult(0);
          auto [it, inserted] =
              viewLeafOf.try_emplace(result, group->leaves.size());
          if (inserted) {
            FusedGroup::Leaf leaf{
                def->getOperand(0), {}, {}, true, widthOf(result)};
            leaf.viewShape.assign(
                cast<RankedTensorType>(result.getType()).getShape().begin(),
                cast<RankedTensorType>(result.getType()).getShape().end());
            lookupFusionHooks(def)->getOperandView(def, leaf.viewStrides);
            group->leaves.push_back(std::move(leaf));
          }
          n.inputs.push_back({false, it->second});
          continue;
        }
        auto [it, inserted] = leafOf.try_emplace(operand, group->leaves.size());
        if (inserted)
          group->leaves.push_back({operand, {}, {}, false, widthOf(operand)});
        n.inputs.push_back({false, it->second});
      }
      nodeOf[node] = group->nodes.size();
      group->nodes.push_back(std::move(n));
      return {true, nodeOf[node]};
    };
    addNode(&op);
    markUniform(*group);
    group->chain = matchFusedChain(*group);
    groupOfRoot[&op] = groups.size();
    groups.push_back(std::move(group));
  }

  // Positions: an op computed inside runs with the last of its readers (a
  // stored value's return is not one).
  for (Operation &op : llvm::reverse(body)) {
    size_t pos = index.lookup(&op);
    if (computedInside(&op)) {
      pos = 0;
      for (Operation *user : op.getResult(0).getUsers())
        if (!isa<func::ReturnOp>(user))
          pos = std::max(pos, positions.lookup(user));
    }
    positions[&op] = pos;
  }
}

//===----------------------------------------------------------------------===//
// Running a group
//===----------------------------------------------------------------------===//

namespace {
struct AlignedFree {
  void operator()(unsigned char *p) const { std::free(p); }
};
using ScratchBlock = std::unique_ptr<unsigned char[], AlignedFree>;

ScratchBlock allocateBlock(unsigned width) {
  size_t bytes = static_cast<size_t>(kBlockElements) * width;
  auto *p = static_cast<unsigned char *>(std::aligned_alloc(64, bytes));
  if (!p)
    llvm::report_bad_alloc_error("fused elementwise pass: scratch block");
  return ScratchBlock(p);
}

/// Scratch blocks kept by each thread between passes: a training step runs
/// hundreds of fused passes, every step, and allocating their blocks anew
/// cost a malloc and a free apiece on the one heap all device threads
/// share. Blocks fit the widest element (i64), so any width takes any.
class ScratchPool {
public:
  static constexpr unsigned kWidestElement = 8;
  ScratchBlock take(unsigned width) {
    if (width > kWidestElement)
      return allocateBlock(width);
    if (kept.empty())
      return allocateBlock(kWidestElement);
    ScratchBlock block = std::move(kept.back());
    kept.pop_back();
    return block;
  }
  void give(ScratchBlock block, unsigned width) {
    if (block && width <= kWidestElement && kept.size() < kKeep)
      kept.push_back(std::move(block));
  }

private:
  /// 64 blocks of 16 KiB at most per thread.
  static constexpr size_t kKeep = 64;
  std::vector<ScratchBlock> kept;
};
thread_local ScratchPool scratchPool;

/// Elements `begin` .. `begin + count - 1` of the view (row-major over
/// `shape`, element at index idx being src[sum idx[d] * strides[d]]).
template <typename T>
void gatherView(const T *src, ArrayRef<int64_t> shape,
                ArrayRef<int64_t> strides, int64_t begin, int64_t count,
                T *out) {
  int64_t rank = shape.size();
  if (rank == 0) {
    std::fill_n(out, count, src[0]);
    return;
  }
  SmallVector<int64_t, 6> idx(rank);
  int64_t offset = 0;
  for (int64_t d = rank - 1, rest = begin; d >= 0; --d) {
    idx[d] = rest % shape[d];
    rest /= shape[d];
    offset += idx[d] * strides[d];
  }
  int64_t inner = shape[rank - 1], step = strides[rank - 1];
  while (count > 0) {
    int64_t run = std::min(count, inner - idx[rank - 1]);
    if (step == 0)
      std::fill_n(out, run, src[offset]);
    else if (step == 1)
      std::memcpy(out, src + offset, run * sizeof(T));
    else
      for (int64_t j = 0; j < run; ++j)
        out[j] = src[offset + j * step];
    out += run;
    count -= run;
    // To the start of the next row (only needed when the row ended, which
    // it did unless the block did): carry into the outer dims.
    offset -= idx[rank - 1] * step;
    idx[rank - 1] = 0;
    for (int64_t d = rank - 2; d >= 0; --d) {
      offset += strides[d];
      if (++idx[d] < shape[d])
        break;
      offset -= shape[d] * strides[d];
      idx[d] = 0;
    }
  }
}

void gatherViewBytes(const FusedGroup::Leaf &leaf, const Tensor &tensor,
                     int64_t begin, int64_t count, void *out) {
  auto go = [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    gatherView(reinterpret_cast<const T *>(tensor.rawData()), leaf.viewShape,
               leaf.viewStrides, begin, count, static_cast<T *>(out));
  };
  switch (leaf.width) {
  case 1:
    return go(static_cast<uint8_t *>(nullptr));
  case 2:
    return go(static_cast<uint16_t *>(nullptr));
  case 4:
    return go(static_cast<uint32_t *>(nullptr));
  default:
    return go(static_cast<uint64_t *>(nullptr));
  }
}
} // namespace

/// Copies `bytes` from `src` to `dst`, both 64-byte aligned, with
/// non-temporal stores where the target has them; streamOutFence() orders
/// them before the pass returns.
static void streamOut(const unsigned char *src, unsigned char *dst,
                      size_t bytes) {
  size_t done = 0;
#if defined(__AVX__)
  for (; done + 32 <= bytes; done += 32)
    _mm256_stream_si256(
        reinterpret_cast<__m256i *>(dst + done),
        _mm256_load_si256(reinterpret_cast<const __m256i *>(src + done)));
#elif defined(__SSE2__)
  for (; done + 16 <= bytes; done += 16)
    _mm_stream_si128(
        reinterpret_cast<__m128i *>(dst + done),
        _mm_load_si128(reinterpret_cast<const __m128i *>(src + done)));
#endif
  std::memcpy(dst + done, src + done, bytes - done);
}

/// Passes whose results are at least this large prefetch their leaves
/// (LeafPrefetcher). On an Adam update (bench/adam_update.mlir resized),
/// results of 2.25 MiB took 1.09-1.25 ms with it against 1.20-1.94 without
/// (median of 200 runs, three runs each), results of 1.5 MiB about the same
/// either way: leaves that size come from the L2 or L3 cache as fast.
static constexpr int64_t kPrefetchedResultBytes = 2 << 20;

/// How many blocks ahead of the block being computed a pass too large for
/// the cache prefetches its leaves (best of 1, 2, 4 and 8 on an Adam
/// update of 4 Mi elements, bench/adam_update.mlir).
static constexpr int64_t kPrefetchBlocksAhead = 2;

namespace {
/// Prefetches (into the L2 cache) the elements of a later block of every
/// leaf read whole, a share before each node of the block being computed.
/// A fused pass reads its leaves one node at a time, so without it one
/// stream at a time comes from memory while the others wait, where a plain
/// loop over the same tensors has all of them in flight; and all of a
/// block's prefetches at once stall on the core's outstanding misses
/// instead of overlapping the nodes' arithmetic. The leaves take turns, a
/// line each, as a plain loop's loads do (leaf after leaf measured 8 %
/// slower), and every line is asked for (every second or fourth line,
/// leaving the rest to the hardware prefetcher, measured 25 % slower).
class LeafPrefetcher {
public:
  LeafPrefetcher(const FusedGroup &group, ArrayRef<const Tensor *> leaves)
      : group(group), leaves(leaves) {}

  /// Starts on the block at element `begin` (nothing past the end).
  void startBlock(int64_t begin) {
    ranges.clear();
    offset = 0;
    longest = 0;
    share = 0;
    if (begin >= group.numElements)
      return;
    int64_t count = std::min(kBlockElements, group.numElements - begin);
    for (auto [i, leaf] : llvm::enumerate(group.leaves)) {
      if (leaf.isView)
        continue;
      size_t bytes = count * leaf.width;
      ranges.push_back({leaves[i]->rawData() + begin * leaf.width, bytes});
      longest = std::max(longest, bytes);
    }
    // Rounds of one line per leaf, shared out over the nodes.
    size_t rounds = (longest + kLine - 1) / kLine;
    share = (rounds + group.nodes.size() - 1) / group.nodes.size();
  }
  /// One node's share of the block's cache lines.
  void issueShare() { issue(share); }
  /// What is left of the block.
  void issueRest() { issue(SIZE_MAX); }

private:
  static constexpr size_t kLine = 64;
  void issue(size_t rounds) {
    for (; rounds && offset < longest; --rounds, offset += kLine)
      for (const Range &r : ranges)
        if (offset < r.bytes) {
#if defined(__SSE__)
          _mm_prefetch(reinterpret_cast<const char *>(r.start) + offset,
                       _MM_HINT_T1);
#endif
        }
  }

  struct Range {
    const unsigned char *start;
    size_t bytes;
  };
  const FusedGroup &group;
  ArrayRef<const Tensor *> leaves;
  SmallVector<Range, 8> ranges;
  size_t offset = 0, longest = 0, share = 0;
};
} // namespace

void shardc::detail::streamOutFence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

void shardc::detail::runFusedGroup(const FusedGroup &group,
                                   ArrayRef<const Tensor *> leaves,
                                   ArrayRef<Tensor *> outputs) {
  if (group.chain)
    return group.chain->run(leaves, outputs);
  size_t numNodes = group.nodes.size();
  // Where each node writes: its output tensor's elements (root, stored
  // nodes) or a scratch block.
  SmallVector<unsigned char *> nodeOutputs(numNodes, nullptr);
  // Large results are computed in a block and streamed out.
  int64_t resultBytes = group.numElements * group.nodes.back().width;
  bool streamed = resultBytes >= kStreamedResultBytes;
  bool prefetched = resultBytes >= kPrefetchedResultBytes;
  // The last node reading each node's block.
  SmallVector<size_t> lastReader(numNodes, 0);
  for (size_t k = 0; k < numNodes; ++k)
    for (FusedGroup::Input input : group.nodes[k].inputs)
      if (input.isNode)
        lastReader[input.index] = k;
  // Scratch blocks are shared by nodes whose blocks are not live at once
  // (a node's block is free again once its last reader ran), so a long
  // chain works in a few blocks that stay in the L1 cache instead of one
  // block per node. A uniform node has a block of its own, which it keeps:
  // later blocks reuse its value.
  // A node never writes into a block one of its inputs holds (a kernel
  // may read its input after writing its result).
  SmallVector<ScratchBlock> slots;
  SmallVector<unsigned> freeSlots;
  SmallVector<unsigned char *> nodeBlocks(numNodes, nullptr);
  SmallVector<int> slotOf(numNodes, -1);
  for (size_t k = 0, o = 0; k < numNodes; ++k) {
    const FusedGroup::Node &node = group.nodes[k];
    if (k + 1 == numNodes || node.stored)
      nodeOutputs[k] =
          outputs[k + 1 == numNodes ? outputs.size() - 1 : o++]->rawData();
    if (!nodeOutputs[k] || streamed) {
      // A uniform node's block is its own for the whole pass: an earlier
      // node that shared it would overwrite it in the next block.
      if (freeSlots.empty() || node.uniform ||
          node.width > ScratchPool::kWidestElement) {
        slotOf[k] = slots.size();
        slots.push_back(scratchPool.take(node.width));
      } else {
        slotOf[k] = freeSlots.pop_back_val();
      }
      nodeBlocks[k] = slots[slotOf[k]].get();
    }
    for (FusedGroup::Input input : node.inputs) {
      if (!input.isNode || lastReader[input.index] != k)
        continue;
      int &slot = slotOf[input.index];
      if (slot < 0 || group.nodes[input.index].uniform ||
          group.nodes[input.index].width > ScratchPool::kWidestElement)
        continue;
      freeSlots.push_back(slot);
      slot = -1;
    }
  }
  SmallVector<ScratchBlock> viewBlocks(group.leaves.size());
  for (auto [i, leaf] : llvm::enumerate(group.leaves))
    if (leaf.isView)
      viewBlocks[i] = scratchPool.take(leaf.width);

  LeafPrefetcher prefetcher(group, leaves);
  SmallVector<const void *> leafPointers(group.leaves.size());
  SmallVector<void *> nodePointers(numNodes);
  SmallVector<const void *, 3> inputs;
  for (int64_t begin = 0; begin < group.numElements; begin += kBlockElements) {
    int64_t count = std::min(kBlockElements, group.numElements - begin);
    // A uniform block computed for the first block serves every later one
    // of the same length: the same input bits at the same positions give
    // the same result bits. A shorter last block is computed again, since
    // a kernel may split a shorter run differently (its vectorized part
    // and scalar tail).
    bool reuseUniform = begin != 0 && count == kBlockElements;
    if (prefetched)
      prefetcher.startBlock(begin + kPrefetchBlocksAhead * kBlockElements);
    for (auto [i, leaf] : llvm::enumerate(group.leaves)) {
      if (leaf.uniform && reuseUniform)
        continue;
      if (leaf.isView) {
        gatherViewBytes(leaf, *leaves[i], begin, count, viewBlocks[i].get());
        leafPointers[i] = viewBlocks[i].get();
      } else {
        leafPointers[i] = leaves[i]->rawData() + begin * leaf.width;
      }
    }
    for (size_t k = 0; k < numNodes; ++k) {
      const FusedGroup::Node &node = group.nodes[k];
      if (node.uniform && reuseUniform && !nodeOutputs[k])
        continue;
      prefetcher.issueShare();
      inputs.clear();
      for (FusedGroup::Input input : node.inputs)
        inputs.push_back(input.isNode ? nodePointers[input.index]
                                      : leafPointers[input.index]);
      nodePointers[k] =
          nodeBlocks[k]
              ? static_cast<void *>(nodeBlocks[k])
              : static_cast<void *>(nodeOutputs[k] + begin * node.width);
      node.hooks.evaluateElements(node.op, inputs, nodePointers[k], begin,
                                  count);
      if (nodeOutputs[k] && nodeBlocks[k])
        streamOut(nodeBlocks[k], nodeOutputs[k] + begin * node.width,
                  count * node.width);
    }
    prefetcher.issueRest();
  }
  if (streamed)
    streamOutFence();
  for (ScratchBlock &block : slots)
    scratchPool.give(std::move(block), ScratchPool::kWidestElement);
  for (auto [i, leaf] : llvm::enumerate(group.leaves))
    scratchPool.give(std::move(viewBlocks[i]), leaf.width);
}

//===- OnnxIdioms.cpp - torch's export idioms, rewritten for sharding -----===//
//
// Two layouts torch.onnx.export writes for nn.MultiheadAttention hide what a
// Megatron plan shards, so the importer rewrites them once the graph is read
// (docs/onnx.md, "Fused projections"):
//
// - A fused projection: one weight [3*E, E] (`in_proj_weight`) multiplied
//   once, its result cut into q, k and v by Slice or Split. Split by rows
//   over "model", a device would hold q and part of k, not whole heads. The
//   weight (and its bias) become a stacked view [3, E, E] of the same
//   elements, the product [..., 3, E], and each chunk a slice of the
//   stacking dim: sharding dim 1 of the view gives every device its heads
//   of q, k and v. The argument keeps its name and records the shape the
//   checkpoint holds it in (`shardc.checkpoint_shape`). timm cuts it
//   another way, reshaping the product to [..., 3, H, d] and taking the 3
//   chunks of that dim (after a permute); the view is the same, and the
//   reshape reads the stacked product [..., 3, E] instead.
// - A linear layer on flattened rows: Reshape [T, B, ...] -> [T*B, E], Gemm,
//   Reshape back to [T, B, E']. With B split over "data", the flattened
//   rows cannot be split in blocks (B is the minor factor of T*B), so the
//   partitioner would gather them. The layer is applied to the unflattened
//   rows instead.
// - Heads merged with the batch: attention reshapes [T, B, E] to
//   [T, B*H, d] and multiplies batched over B*H. With B split over "data"
//   and the heads over "model", no block split of B*H holds a device's
//   (b, h) pairs (h is its minor factor), and a Megatron plan would gather
//   every head. Between the reshapes that merge the dim and those that undo
//   it (transposes, elementwise ops with constants, softmax, batched
//   matmuls) the dim is kept as its factors [B, H]: the same elements in
//   the same order, which a plan then splits by both axes.
//
//===----------------------------------------------------------------------===//

#include "OnnxImport.h"

#include "shardc/Dialect/ShardcOps.h"
#include "shardc/Dialect/TensorOpBuilders.h"
#include "shardc/Dialect/TensorOpQueries.h"
#include "shardc/Dialect/ValueNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::onnximport;
using llvm::SmallVector;

/// `loc`'s name with `suffix`, wrapping `loc`.
static Location suffixed(Location loc, StringRef suffix) {
  return NameLoc::get(StringAttr::get(loc.getContext(),
                                      getNameFromLoc(loc).str() + suffix.str()),
                      loc);
}

static RankedTensorType withShape(Value v, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(
      shape, cast<RankedTensorType>(v.getType()).getElementType());
}

/// A parameter argument used only by `user`.
static BlockArgument soleParamOf(Value v, Operation *user) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || !arg.hasOneUse() || *arg.getUsers().begin() != user)
    return nullptr;
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (!func ||
      !func.getArgAttr(arg.getArgNumber(), ShardcDialect::getParamAttrName()))
    return nullptr;
  return arg;
}

/// `op` is a broadcast used once whose operand dims are the result dims
/// `dims` (a bias [F] added along the last dim of [..., F]).
static bool isBroadcastAlong(Operation *op, ArrayRef<int64_t> dims) {
  std::optional<ArrayRef<int64_t>> along = getBroadcastDims(op);
  return along && *along == dims && op->hasOneUse();
}

/// Gives `arg` the view `shape` of its elements, recording the shape its
/// checkpoint holds.
static void viewArgument(BlockArgument arg, ArrayRef<int64_t> shape) {
  auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
  auto type = cast<RankedTensorType>(arg.getType());
  func.setArgAttr(arg.getArgNumber(),
                  ShardcDialect::getCheckpointShapeAttrName(),
                  DenseI64ArrayAttr::get(func.getContext(), type.getShape()));
  arg.setType(withShape(arg, shape));
}

namespace {
/// A fused projection found by matchFused.
struct FusedProjection {
  BlockArgument weight;
  TransposeOp transpose; ///< of the weight, or null
  DotGeneralOp product;
  int64_t weightFreeDim; ///< the weight's dim the product keeps (F = N*K)
  BlockArgument bias;    ///< [F], or null
  Operation *biasBroadcast = nullptr; ///< the bias along the last dim
  AddOp add;
  SmallVector<SliceOp> chunks;
  /// timm's form instead of chunks: the [..., F] result reshaped to
  /// [..., N, r...] (r... making K), whose N dim is then cut.
  ReshapeOp split;
  int64_t chunkSize; ///< K
};
} // namespace

/// Whether every user of `v` is a slice of one of the equal aligned chunks
/// of `dim` (each smaller than the dim, stride 1, whole along every other
/// dim).
static bool cutOnlyAlong(Value v, int64_t dim) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(v.getType()).getShape();
  int64_t size = 0;
  for (Operation *user : v.getUsers()) {
    auto slice = dyn_cast<SliceOp>(user);
    if (!slice ||
        llvm::any_of(slice.getStride(), [](int64_t s) { return s != 1; }))
      return false;
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
      if (d != dim &&
          (slice.getStart()[d] != 0 || slice.getLimit()[d] != shape[d]))
        return false;
    int64_t start = slice.getStart()[dim];
    int64_t width = slice.getLimit()[dim] - start;
    if (size == 0)
      size = width;
    if (width != size || width == 0 || start % width != 0)
      return false;
  }
  return size != 0 && size < shape[dim] && shape[dim] % size == 0;
}

/// timm's fused qkv, `qkv(x).reshape(B, N, 3, H, Dh).permute(2, 0, 3, 1, 4)
/// .unbind(0)`: `split` reshapes [a..., F] to [a..., N, r...] (N >= 2), and
/// its result, perhaps through one transpose, is only cut into chunks of
/// the N dim. Returns K = F / N, the size of each of the N parts.
static std::optional<int64_t> splitsLastDim(ReshapeOp split) {
  ArrayRef<int64_t> in =
      cast<RankedTensorType>(split.getOperand().getType()).getShape();
  ArrayRef<int64_t> out = split.getType().getShape();
  int64_t lead = static_cast<int64_t>(in.size()) - 1;
  if (static_cast<int64_t>(out.size()) < lead + 2 ||
      out.take_front(lead) != in.take_front(lead) || out[lead] < 2 ||
      in.back() % out[lead] != 0)
    return std::nullopt;
  Value cut = split.getResult();
  int64_t dim = lead;
  if (auto t = cut.hasOneUse() ? dyn_cast<TransposeOp>(*cut.getUsers().begin())
                               : nullptr) {
    cut = t.getResult();
    dim = llvm::find(t.getPermutation(), lead) - t.getPermutation().begin();
  }
  if (!cutOnlyAlong(cut, dim))
    return std::nullopt;
  return in.back() / out[lead];
}

/// The fused projection whose product is `dot`, if it is one: a parameter
/// [F, E] or [E, F] (transposed or not) contracted with the rows' last dim,
/// a bias [F] added, the [..., F] result used only by slices of its last dim
/// into equal aligned chunks, at least two of them, or reshaped to be cut as
/// timm cuts it (splitsLastDim).
static std::optional<FusedProjection> matchFused(DotGeneralOp dot) {
  FusedProjection f;
  f.product = dot;
  auto lhsType = cast<RankedTensorType>(dot.getLhs().getType());
  if (!dot.getLhsBatchDims().empty() ||
      dot.getLhsContractingDims().size() != 1 ||
      dot.getLhsContractingDims()[0] != lhsType.getRank() - 1 ||
      cast<RankedTensorType>(dot.getRhs().getType()).getRank() != 2)
    return std::nullopt;
  int64_t rhsContracted = dot.getRhsContractingDims()[0];
  Value rhs = dot.getRhs();
  f.weightFreeDim = 1 - rhsContracted;
  if ((f.transpose = rhs.getDefiningOp<TransposeOp>())) {
    if (!f.transpose->hasOneUse())
      return std::nullopt;
    rhs = f.transpose.getInput();
    f.weightFreeDim = 1 - f.weightFreeDim; // permutation [1, 0]
  }
  f.weight = soleParamOf(rhs, f.transpose ? f.transpose.getOperation()
                                          : dot.getOperation());
  if (!f.weight || !dot->hasOneUse())
    return std::nullopt;
  Value result = dot.getResult();
  int64_t rank = cast<RankedTensorType>(result.getType()).getRank();
  int64_t width = cast<RankedTensorType>(result.getType()).getDimSize(rank - 1);
  if ((f.add = dyn_cast<AddOp>(*dot->getUsers().begin()))) {
    Value other = f.add.getLhs() == result ? f.add.getRhs() : f.add.getLhs();
    f.biasBroadcast = other.getDefiningOp();
    if (!isBroadcastAlong(f.biasBroadcast, {rank - 1}))
      return std::nullopt;
    f.bias = soleParamOf(f.biasBroadcast->getOperand(0), f.biasBroadcast);
    if (!f.bias)
      return std::nullopt;
    result = f.add.getResult();
  }
  if (auto split = result.hasOneUse()
                       ? dyn_cast<ReshapeOp>(*result.getUsers().begin())
                       : nullptr) {
    std::optional<int64_t> k = splitsLastDim(split);
    if (!k)
      return std::nullopt;
    f.split = split;
    f.chunkSize = *k;
    return f;
  }
  f.chunkSize = 0;
  for (Operation *user : result.getUsers()) {
    auto slice = dyn_cast<SliceOp>(user);
    if (!slice)
      return std::nullopt;
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(result.getType()).getShape();
    for (int64_t d = 0; d < rank - 1; ++d)
      if (slice.getStart()[d] != 0 || slice.getLimit()[d] != shape[d])
        return std::nullopt;
    if (llvm::any_of(slice.getStride(), [](int64_t s) { return s != 1; }))
      return std::nullopt;
    int64_t start = slice.getStart()[rank - 1];
    int64_t size = slice.getLimit()[rank - 1] - start;
    if (f.chunkSize == 0)
      f.chunkSize = size;
    if (size != f.chunkSize || size == 0 || start % size != 0)
      return std::nullopt;
    f.chunks.push_back(slice);
  }
  if (f.chunks.empty() || f.chunkSize == width || width % f.chunkSize != 0)
    return std::nullopt;
  return f;
}

/// Stacks the fused projection `f` (see the file comment).
static void stackFused(FusedProjection &f, OpBuilder &b) {
  auto weightType = cast<RankedTensorType>(f.weight.getType());
  int64_t width = weightType.getDimSize(f.weightFreeDim);
  int64_t n = width / f.chunkSize, k = f.chunkSize;
  // [N*K, E] -> [N, K, E] contracted on dim 2; [E, N*K] -> [E, N, K] on 0.
  SmallVector<int64_t> view =
      f.weightFreeDim == 0
          ? SmallVector<int64_t>{n, k, weightType.getDimSize(1)}
          : SmallVector<int64_t>{weightType.getDimSize(0), n, k};
  viewArgument(f.weight, view);
  b.setInsertionPoint(f.product);
  auto product = DotGeneralOp::create(
      b, f.product.getLoc(), f.product.getLhs(), f.weight,
      b.getDenseI64ArrayAttr({}), b.getDenseI64ArrayAttr({}),
      f.product.getLhsContractingDimsAttr(),
      b.getDenseI64ArrayAttr({f.weightFreeDim == 0 ? 2 : 0}));
  Value stacked = product.getResult();
  auto stackedType = cast<RankedTensorType>(stacked.getType());
  int64_t rank = stackedType.getRank();
  if (f.add) {
    viewArgument(f.bias, {n, k});
    b.setInsertionPoint(f.add);
    Value bias = buildBroadcastInDim(b, f.biasBroadcast->getLoc(), stackedType,
                                     f.bias, {rank - 2, rank - 1});
    bool biasFirst = f.add.getLhs() == f.biasBroadcast->getResult(0);
    stacked = AddOp::create(b, f.add.getLoc(), biasFirst ? bias : stacked,
                            biasFirst ? stacked : bias)
                  .getResult();
  }
  // timm's reshape reads the stacked [..., N, K] as it read [..., N*K].
  if (f.split)
    f.split->setOperand(0, stacked);
  for (SliceOp chunk : f.chunks) {
    b.setInsertionPoint(chunk);
    SmallVector<int64_t> start(rank, 0), limit(stackedType.getShape()),
        stride(rank, 1);
    start[rank - 2] = chunk.getStart().back() / k;
    limit[rank - 2] = start[rank - 2] + 1;
    auto slice = SliceOp::create(b, suffixed(chunk.getLoc(), ".stacked"),
                                 stacked, b.getDenseI64ArrayAttr(start),
                                 b.getDenseI64ArrayAttr(limit),
                                 b.getDenseI64ArrayAttr(stride));
    auto flat = ReshapeOp::create(b, chunk.getLoc(), chunk.getType(),
                                  slice.getResult());
    chunk.getResult().replaceAllUsesWith(flat.getResult());
    chunk.erase();
  }
  if (f.add) {
    f.add.erase();
    f.biasBroadcast->erase();
  }
  f.product.erase();
  if (f.transpose)
    f.transpose.erase();
}

/// A linear layer on flattened rows: `flat` = reshape(x) to [M, E], a
/// product contracting its dim 1 with a matrix, perhaps a bias [N] added,
/// reshaped to [a..., N] with a... making M. Applied to x reshaped to
/// [a..., E] instead, the last reshape goes.
static bool unflattenLinear(DotGeneralOp dot, OpBuilder &b) {
  auto flat = dot.getLhs().getDefiningOp<ReshapeOp>();
  auto lhsType = cast<RankedTensorType>(dot.getLhs().getType());
  if (!flat || !flat->hasOneUse() || lhsType.getRank() != 2 ||
      !dot.getLhsBatchDims().empty() ||
      dot.getLhsContractingDims() != ArrayRef<int64_t>{1} ||
      cast<RankedTensorType>(dot.getRhs().getType()).getRank() != 2 ||
      !dot->hasOneUse())
    return false;
  Operation *last = *dot->getUsers().begin();
  auto add = dyn_cast<AddOp>(last);
  Operation *bias = nullptr;
  if (add) {
    Value other = add.getLhs() == dot.getResult() ? add.getRhs() : add.getLhs();
    bias = other.getDefiningOp();
    if (!isBroadcastAlong(bias, {1}) || !add->hasOneUse())
      return false;
    last = *add->getUsers().begin();
  }
  auto unflat = dyn_cast<ReshapeOp>(last);
  if (!unflat)
    return false;
  ArrayRef<int64_t> out = unflat.getType().getShape();
  auto dotType = cast<RankedTensorType>(dot.getType());
  if (out.size() < 3 || out.back() != dotType.getDimSize(1))
    return false;
  SmallVector<int64_t> rows(out.drop_back());
  rows.push_back(lhsType.getDimSize(1));
  b.setInsertionPoint(flat);
  auto input = ReshapeOp::create(b, flat.getLoc(), withShape(flat, rows),
                                 flat.getInput());
  b.setInsertionPoint(dot);
  auto product = DotGeneralOp::create(
      b, dot.getLoc(), input.getResult(), dot.getRhs(),
      dot.getLhsBatchDimsAttr(), dot.getRhsBatchDimsAttr(),
      b.getDenseI64ArrayAttr({static_cast<int64_t>(rows.size()) - 1}),
      dot.getRhsContractingDimsAttr());
  Value result = product.getResult();
  if (add) {
    b.setInsertionPoint(add);
    Value broadcast = buildBroadcastInDim(
        b, bias->getLoc(), result.getType(), bias->getOperand(0),
        {static_cast<int64_t>(out.size()) - 1});
    bool biasFirst = add.getLhs() == bias->getResult(0);
    result = AddOp::create(b, add.getLoc(), biasFirst ? broadcast : result,
                           biasFirst ? result : broadcast)
                 .getResult();
  }
  unflat.getResult().replaceAllUsesWith(result);
  unflat.erase();
  if (add) {
    add.erase();
    bias->erase();
  }
  dot.erase();
  flat.erase();
  return true;
}

namespace {
/// The ops between reshapes that merge a batch dim from factors of their
/// input (B*H from [B, H*d]) and the reshapes that undo it, where the dim
/// is kept as its factors instead (see the file comment).
class MergedBatchDim {
public:
  /// Collects the region around the batched matmul `seed`'s batch dim
  /// `dim`; false when an op in it is not one this rewrite knows.
  bool collect(MatmulOp seed, int64_t dim) {
    return addValue(seed.getResult(), dim) && drain() && factors.size() > 1;
  }
  void rewrite(OpBuilder &b);

private:
  bool addValue(Value v, int64_t dim);
  bool addOperands(Operation *op, int64_t dim);
  bool drain();
  bool isKnownOp(Operation *op) const {
    return isa<TransposeOp, AddOp, SubOp, MulOp, DivOp, SoftmaxOp, LogSoftmaxOp,
               MatmulOp>(op);
  }
  /// The factors of result dim `dim` of `reshape`: the input's dim
  /// boundaries inside it cut it (B*H from [.., B, H*d] is [B, H]).
  static SmallVector<int64_t> factorsOf(ReshapeOp reshape, int64_t dim);
  SmallVector<int64_t> expanded(Value v) const;

  llvm::DenseMap<Value, int64_t> dimOf;
  SmallVector<Value> worklist;
  llvm::SetVector<Operation *> ops, entries, exits;
  /// Operands that do not carry the dim: splat constants and broadcasts
  /// that do not read it.
  llvm::SetVector<Operation *> adapted;
  SmallVector<int64_t> factors;
};
} // namespace

SmallVector<int64_t> MergedBatchDim::factorsOf(ReshapeOp reshape, int64_t dim) {
  ArrayRef<int64_t> in = reshape.getInput().getType().getShape();
  ArrayRef<int64_t> out = reshape.getType().getShape();
  // Strides of the row-major layout both shapes share.
  auto stride = [](ArrayRef<int64_t> shape, size_t d) {
    return product(shape.drop_front(d));
  };
  int64_t hi = stride(out, dim), lo = stride(out, dim + 1);
  SmallVector<int64_t> cuts = {hi};
  for (size_t d = 1; d < in.size(); ++d)
    if (int64_t s = stride(in, d); s < hi && s > lo)
      cuts.push_back(s);
  cuts.push_back(lo);
  SmallVector<int64_t> sizes;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    if (cuts[i + 1] == 0 || cuts[i] % cuts[i + 1] != 0)
      return {};
    sizes.push_back(cuts[i] / cuts[i + 1]);
  }
  return sizes;
}

/// `op` broadcasts its operand and repeats it along result dim `dim` (a
/// mask [1, T, T] added to scores [B*H, T, T]): its operand does not carry
/// the dim.
static bool isBroadcastNotReading(Operation *op, int64_t dim) {
  std::optional<ArrayRef<int64_t>> dims = getBroadcastDims(op);
  if (!dims)
    return false;
  ArrayRef<int64_t> in =
      cast<RankedTensorType>(op->getOperand(0).getType()).getShape();
  for (auto [i, d] : llvm::enumerate(*dims))
    if (d == dim && in[i] != 1)
      return false;
  return true;
}

bool MergedBatchDim::addOperands(Operation *op, int64_t dim) {
  for (Value operand : op->getOperands()) {
    Operation *def = operand.getDefiningOp();
    if (auto c = dyn_cast_or_null<ConstantOp>(def)) {
      auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
      if (!dense || !dense.isSplat())
        return false;
      adapted.insert(def);
      continue;
    }
    if (isBroadcastNotReading(def, dim)) {
      adapted.insert(def);
      continue;
    }
    if (!addValue(operand, dim))
      return false;
  }
  return true;
}

bool MergedBatchDim::addValue(Value v, int64_t dim) {
  if (auto it = dimOf.find(v); it != dimOf.end())
    return it->second == dim;
  dimOf[v] = dim;
  worklist.push_back(v);
  Operation *def = v.getDefiningOp();
  if (auto reshape = dyn_cast_or_null<ReshapeOp>(def)) {
    SmallVector<int64_t> f = factorsOf(reshape, dim);
    if (f.empty() || (!factors.empty() && f != factors))
      return false;
    factors = f;
    entries.insert(def);
    return true;
  }
  if (!def || !isKnownOp(def))
    return false;
  if (ops.insert(def)) {
    if (auto t = dyn_cast<TransposeOp>(def))
      return addValue(t.getInput(), t.getPermutation()[dim]);
    if (auto m = dyn_cast<MatmulOp>(def))
      if (dim >= m.getType().getRank() - 2)
        return false;
    if (auto axis = def->getAttrOfType<IntegerAttr>("axis"))
      if (axis.getInt() == dim)
        return false;
    return addOperands(def, dim);
  }
  return true;
}

bool MergedBatchDim::drain() {
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    int64_t dim = dimOf[v];
    for (Operation *user : v.getUsers()) {
      if (isa<ReshapeOp>(user)) {
        exits.insert(user);
        continue;
      }
      if (!isKnownOp(user))
        return false;
      int64_t resultDim = dim;
      if (auto t = dyn_cast<TransposeOp>(user))
        resultDim =
            llvm::find(t.getPermutation(), dim) - t.getPermutation().begin();
      if (!addValue(user->getResult(0), resultDim))
        return false;
    }
  }
  // An op reached only forwards must have every operand in the region.
  for (Operation *op : ops)
    for (Value operand : op->getOperands())
      if (!dimOf.count(operand) && !adapted.contains(operand.getDefiningOp()))
        return false;
  return llvm::none_of(exits,
                       [&](Operation *op) { return entries.contains(op); });
}

SmallVector<int64_t> MergedBatchDim::expanded(Value v) const {
  auto shape = cast<RankedTensorType>(v.getType()).getShape();
  int64_t dim = dimOf.lookup(v);
  SmallVector<int64_t> out(shape.take_front(dim));
  out.append(factors.begin(), factors.end());
  out.append(shape.begin() + dim + 1, shape.end());
  return out;
}

void MergedBatchDim::rewrite(OpBuilder &b) {
  int64_t extra = factors.size() - 1;
  auto shift = [&](int64_t d, int64_t dim) { return d > dim ? d + extra : d; };
  IRMapping map;
  for (Operation *entry : entries) {
    b.setInsertionPoint(entry);
    Value out = entry->getResult(0);
    map.map(out,
            ReshapeOp::create(b, entry->getLoc(), withShape(out, expanded(out)),
                              entry->getOperand(0))
                .getResult());
  }
  // In block order, so that operands are rewritten before their users.
  SmallVector<Operation *> order(ops.begin(), ops.end());
  llvm::sort(order,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : order) {
    Value result = op->getResult(0);
    int64_t dim = dimOf.lookup(result);
    b.setInsertionPoint(op);
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || !adapted.contains(def) || map.contains(operand))
        continue;
      auto type = withShape(operand, expanded(result));
      if (auto c = dyn_cast<ConstantOp>(def)) {
        auto dense = cast<DenseElementsAttr>(c.getValue());
        map.map(operand,
                ConstantOp::create(b, c.getLoc(), type, dense.resizeSplat(type))
                    .getResult());
        continue;
      }
      ArrayRef<int64_t> along = *getBroadcastDims(def);
      SmallVector<int64_t> dims;
      for (int64_t d : along)
        dims.push_back(shift(d, dim));
      map.map(operand, buildBroadcastInDim(b, def->getLoc(), type,
                                           def->getOperand(0), dims));
    }
    Operation *copy = b.clone(*op, map);
    copy->getResult(0).setType(withShape(result, expanded(result)));
    if (auto t = dyn_cast<TransposeOp>(copy)) {
      // Each factor moves with the dim it came from.
      int64_t from = dimOf.lookup(op->getOperand(0));
      SmallVector<int64_t> perm;
      for (int64_t d : cast<TransposeOp>(op).getPermutation()) {
        if (d == from)
          for (int64_t k = 0; k <= extra; ++k)
            perm.push_back(d + k);
        else
          perm.push_back(shift(d, from));
      }
      t.setPermutation(perm);
    }
    if (auto axis = copy->getAttrOfType<IntegerAttr>("axis"))
      copy->setAttr("axis", b.getI64IntegerAttr(shift(axis.getInt(), dim)));
  }
  for (Operation *exit : exits) {
    b.setInsertionPoint(exit);
    Value in = exit->getOperand(0);
    Value out = exit->getResult(0);
    auto replacement =
        ReshapeOp::create(b, exit->getLoc(), out.getType(), map.lookup(in));
    out.replaceAllUsesWith(replacement.getResult());
    exit->erase();
  }
  // Erase users first.
  for (Operation *op : llvm::reverse(order))
    op->erase();
  SmallVector<Operation *> rest(entries.begin(), entries.end());
  rest.append(adapted.begin(), adapted.end());
  for (Operation *op : rest)
    if (op->use_empty())
      op->erase();
}

void shardc::onnximport::rewriteExportIdioms(func::FuncOp func) {
  OpBuilder b(func.getContext());
  SmallVector<DotGeneralOp> dots;
  func.walk([&](DotGeneralOp dot) { dots.push_back(dot); });
  for (DotGeneralOp dot : dots) {
    if (unflattenLinear(dot, b))
      continue;
    if (std::optional<FusedProjection> f = matchFused(dot))
      stackFused(*f, b);
  }
  // Each batched product in attention seeds one region; a region rewritten
  // erases the products in it, so they are collected afresh each time.
  for (bool changed = true; changed;) {
    changed = false;
    SmallVector<MatmulOp> products;
    func.walk([&](MatmulOp m) { products.push_back(m); });
    for (MatmulOp m : products) {
      for (int64_t dim = 0; dim + 2 < m.getType().getRank(); ++dim) {
        MergedBatchDim region;
        if (region.collect(m, dim)) {
          region.rewrite(b);
          changed = true;
          break;
        }
      }
      if (changed)
        break;
    }
  }
  func.setFunctionType(FunctionType::get(func.getContext(),
                                         func.getBody().getArgumentTypes(),
                                         func.getResultTypes()));
}

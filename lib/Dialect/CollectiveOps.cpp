//===- CollectiveOps.cpp - the collective ops -----------------------------===//
//
// What a collective is (CollectiveOpInterface, its kind's byte and message
// formulas), what its attributes allow and the result shape they give
// (CollectiveShapes.h: the verifiers, the JSON importer and the
// interpreter all ask here) and the collectives' verifiers, with those of
// axis_index, the other SPMD-only op. They name a mesh by symbol, so their
// checks run in verifySymbolUses, where the symbol table is cached.
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/CollectiveShapes.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/UnevenDims.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace shardc;

#include "shardc/Dialect/CollectiveOpInterface.cpp.inc"

StringRef shardc::stringifyCollectiveKind(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllReduce:
    return "all_reduce";
  case CollectiveKind::ReduceScatter:
    return "reduce_scatter";
  case CollectiveKind::AllGather:
    return "all_gather";
  case CollectiveKind::AllToAll:
    return "all_to_all";
  case CollectiveKind::AllSlice:
    return "all_slice";
  case CollectiveKind::CollectivePermute:
    return "collective_permute";
  }
  return "unknown";
}

int64_t shardc::collectiveBytesPerDevice(CollectiveKind kind, int64_t groupSize,
                                         int64_t localBytes) {
  int64_t n = groupSize;
  switch (kind) {
  case CollectiveKind::AllGather:
    return (n - 1) * localBytes;
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::AllToAll:
    return (n - 1) * localBytes / n;
  case CollectiveKind::AllReduce:
    return 2 * (n - 1) * localBytes / n;
  case CollectiveKind::CollectivePermute:
    return localBytes;
  case CollectiveKind::AllSlice:
    return 0;
  }
  return 0;
}

/// Rounds of a recursive-doubling (or Bruck) exchange over n devices.
static int64_t doublingRounds(int64_t n) {
  int64_t rounds = 0;
  for (int64_t reach = 1; reach < n; reach *= 2)
    ++rounds;
  return rounds;
}

SmallVector<CollectiveAlgorithm, 2>
shardc::collectiveAlgorithms(CollectiveKind kind, int64_t groupSize,
                             int64_t localBytes) {
  int64_t n = groupSize;
  int64_t volume = collectiveBytesPerDevice(kind, n, localBytes);
  int64_t rounds = doublingRounds(n);
  bool powerOfTwo = (n & (n - 1)) == 0;
  switch (kind) {
  case CollectiveKind::AllSlice:
    return {{0, 0}};
  case CollectiveKind::CollectivePermute:
    return {{1, volume}};
  case CollectiveKind::AllToAll: {
    // Small blocks: Bruck's algorithm, as MPI libraries run it, in
    // ceil(log2 n) rounds; round k forwards the blocks whose index has bit
    // k set (about half of them each round, so more bytes than pairwise).
    // Large blocks: pairwise exchange, every device sending to every other
    // in turn, each block once.
    int64_t bruckBlocks = 0;
    for (int64_t bit = 1; bit < n; bit *= 2)
      for (int64_t i = 0; i < n; ++i)
        bruckBlocks += (i & bit) != 0;
    return {{rounds, bruckBlocks * localBytes / n}, {n - 1, volume}};
  }
  case CollectiveKind::AllGather:
  case CollectiveKind::ReduceScatter:
    // Recursive doubling (Bruck's for any n) / recursive halving move the
    // ring's bytes in log2(n) rounds.
    return {{rounds, volume}};
  case CollectiveKind::AllReduce: {
    // Two devices swap their blocks and add: one exchange.
    if (n == 2)
      return {{1, volume}};
    // Small blocks: recursive doubling sends the whole block every round
    // (two extra rounds fold in the devices beyond a power of two). Large
    // blocks: Rabenseifner's reduce-scatter by halving and all-gather by
    // doubling, the ring's bytes in 2 log2(n) rounds.
    int64_t small = powerOfTwo ? rounds : rounds + 1;
    return {{small, small * localBytes}, {2 * rounds, volume}};
  }
  }
  return {{0, volume}};
}

bool shardc::isIdentityPermutation(
    ArrayRef<std::pair<int64_t, int64_t>> pairs) {
  return llvm::all_of(pairs, [](auto p) { return p.first == p.second; });
}

static int64_t groupSizeOf(MeshOp mesh, ArrayAttr axes) {
  int64_t n = 1;
  for (Attribute a : axes)
    n *= std::max<int64_t>(1, mesh.getAxisSize(cast<StringAttr>(a).getValue()));
  return n;
}

/// Resolves the mesh and checks the axis list; returns the group size.
static FailureOr<int64_t> verifyGroup(Operation *op,
                                      SymbolTableCollection &symbols,
                                      FlatSymbolRefAttr meshRef,
                                      ArrayAttr axes) {
  auto mesh = symbols.lookupNearestSymbolFrom<MeshOp>(op, meshRef.getAttr());
  if (!mesh)
    return op->emitOpError() << "names unknown mesh " << meshRef;
  if (axes.empty())
    return op->emitOpError("needs at least one mesh axis");
  llvm::StringSet<> seen;
  for (Attribute a : axes) {
    StringRef axis = cast<StringAttr>(a).getValue();
    if (mesh.getAxisIndex(axis) < 0)
      return op->emitOpError()
             << "uses unknown mesh axis \"" << axis << "\" (mesh " << meshRef
             << " has axes " << mesh.getAxisNames() << ")";
    if (!seen.insert(axis).second)
      return op->emitOpError() << "lists mesh axis \"" << axis << "\" twice";
  }
  return groupSizeOf(mesh, axes);
}

std::optional<CollectiveKind>
shardc::symbolizeCollectiveKind(StringRef mnemonic) {
  for (CollectiveKind kind :
       {CollectiveKind::AllReduce, CollectiveKind::ReduceScatter,
        CollectiveKind::AllGather, CollectiveKind::AllToAll,
        CollectiveKind::AllSlice, CollectiveKind::CollectivePermute})
    if (stringifyCollectiveKind(kind) == mnemonic)
      return kind;
  return std::nullopt;
}

bool shardc::concatenatesBlocks(CollectiveKind kind) {
  return kind == CollectiveKind::AllGather || kind == CollectiveKind::AllToAll;
}

int64_t shardc::getCutDim(CollectiveOpInterface op) {
  switch (op.getCollectiveKind()) {
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::AllSlice:
  case CollectiveKind::AllToAll:
    return op.getCollectiveDim();
  default:
    return -1;
  }
}

int64_t shardc::getConcatenatedDim(CollectiveOpInterface op) {
  switch (op.getCollectiveKind()) {
  case CollectiveKind::AllGather:
    return op.getCollectiveDim();
  case CollectiveKind::AllToAll:
    return op.getCollectiveConcatDim();
  default:
    return -1;
  }
}

std::pair<int64_t, int64_t> shardc::concatenatedSizes(int64_t block,
                                                      int64_t groupSize) {
  if (block <= 0 || groupSize <= 1)
    return {block * groupSize, block * groupSize};
  // Blocks of `block` hold a dim of size s exactly when ceil(s / groupSize)
  // is `block`.
  return {(block - 1) * groupSize + 1, block * groupSize};
}

/// A `pairs` entry as (source, target): a two-integer array (the textual
/// form `[[0, 1]]` and the JSON importer build these) or a two-element i64
/// array attribute.
static std::optional<std::pair<int64_t, int64_t>> asPair(Attribute entry) {
  if (auto pair = dyn_cast<DenseI64ArrayAttr>(entry); pair && pair.size() == 2)
    return std::make_pair(pair[0], pair[1]);
  auto arr = dyn_cast<ArrayAttr>(entry);
  if (arr && arr.size() == 2 && isa<IntegerAttr>(arr[0]) &&
      isa<IntegerAttr>(arr[1]))
    return std::make_pair(cast<IntegerAttr>(arr[0]).getInt(),
                          cast<IntegerAttr>(arr[1]).getInt());
  return std::nullopt;
}

/// `[0, 1, 2]`: a `pairs` entry as a user wrote it, integers without
/// their type.
static std::string entryText(Attribute entry) {
  std::string out;
  llvm::raw_string_ostream os(out);
  if (auto ints = dyn_cast<DenseI64ArrayAttr>(entry)) {
    os << "[";
    llvm::interleaveComma(ints.asArrayRef(), os);
    os << "]";
  } else if (auto arr = dyn_cast<ArrayAttr>(entry)) {
    os << "[";
    llvm::interleaveComma(arr, os, [&](Attribute a) {
      if (auto n = dyn_cast<IntegerAttr>(a))
        os << n.getInt();
      else
        os << a;
    });
    os << "]";
  } else {
    os << entry;
  }
  return out;
}

SmallVector<std::pair<int64_t, int64_t>>
CollectivePermuteOp::getSourceTargetPairs() {
  SmallVector<std::pair<int64_t, int64_t>> out;
  for (Attribute a : getPairs())
    if (std::optional<std::pair<int64_t, int64_t>> pair = asPair(a))
      out.push_back(*pair);
  return out;
}

/// Every pair is [source, target] group indices, no source and no target
/// twice.
static std::optional<CollectiveProblem> checkPairs(CollectivePermuteOp op,
                                                   int64_t groupSize) {
  llvm::DenseSet<int64_t> sources, targets;
  for (auto [i, entry] : llvm::enumerate(op.getPairs())) {
    auto problem = [&, i = i](const Twine &why) {
      return CollectiveProblem{"pairs", static_cast<int64_t>(i), why.str()};
    };
    std::optional<std::pair<int64_t, int64_t>> pair = asPair(entry);
    if (!pair)
      return problem("pairs must be a list of [source, target] integer "
                     "pairs, got " +
                     entryText(entry));
    auto [s, t] = *pair;
    if (s < 0 || s >= groupSize || t < 0 || t >= groupSize)
      return problem("pair [" + Twine(s) + ", " + Twine(t) +
                     "] is outside the group of size " + Twine(groupSize));
    if (!sources.insert(s).second)
      return problem("source " + Twine(s) + " appears twice");
    if (!targets.insert(t).second)
      return problem("target " + Twine(t) + " appears twice");
  }
  return std::nullopt;
}

std::optional<CollectiveProblem>
shardc::checkCollective(CollectiveOpInterface op, ArrayRef<int64_t> input,
                        int64_t groupSize) {
  CollectiveKind kind = op.getCollectiveKind();
  if (kind == CollectiveKind::CollectivePermute)
    return checkPairs(cast<CollectivePermuteOp>(op.getOperation()), groupSize);
  if (kind == CollectiveKind::AllReduce)
    return std::nullopt;
  int64_t rank = input.size();
  auto outOfRange = [&](StringRef name,
                        int64_t dim) -> std::optional<CollectiveProblem> {
    if (dim >= 0 && dim < rank)
      return std::nullopt;
    return CollectiveProblem{
        name.str(), -1,
        (name + " " + Twine(dim) + " is out of range for rank " + Twine(rank))
            .str()};
  };
  StringRef concatName = "dim";
  if (kind == CollectiveKind::AllToAll) {
    int64_t split = op.getCollectiveDim(), concat = op.getCollectiveConcatDim();
    concatName = "concat_dim";
    if (auto problem = outOfRange("split_dim", split))
      return problem;
    if (auto problem = outOfRange("concat_dim", concat))
      return problem;
    if (split == concat)
      return CollectiveProblem{"concat_dim", -1,
                               "split_dim and concat_dim must differ (both "
                               "are " +
                                   std::to_string(split) + ")"};
  } else if (auto problem = outOfRange("dim", op.getCollectiveDim())) {
    return problem;
  }
  int64_t concat = getConcatenatedDim(op), whole = 0;
  if (concat >= 0 && __builtin_mul_overflow(input[concat], groupSize, &whole))
    return CollectiveProblem{concatName.str(), -1,
                             "gathering dim " + std::to_string(concat) +
                                 " over " + std::to_string(groupSize) +
                                 " devices overflows 64 bits"};
  return std::nullopt;
}

SmallVector<int64_t>
shardc::getCollectiveResultShape(CollectiveOpInterface op,
                                 ArrayRef<int64_t> input, int64_t groupSize,
                                 std::optional<int64_t> concatenatedSize) {
  SmallVector<int64_t> shape(input);
  if (int64_t cut = getCutDim(op); cut >= 0)
    shape[cut] = paddedBlockSize(shape[cut], groupSize);
  if (int64_t concat = getConcatenatedDim(op); concat >= 0)
    shape[concat] =
        concatenatedSize ? *concatenatedSize : shape[concat] * groupSize;
  return shape;
}

/// Checks `op`'s attributes and its result type over a group of
/// `groupSize` devices. A concatenated dim may drop the padding of an
/// uneven dim: the result type names the size it keeps.
static LogicalResult verifyCollectiveShape(CollectiveOpInterface op,
                                           int64_t groupSize) {
  auto input = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!input || !result)
    return op->emitOpError("needs ranked tensors");
  if (std::optional<CollectiveProblem> problem =
          checkCollective(op, input.getShape(), groupSize))
    return op->emitOpError() << problem->message;
  std::optional<int64_t> kept;
  int64_t concat = getConcatenatedDim(op);
  if (concat >= 0 && result.getRank() == input.getRank()) {
    auto [lowest, highest] =
        concatenatedSizes(input.getDimSize(concat), groupSize);
    int64_t size = result.getDimSize(concat);
    if (size >= lowest && size <= highest)
      kept = size;
  }
  auto expected = RankedTensorType::get(
      getCollectiveResultShape(op, input.getShape(), groupSize, kept),
      input.getElementType());
  if (expected != result)
    return op->emitOpError() << "result type " << result
                             << " does not match the expected " << expected;
  return success();
}

#define SHARDC_GROUP_SIZE(OP)                                                  \
  int64_t OP::getGroupSize(MeshOp mesh) { return groupSizeOf(mesh, getAxes()); }
SHARDC_GROUP_SIZE(AllGatherOp)
SHARDC_GROUP_SIZE(ReduceScatterOp)
SHARDC_GROUP_SIZE(AllReduceOp)
SHARDC_GROUP_SIZE(AllToAllOp)
SHARDC_GROUP_SIZE(AllSliceOp)
SHARDC_GROUP_SIZE(CollectivePermuteOp)
#undef SHARDC_GROUP_SIZE

/// A sum of booleans is no boolean: i1 reduces with max (which is `or`).
static LogicalResult checkReductionOfType(Operation *op, ReductionKind kind,
                                          Type type) {
  if (kind == ReductionKind::Sum &&
      cast<ShapedType>(type).getElementType().isSignlessInteger(1))
    return op->emitOpError() << "cannot sum i1 values; reduce booleans with "
                                "#shardc.reduction<max> (or)";
  return success();
}

/// The checks every collective shares: its mesh and axes, then its
/// attributes and result type against its group.
static LogicalResult verifyCollective(CollectiveOpInterface op,
                                      SymbolTableCollection &symbols) {
  FailureOr<int64_t> n =
      verifyGroup(op, symbols, op.getMeshAttr(), op.getAxes());
  if (failed(n))
    return failure();
  return verifyCollectiveShape(op, *n);
}

LogicalResult AllGatherOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyCollective(*this, symbols);
}

LogicalResult
ReduceScatterOp::verifySymbolUses(SymbolTableCollection &symbols) {
  if (failed(checkReductionOfType(*this, getReduction(), getInput().getType())))
    return failure();
  return verifyCollective(*this, symbols);
}

LogicalResult AllReduceOp::verifySymbolUses(SymbolTableCollection &symbols) {
  if (failed(checkReductionOfType(*this, getReduction(), getInput().getType())))
    return failure();
  return verifyCollective(*this, symbols);
}

LogicalResult AllToAllOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyCollective(*this, symbols);
}

LogicalResult AllSliceOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyCollective(*this, symbols);
}

LogicalResult
CollectivePermuteOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyCollective(*this, symbols);
}

//===----------------------------------------------------------------------===//
// axis_index: no data moves, but like a collective it names a mesh and
// groups of its devices, and only means something in an SPMD program.
//===----------------------------------------------------------------------===//

LogicalResult AxisIndexOp::inferReturnTypes(MLIRContext *ctx,
                                            std::optional<Location>, Adaptor,
                                            SmallVectorImpl<Type> &types) {
  types.push_back(RankedTensorType::get({}, IntegerType::get(ctx, 64)));
  return success();
}

LogicalResult AxisIndexOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyGroup(*this, symbols, getMeshAttr(), getAxes());
}

/// One integer the device knows; a kernel computes it where it reads it.
double AxisIndexOp::getFlops(ArrayRef<double>) { return 0; }

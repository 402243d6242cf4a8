//===- CollectiveOps.cpp - the collective ops -----------------------------===//
//
// What a collective is (CollectiveOpInterface, its kind's byte and message
// formulas) and the collectives' verifiers, with those of axis_index, the
// other SPMD-only op. They name a mesh by symbol, so their checks run in
// verifySymbolUses, where the symbol table is cached.
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/UnevenDims.h"

#include "mlir/IR/Builders.h"
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

int64_t shardc::collectiveBytesPerDevice(CollectiveKind kind,
                                         int64_t groupSize,
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

static LogicalResult checkDim(Operation *op, int64_t dim, int64_t rank,
                              StringRef name) {
  if (dim < 0 || dim >= rank)
    return op->emitOpError()
           << name << " " << dim << " is out of range for rank " << rank;
  return success();
}

/// Expects `result` to be `input` with each dim of `gathers` concatenated
/// from the group's `n` blocks and each dim of `splits` cut into `n`. An
/// uneven dim (docs/sharding.md#uneven-dims) is padded: a cut dim becomes
/// ceil(size / n), and a gathered dim may drop padding past the size the
/// result type gives, as long as the input is that size's block
/// (ceil(result / n)).
static LogicalResult
checkScaledType(Operation *op, RankedTensorType input, RankedTensorType result,
                ArrayRef<std::pair<int64_t, int64_t>> gathers,
                ArrayRef<std::pair<int64_t, int64_t>> splits) {
  SmallVector<int64_t> shape(input.getShape());
  for (auto [d, n] : splits)
    shape[d] = paddedBlockSize(shape[d], n);
  for (auto [d, n] : gathers) {
    // The gathered size the result names, if its block is the input's.
    if (result.getRank() == input.getRank() &&
        paddedBlockSize(result.getDimSize(d), n) == shape[d])
      shape[d] = result.getDimSize(d);
    else
      shape[d] *= n;
  }
  auto expected = RankedTensorType::get(shape, input.getElementType());
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

LogicalResult AllGatherOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<int64_t> n = verifyGroup(*this, symbols, getMeshAttr(), getAxes());
  if (failed(n) ||
      failed(checkDim(*this, getDim(), getInput().getType().getRank(), "dim")))
    return failure();
  return checkScaledType(*this, getInput().getType(), getResult().getType(),
                         {{getDim(), *n}}, {});
}

/// A sum of booleans is no boolean: i1 reduces with max (which is `or`).
static LogicalResult checkReductionOfType(Operation *op, ReductionKind kind,
                                          Type type) {
  if (kind == ReductionKind::Sum &&
      cast<ShapedType>(type).getElementType().isSignlessInteger(1))
    return op->emitOpError() << "cannot sum i1 values; reduce booleans with "
                                "#shardc.reduction<max> (or)";
  return success();
}

LogicalResult
ReduceScatterOp::verifySymbolUses(SymbolTableCollection &symbols) {
  if (failed(checkReductionOfType(*this, getReduction(), getInput().getType())))
    return failure();
  FailureOr<int64_t> n = verifyGroup(*this, symbols, getMeshAttr(), getAxes());
  if (failed(n) ||
      failed(checkDim(*this, getDim(), getInput().getType().getRank(), "dim")))
    return failure();
  return checkScaledType(*this, getInput().getType(), getResult().getType(), {},
                         {{getDim(), *n}});
}

LogicalResult AllReduceOp::verifySymbolUses(SymbolTableCollection &symbols) {
  if (failed(checkReductionOfType(*this, getReduction(), getInput().getType())))
    return failure();
  return verifyGroup(*this, symbols, getMeshAttr(), getAxes());
}

LogicalResult AllToAllOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<int64_t> n = verifyGroup(*this, symbols, getMeshAttr(), getAxes());
  int64_t rank = getInput().getType().getRank();
  if (failed(n) || failed(checkDim(*this, getSplitDim(), rank, "split_dim")) ||
      failed(checkDim(*this, getConcatDim(), rank, "concat_dim")))
    return failure();
  if (getSplitDim() == getConcatDim())
    return emitOpError("split_dim and concat_dim must differ");
  return checkScaledType(*this, getInput().getType(), getResult().getType(),
                         {{getConcatDim(), *n}}, {{getSplitDim(), *n}});
}

LogicalResult AllSliceOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<int64_t> n = verifyGroup(*this, symbols, getMeshAttr(), getAxes());
  if (failed(n) ||
      failed(checkDim(*this, getDim(), getInput().getType().getRank(), "dim")))
    return failure();
  return checkScaledType(*this, getInput().getType(), getResult().getType(), {},
                         {{getDim(), *n}});
}

SmallVector<std::pair<int64_t, int64_t>>
CollectivePermuteOp::getSourceTargetPairs() {
  SmallVector<std::pair<int64_t, int64_t>> out;
  for (Attribute a : getPairs()) {
    auto pair = dyn_cast<DenseI64ArrayAttr>(a);
    auto arr = dyn_cast<ArrayAttr>(a);
    if (pair && pair.size() == 2)
      out.push_back({pair[0], pair[1]});
    else if (arr && arr.size() == 2 && isa<IntegerAttr>(arr[0]) &&
             isa<IntegerAttr>(arr[1]))
      out.push_back({cast<IntegerAttr>(arr[0]).getInt(),
                     cast<IntegerAttr>(arr[1]).getInt()});
  }
  return out;
}

LogicalResult
CollectivePermuteOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<int64_t> n = verifyGroup(*this, symbols, getMeshAttr(), getAxes());
  if (failed(n))
    return failure();
  auto pairs = getSourceTargetPairs();
  if (pairs.size() != getPairs().size())
    return emitOpError("pairs must be a list of [source, target] integer "
                       "pairs");
  llvm::DenseSet<int64_t> sources, targets;
  for (auto [s, t] : pairs) {
    if (s < 0 || s >= *n || t < 0 || t >= *n)
      return emitOpError() << "pair [" << s << ", " << t
                           << "] is outside the group of size " << *n;
    if (!sources.insert(s).second)
      return emitOpError() << "source " << s << " appears twice";
    if (!targets.insert(t).second)
      return emitOpError() << "target " << t << " appears twice";
  }
  return success();
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

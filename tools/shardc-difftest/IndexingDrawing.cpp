//===- IndexingDrawing.cpp - random gathers and scatter_adds --------------===//
//
// Gathers of a value along any axis with random ids, and scatter_adds of
// updates into a value at random ids. The ids are an integer constant
// (i32 or i64, in range) of rank 1 or 2 with a random sharding of their
// own; they never enter the pool (every pooled value is f32). The table is
// often pinned to a random sharding first, which shards its gathered axis
// about as often as any other: the vocab-parallel local computation
// (axis_index, ids shifted, "skip") is then what the sharded program runs.
//
// A gather copies elements (a sharded axis adds zeros to them), so its
// result keeps the table's bounds and exactness. A scatter_add sums up to
// as many updates as there are ids into one element, in an order the
// partial sums of sharded ids change: bounded accordingly, not exact.
//
//===----------------------------------------------------------------------===//

#include "ProgramBuilder.h"

#include "shardc/Dialect/IndexingShapes.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::difftest;

namespace {

class IndexingDrawer {
public:
  explicit IndexingDrawer(ProgramBuilder &pb) : pb(pb), rng(pb.rng), b(pb.b) {}

  Value gather(Value table);
  Value scatterAdd(Value table);

private:
  /// Random ids in [0, rows) of a random shape whose element count times
  /// `sliceElements` stays within kMaxElements; null if none fits.
  Value ids(int64_t rows, int64_t sliceElements);
  /// `table`, sometimes pinned to a random sharding first.
  Value maybeSharded(Value table);

  ProgramBuilder &pb;
  DiffRng &rng;
  OpBuilder &b;
};

Value IndexingDrawer::ids(int64_t rows, int64_t sliceElements) {
  if (rows < 1)
    return nullptr;
  SmallVector<int64_t> shape;
  for (int64_t rank = 1 + rng.uniform(2); rank > 0; --rank)
    shape.push_back(pb.randomDim());
  if (numElements(shape) * std::max<int64_t>(sliceElements, 1) > kMaxElements)
    return nullptr;
  Type element = rng.chance(0.5) ? b.getI32Type() : b.getI64Type();
  auto type = RankedTensorType::get(shape, element);
  SmallVector<APInt> values;
  unsigned width = element.getIntOrFloatBitWidth();
  // Repeats are likely (few rows), which scatter_add must accumulate.
  for (int64_t i = 0, n = numElements(shape); i < n; ++i)
    values.push_back(APInt(width, rng.uniform(rows)));
  Value c = ConstantOp::create(
      b, pb.freshLoc(),
      cast<ElementsAttr>(DenseElementsAttr::get(type, values)));
  if (rng.chance(0.5))
    c.getDefiningOp()->setAttr(ShardcDialect::getShardingAttrName(),
                               pb.randomSharding(shape, false));
  return c;
}

Value IndexingDrawer::maybeSharded(Value table) {
  if (!rng.chance(0.5))
    return table;
  return pb.record(ShardingConstraintOp::create(
                       b, pb.freshLoc(), table,
                       pb.randomSharding(ProgramBuilder::tensorOf(table)
                                             .getShape(),
                                         /*allowPartial=*/false)),
                   pb.info(table));
}

Value IndexingDrawer::gather(Value table) {
  ArrayRef<int64_t> shape = ProgramBuilder::tensorOf(table).getShape();
  int64_t rank = shape.size();
  if (rank == 0 || rank >= kMaxRank)
    return nullptr;
  int64_t axis = rng.uniform(rank);
  Value idx = ids(shape[axis], numElements(shape) / std::max<int64_t>(
                                                       shape[axis], 1));
  if (!idx)
    return nullptr;
  table = maybeSharded(table);
  SmallVector<int64_t> res =
      takeShape(shape, ProgramBuilder::tensorOf(idx).getShape(), axis);
  if (static_cast<int64_t>(res.size()) > kMaxRank ||
      numElements(res) > kMaxElements)
    return nullptr;
  return pb.record(GatherOp::create(b, pb.freshLoc(), pb.makeType(res), table,
                                    idx, axis),
                   pb.info(table));
}

Value IndexingDrawer::scatterAdd(Value table) {
  ArrayRef<int64_t> shape = ProgramBuilder::tensorOf(table).getShape();
  int64_t rank = shape.size();
  if (rank == 0 || rank >= kMaxRank)
    return nullptr;
  int64_t axis = rng.uniform(rank);
  Value idx = ids(shape[axis], numElements(shape) / std::max<int64_t>(
                                                       shape[axis], 1));
  if (!idx)
    return nullptr;
  SmallVector<int64_t> updShape =
      takeShape(shape, ProgramBuilder::tensorOf(idx).getShape(), axis);
  if (static_cast<int64_t>(updShape.size()) > kMaxRank ||
      numElements(updShape) > kMaxElements)
    return nullptr;
  // An earlier value of the updates' shape, or a new input.
  Value updates;
  for (Value p : pb.pool)
    if (ProgramBuilder::tensorOf(p).getShape() == ArrayRef<int64_t>(updShape) &&
        rng.chance(0.5))
      updates = p;
  if (!updates) {
    if (!pb.canAddInput())
      return nullptr;
    updates = pb.addInput(updShape);
  }
  table = maybeSharded(table);
  const ValueInfo &ti = pb.info(table), &ui = pb.info(updates);
  double count = static_cast<double>(
      numElements(ProgramBuilder::tensorOf(idx).getShape()));
  ValueInfo r;
  r.lo = ti.lo + count * std::min(ui.lo, 0.0);
  r.hi = ti.hi + count * std::max(ui.hi, 0.0);
  r.exact = false;
  r.nonFinite = ti.nonFinite || ui.nonFinite;
  r.mayBeSummed = true; // sharded ids make each device's sum partial
  if (!(r.scale() <= kMaxScale))
    return nullptr;
  return pb.record(ScatterAddOp::create(b, pb.freshLoc(),
                                        ProgramBuilder::tensorOf(table), table,
                                        idx, updates, axis),
                   r);
}

} // namespace

Value ProgramBuilder::buildIndexingOp(Value x) {
  IndexingDrawer d(*this);
  return rng.chance(0.6) ? d.gather(x) : d.scatterAdd(x);
}

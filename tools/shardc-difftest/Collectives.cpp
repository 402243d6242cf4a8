//===- Collectives.cpp - a collective slipped into a global program -------===//
//
// A global program holding a collective is not valid input to the
// partitioner nor to the reference interpreter: the generator builds one
// of every collective, well formed on the value's global shape, and the
// runner checks that both reject it with a diagnostic at the collective.
//
//===----------------------------------------------------------------------===//

#include "ProgramBuilder.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::difftest;

namespace {

/// One collective over some mesh axes, built on a value of `shape`.
class CollectiveDrawer {
public:
  CollectiveDrawer(ProgramBuilder &pb, Value x)
      : pb(pb), b(pb.b), x(x), shape(ProgramBuilder::tensorOf(x).getShape()),
        res(shape), rank(shape.size()) {
    SmallVector<int64_t> order = pb.randomPermutation(pb.axisNames.size());
    SmallVector<Attribute> names;
    for (int64_t k = 0, e = 1 + pb.rng.uniform(order.size()); k < e; ++k) {
      names.push_back(b.getStringAttr(pb.axisNames[order[k]]));
      groupSize *= pb.axisSizes[order[k]];
    }
    axes = b.getArrayAttr(names);
    loc = pb.freshLoc();
  }

  Operation *allReduce();
  Operation *allGather();
  Operation *sliceOrReduceScatter();
  Operation *allToAll();
  Operation *collectivePermute();

private:
  ProgramBuilder &pb;
  OpBuilder &b;
  Value x;
  ArrayRef<int64_t> shape;
  SmallVector<int64_t> res;
  int64_t rank;
  int64_t groupSize = 1;
  ArrayAttr axes;
  Location loc = UnknownLoc::get(b.getContext());

  /// A dim the group size divides, or -1.
  int64_t divisibleDim() {
    SmallVector<int64_t> ok;
    for (int64_t d = 0; d < rank; ++d)
      if (shape[d] % groupSize == 0)
        ok.push_back(d);
    return ok.empty() ? -1 : ok[pb.rng.uniform(ok.size())];
  }
  ReductionKindAttr reduction(ReductionKind kind) {
    return ReductionKindAttr::get(b.getContext(), kind);
  }
};

Operation *CollectiveDrawer::allReduce() {
  return AllReduceOp::create(
      b, loc, x.getType(), x, pb.meshRef, axes,
      reduction(pb.rng.chance(0.5) ? ReductionKind::Sum : ReductionKind::Max));
}

Operation *CollectiveDrawer::allGather() {
  if (rank == 0)
    return nullptr;
  int64_t d = pb.rng.uniform(rank);
  res[d] *= groupSize;
  if (numElements(res) > kMaxElements)
    return nullptr;
  return AllGatherOp::create(b, loc, pb.makeType(res), x, pb.meshRef, axes,
                             b.getI64IntegerAttr(d));
}

Operation *CollectiveDrawer::sliceOrReduceScatter() {
  int64_t d = divisibleDim();
  if (d < 0)
    return nullptr;
  res[d] /= groupSize;
  if (pb.rng.chance(0.5))
    return AllSliceOp::create(b, loc, pb.makeType(res), x, pb.meshRef, axes,
                              b.getI64IntegerAttr(d));
  return ReduceScatterOp::create(b, loc, pb.makeType(res), x, pb.meshRef, axes,
                                 b.getI64IntegerAttr(d),
                                 reduction(ReductionKind::Sum));
}

Operation *CollectiveDrawer::allToAll() {
  int64_t s = divisibleDim();
  if (s < 0 || rank < 2)
    return nullptr;
  int64_t c = pb.rng.uniform(rank - 1);
  if (c >= s)
    ++c;
  res[s] /= groupSize;
  res[c] *= groupSize;
  return AllToAllOp::create(b, loc, pb.makeType(res), x, pb.meshRef, axes,
                            b.getI64IntegerAttr(s), b.getI64IntegerAttr(c));
}

Operation *CollectiveDrawer::collectivePermute() {
  SmallVector<int64_t> targets = pb.randomPermutation(groupSize);
  SmallVector<Attribute> pairs;
  for (int64_t s = 0; s < groupSize; ++s)
    if (pb.rng.chance(0.8))
      pairs.push_back(b.getArrayAttr(
          {b.getI64IntegerAttr(s), b.getI64IntegerAttr(targets[s])}));
  return CollectivePermuteOp::create(b, loc, x.getType(), x, pb.meshRef, axes,
                                     b.getArrayAttr(pairs));
}

} // namespace

Value ProgramBuilder::buildCollective(Value x) {
  CollectiveDrawer d(*this, x);
  Operation *op = nullptr;
  switch (rng.uniform(6)) {
  case 0:
    op = d.allReduce();
    break;
  case 1:
    op = d.allGather();
    break;
  case 2:
  case 3:
    op = d.sliceOrReduceScatter();
    break;
  case 4:
    op = d.allToAll();
    break;
  default:
    op = d.collectivePermute();
    break;
  }
  if (!op)
    return nullptr;
  ValueInfo r = info(x);
  r.exact = false;
  return record(op->getResult(0), r);
}

//===- ReshardPlanner.cpp - moving a value between two shardings ----------===//

#include "shardc/Analysis/ReshardPlanner.h"

#include "shardc/Dialect/UnevenDims.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace shardc;

namespace {
using AxisVec = SmallVector<StringRef, 2>;

/// A sharding being edited step by step.
struct Layout {
  SmallVector<AxisVec> dims;
  AxisVec partial;

  static Layout of(ShardingAttr s) {
    Layout l;
    for (size_t d = 0; d < s.getRank(); ++d)
      l.dims.push_back(AxisVec(s.getDimAxes(d)));
    l.partial = AxisVec(s.getPartialAxes());
    return l;
  }
  ShardingAttr toAttr(MLIRContext *ctx, FlatSymbolRefAttr mesh) const {
    SmallVector<SmallVector<StringRef>> d;
    for (const AxisVec &a : dims)
      d.push_back(SmallVector<StringRef>(a.begin(), a.end()));
    return ShardingAttr::get(
        ctx, mesh, d, SmallVector<StringRef>(partial.begin(), partial.end()));
  }
};

bool isPrefix(ArrayRef<StringRef> a, ArrayRef<StringRef> b) {
  return a.size() <= b.size() && llvm::equal(a, b.take_front(a.size()));
}

class Planner {
public:
  /// `viaReplication`: the dims (a bit each) whose blocks cannot be moved
  /// group by group (uneven dims whose blocks do not nest, see
  /// `nestsEvenly`); each is gathered whole first and cut into the target's
  /// blocks last.
  Planner(MeshOp mesh, ArrayRef<int64_t> globalShape, int64_t elementBytes,
          FlatSymbolRefAttr meshRef, llvm::SmallBitVector viaReplication)
      : mesh(mesh), meshRef(meshRef), globalShape(globalShape),
        elementBytes(elementBytes), viaReplication(std::move(viaReplication)) {}

  /// True if every step of the plan moves whole blocks within its groups.
  bool isExact() const { return exact; }
  /// The dims some step of the plan could not move group by group.
  const llvm::SmallBitVector &getInexactDims() const { return inexactDims; }

  int64_t product(ArrayRef<StringRef> axes) const {
    int64_t n = 1;
    for (StringRef a : axes)
      n *= mesh.getAxisSize(a);
    return n;
  }

  SmallVector<int64_t, 4> localShape(const Layout &l) const {
    SmallVector<int64_t, 4> shape;
    for (auto [d, axes] : llvm::enumerate(l.dims))
      shape.push_back(paddedBlockSize(globalShape[d], product(axes)));
    return shape;
  }

  int64_t localBytes(const Layout &l) const {
    int64_t n = elementBytes;
    for (int64_t s : localShape(l))
      n *= s;
    return n;
  }

  void emit(ReshardStep::Kind kind, ArrayRef<StringRef> axes, int64_t dim,
            int64_t concatDim, const Layout &before, const Layout &after,
            ArrayRef<std::pair<int64_t, int64_t>> pairs = {}) {
    ReshardStep step;
    step.kind = kind;
    step.axes.assign(axes.begin(), axes.end());
    step.dim = dim;
    step.concatDim = concatDim;
    step.pairs.assign(pairs.begin(), pairs.end());
    step.localShapeBefore = localShape(before);
    step.localShapeAfter = localShape(after);
    step.after = after.toAttr(mesh.getContext(), meshRef);
    step.bytesPerDevice =
        collectiveBytesPerDevice(kind, product(axes), localBytes(before));
    // Uneven dims: a group's blocks must nest in the coarser layout's block.
    int64_t group = product(axes);
    step.groupSize = group;
    step.localBytesBefore = localBytes(before);
    auto check = [&](int64_t d, const Layout &coarse) {
      if (d >= 0 && !nestsEvenly(globalShape[d], product(coarse.dims[d]),
                                 group)) {
        exact = false;
        inexactDims.set(d);
      }
    };
    switch (kind) {
    case ReshardStep::Kind::AllGather:
      check(dim, after);
      break;
    case ReshardStep::Kind::AllSlice:
    case ReshardStep::Kind::ReduceScatter:
      check(dim, before);
      break;
    case ReshardStep::Kind::AllToAll:
      check(dim, before);
      check(concatDim, after);
      break;
    case ReshardStep::Kind::AllReduce:
    case ReshardStep::Kind::CollectivePermute:
      break;
    }
    plan.bytesPerDevice += step.bytesPerDevice;
    plan.steps.push_back(std::move(step));
  }

  /// The block index along each dim that device `coords` holds under `l`.
  SmallVector<int64_t, 4> blocksOf(const Layout &l,
                                   ArrayRef<int64_t> coords) const {
    SmallVector<int64_t, 4> blocks;
    for (const AxisVec &axes : l.dims) {
      int64_t b = 0;
      for (StringRef a : axes)
        b = b * mesh.getAxisSize(a) + coords[mesh.getAxisIndex(a)];
      blocks.push_back(b);
    }
    return blocks;
  }

  /// A permutation within groups over the axes the two layouts use
  /// differently, or nothing if the blocks do not just change owners.
  std::optional<std::pair<AxisVec, SmallVector<std::pair<int64_t, int64_t>>>>
  findPermutation(const Layout &from, const Layout &to) const {
    if (localShape(from) != localShape(to) || from.partial != to.partial)
      return std::nullopt;
    // Axes whose role differs, in mesh order.
    AxisVec axes;
    for (StringRef a : mesh.getAxisNameList()) {
      auto roleIn = [&](const Layout &l) -> std::pair<int64_t, int64_t> {
        for (auto [d, dimAxes] : llvm::enumerate(l.dims))
          for (auto [i, x] : llvm::enumerate(dimAxes))
            if (x == a)
              return {int64_t(d), int64_t(i)};
        return {-1, -1};
      };
      if (roleIn(from) != roleIn(to))
        axes.push_back(a);
    }
    if (axes.empty())
      return std::nullopt;
    int64_t groupSize = product(axes);
    if (groupSize > 4096)
      return std::nullopt;
    SmallVector<int64_t> axisIdx;
    for (StringRef a : axes)
      axisIdx.push_back(mesh.getAxisIndex(a));
    // Within the group of device 0 (other axes at 0): by symmetry every
    // group then pairs the same way, since the other axes play the same
    // role in both layouts.
    SmallVector<int64_t> coords(mesh.getNumAxes(), 0);
    auto coordsOfIndex = [&](int64_t g) {
      SmallVector<int64_t> c = coords;
      for (int64_t i = axes.size() - 1; i >= 0; --i) {
        int64_t size = mesh.getAxisSizes()[axisIdx[i]];
        c[axisIdx[i]] = g % size;
        g /= size;
      }
      return c;
    };
    SmallVector<SmallVector<int64_t, 4>> held, needed;
    for (int64_t g = 0; g < groupSize; ++g) {
      held.push_back(blocksOf(from, coordsOfIndex(g)));
      needed.push_back(blocksOf(to, coordsOfIndex(g)));
    }
    SmallVector<bool> used(groupSize, false);
    SmallVector<std::pair<int64_t, int64_t>> pairs;
    for (int64_t t = 0; t < groupSize; ++t) {
      int64_t source = -1;
      if (!used[t] && held[t] == needed[t])
        source = t;
      for (int64_t s = 0; source < 0 && s < groupSize; ++s)
        if (!used[s] && held[s] == needed[t])
          source = s;
      if (source < 0)
        return std::nullopt;
      used[source] = true;
      pairs.push_back({source, t});
    }
    return std::make_pair(axes, pairs);
  }

  FailureOr<ReshardPlan> run(ShardingAttr fromAttr, ShardingAttr toAttr,
                             std::string *why) {
    Layout cur = Layout::of(fromAttr), to = Layout::of(toAttr);
    (void)why; // every pair of valid shardings has a plan

    if (auto perm = findPermutation(cur, to)) {
      emit(ReshardStep::Kind::CollectivePermute, perm->first, -1, -1, cur, to,
           perm->second);
      return plan;
    }

    // 0. Dims moved via replication are gathered whole first (a gather into
    //    the replicated dim always nests).
    for (size_t d = 0; d < cur.dims.size(); ++d) {
      if (!viaReplication.test(d) || cur.dims[d].empty())
        continue;
      Layout before = cur;
      AxisVec axes = cur.dims[d];
      cur.dims[d].clear();
      emit(ReshardStep::Kind::AllGather, axes, d, -1, before, cur);
    }

    // 1. Take off every axis that is not where the target wants it, minor
    //    first: to the dim that wants it next (all_to_all), else gathered.
    for (size_t d = 0; d < cur.dims.size(); ++d) {
      while (!isPrefix(cur.dims[d], to.dims[d])) {
        StringRef a = cur.dims[d].back();
        Layout before = cur;
        cur.dims[d].pop_back();
        // A dim that wants `a` next, perhaps after axes nobody uses yet
        // (those are sliced first, for free): there `a` moves by all_to_all.
        auto isFree = [&](StringRef x) {
          return !llvm::is_contained(cur.partial, x) &&
                 llvm::none_of(cur.dims, [&](const AxisVec &axes) {
                   return llvm::is_contained(axes, x);
                 });
        };
        int64_t target = -1;
        AxisVec preSlice;
        for (size_t e = 0; e < to.dims.size() && target < 0; ++e) {
          if (e == d || !isPrefix(cur.dims[e], to.dims[e]) ||
              viaReplication.test(e))
            continue;
          size_t k = cur.dims[e].size();
          AxisVec slice;
          while (k < to.dims[e].size() && to.dims[e][k] != a &&
                 isFree(to.dims[e][k]))
            slice.push_back(to.dims[e][k++]);
          if (k < to.dims[e].size() && to.dims[e][k] == a) {
            target = e;
            preSlice = slice;
          }
        }
        if (target >= 0) {
          if (!preSlice.empty()) {
            // Slice before taking `a` off, so the all_to_all moves the
            // smaller block.
            Layout sliced = before;
            sliced.dims[target].append(preSlice.begin(), preSlice.end());
            emit(ReshardStep::Kind::AllSlice, preSlice, target, -1, before,
                 sliced);
            before = sliced;
            cur.dims[target].append(preSlice.begin(), preSlice.end());
          }
          cur.dims[target].push_back(a);
          emit(ReshardStep::Kind::AllToAll, {a}, target, d, before, cur);
          continue;
        }
        // Consecutive gathers of one dim are one all_gather, whose axes
        // are listed major first.
        if (!plan.steps.empty() &&
            plan.steps.back().kind == ReshardStep::Kind::AllGather &&
            plan.steps.back().dim == int64_t(d)) {
          ReshardStep prev = plan.steps.pop_back_val();
          plan.bytesPerDevice -= prev.bytesPerDevice;
          Layout start = before;
          for (StringRef x : prev.axes)
            start.dims[d].push_back(x);
          AxisVec axes{a};
          axes.append(prev.axes.begin(), prev.axes.end());
          emit(ReshardStep::Kind::AllGather, axes, d, -1, start, cur);
          continue;
        }
        emit(ReshardStep::Kind::AllGather, {a}, d, -1, before, cur);
      }
    }

    // 2. Pending sums: reduce-scatter into the dim that wants the axes next,
    //    all-reduce the rest.
    AxisVec pending;
    for (StringRef p : cur.partial)
      if (!llvm::is_contained(to.partial, p))
        pending.push_back(p);
    for (size_t d = 0; d < cur.dims.size() && !pending.empty(); ++d) {
      if (viaReplication.test(d))
        continue;
      AxisVec scatter;
      size_t k = cur.dims[d].size();
      while (k < to.dims[d].size() &&
             llvm::is_contained(pending, to.dims[d][k]))
        scatter.push_back(to.dims[d][k++]);
      if (scatter.empty())
        continue;
      Layout before = cur;
      for (StringRef a : scatter) {
        cur.dims[d].push_back(a);
        llvm::erase(cur.partial, a);
        llvm::erase(pending, a);
      }
      emit(ReshardStep::Kind::ReduceScatter, scatter, d, -1, before, cur);
    }
    if (!pending.empty()) {
      Layout before = cur;
      for (StringRef a : pending)
        llvm::erase(cur.partial, a);
      emit(ReshardStep::Kind::AllReduce, pending, -1, -1, before, cur);
    }

    // 3. Split what is still replicated but wanted split: no communication.
    for (size_t d = 0; d < cur.dims.size(); ++d) {
      if (cur.dims[d].size() == to.dims[d].size())
        continue;
      Layout before = cur;
      AxisVec axes(to.dims[d].begin() + cur.dims[d].size(), to.dims[d].end());
      cur.dims[d] = to.dims[d];
      emit(ReshardStep::Kind::AllSlice, axes, d, -1, before, cur);
    }

    // 4. Pending sums the target wants and the value lacks: it is replicated
    //    over those axes now (no dim of the target uses them), so the device
    //    of group index 0 keeps it and the others take zeros — a
    //    collective_permute with the single pair [0, 0].
    AxisVec summands;
    for (StringRef p : to.partial)
      if (!llvm::is_contained(cur.partial, p))
        summands.push_back(p);
    if (!summands.empty()) {
      Layout before = cur;
      cur.partial = to.partial;
      emit(ReshardStep::Kind::CollectivePermute, summands, -1, -1, before, cur,
           {{0, 0}});
    }
    return plan;
  }

private:
  // Op handles' accessors are not const; the planner never changes the mesh.
  mutable MeshOp mesh;
  FlatSymbolRefAttr meshRef;
  ArrayRef<int64_t> globalShape;
  int64_t elementBytes;
  llvm::SmallBitVector viaReplication;
  ReshardPlan plan;
  bool exact = true;
  llvm::SmallBitVector inexactDims = llvm::SmallBitVector(globalShape.size());
};
} // namespace

SmallVector<int64_t, 4> shardc::getLocalShape(ShardingAttr sharding,
                                              MeshOp mesh,
                                              ArrayRef<int64_t> globalShape) {
  SmallVector<int64_t, 4> shape(globalShape);
  for (size_t d = 0; d < shape.size() && d < sharding.getRank(); ++d) {
    int64_t split = 1;
    for (StringRef a : sharding.getDimAxes(d))
      split *= std::max<int64_t>(1, mesh.getAxisSize(a));
    shape[d] = paddedBlockSize(shape[d], split);
  }
  return shape;
}

FailureOr<ReshardPlan> shardc::planReshard(ShardingAttr from, ShardingAttr to,
                                           MeshOp mesh,
                                           ArrayRef<int64_t> globalShape,
                                           int64_t elementBytes,
                                           std::string *why) {
  if (from == to)
    return ReshardPlan();
  // The usual plan moves blocks group by group. Where a step of it meets an
  // uneven dim whose blocks do not nest (docs/sharding.md#uneven-dims),
  // those dims go through replication instead, until every step is exact.
  llvm::SmallBitVector viaReplication(globalShape.size());
  while (true) {
    Planner planner(mesh, globalShape, elementBytes, from.getMesh(),
                    viaReplication);
    FailureOr<ReshardPlan> plan = planner.run(from, to, why);
    if (failed(plan) || planner.isExact())
      return plan;
    llvm::SmallBitVector more = viaReplication;
    more |= planner.getInexactDims();
    // A dim via replication is only gathered whole and cut from whole,
    // which always nests; this guards that invariant.
    if (more == viaReplication) {
      if (why)
        *why = "an uneven dim's blocks do not nest";
      return failure();
    }
    viaReplication = std::move(more);
  }
}

std::optional<ReshardStep> shardc::describeCollective(Operation *op) {
  auto collective = dyn_cast<CollectiveOpInterface>(op);
  if (!collective)
    return std::nullopt;
  ReshardStep step;
  step.kind = collective.getCollectiveKind();
  step.dim = collective.getCollectiveDim();
  step.concatDim = collective.getCollectiveConcatDim();
  step.pairs = collective.getCollectivePairs();
  for (Attribute a : collective.getAxes())
    step.axes.push_back(cast<StringAttr>(a).getValue());
  return step;
}

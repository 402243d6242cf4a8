//===- FactorSharding.cpp - shardings through an op's factors -------------===//
//
// The merge is three steps, each deterministic (docs/propagation.md):
//   1. every tensor proposes, for each of its factors, the axes its sharding
//      puts there (a *candidate*);
//   2. per factor, candidates are ranked (user first, then larger tensor,
//      then tensor order) and merged: compatible ones (one a prefix of the
//      other) merge to the longest, incompatible ones lose to the best;
//   3. per mesh axis, only one factor may keep it: factors are ranked
//      (parallel before reduction, then as their best candidate, on an
//      element-wise op the more split one first among equals) and a factor
//      that meets an axis already taken drops it and every axis after it, so
//      what it keeps is still a prefix of what it proposed.
//
//===----------------------------------------------------------------------===//

#include "shardc/Analysis/FactorSharding.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLExtras.h"

#include <tuple>

using namespace mlir;
using namespace shardc;

StringRef shardc::describeConflictReason(ConflictReason reason) {
  switch (reason) {
  case ConflictReason::ParallelOverReduction:
    return "a parallel factor beats a reduction factor";
  case ConflictReason::UserPriority:
    return "a user annotation beats a propagated sharding";
  case ConflictReason::LargerTensor:
    return "same priority, the larger tensor is kept";
  case ConflictReason::MoreSplit:
    return "same priority and size, the more split factor is kept";
  case ConflictReason::StationaryTensor:
    return "same priority and size, the parameter stays in place";
  case ConflictReason::TensorOrder:
    return "same priority and size, the earlier tensor wins";
  case ConflictReason::FactorOrder:
    return "the earlier factor wins";
  case ConflictReason::NeedReplication:
    return "the factor needs replication";
  }
  return "unknown";
}

/// True if `a` is a prefix of `b` or `b` of `a`.
static bool compatible(ArrayRef<StringRef> a, ArrayRef<StringRef> b) {
  size_t n = std::min(a.size(), b.size());
  return llvm::equal(a.take_front(n), b.take_front(n));
}

namespace {
/// One tensor's proposal for one factor.
struct Candidate {
  AxisList axes;
  int tensor;
  bool isUser;
  int64_t numElements;
  bool isStationary;

  /// Strict ranking: user first, then larger tensor, then a parameter, then
  /// earlier tensor.
  bool ranksBefore(const Candidate &o) const {
    return std::make_tuple(!isUser, -numElements, !isStationary, tensor) <
           std::make_tuple(!o.isUser, -o.numElements, !o.isStationary,
                           o.tensor);
  }
  /// Why `*this` (ranked first) beats `o`.
  ConflictReason reasonOver(const Candidate &o) const {
    if (isUser != o.isUser)
      return ConflictReason::UserPriority;
    if (numElements != o.numElements)
      return ConflictReason::LargerTensor;
    if (isStationary != o.isStationary)
      return ConflictReason::StationaryTensor;
    return ConflictReason::TensorOrder;
  }
};
} // namespace

int64_t FactorShardings::axisSize(StringRef axis) const {
  return MeshOp(mesh).getAxisSize(axis);
}

SmallVector<AxisList> FactorShardings::factorAxesOf(const ShardingRule &rule,
                                                    unsigned t,
                                                    ShardingAttr sharding,
                                                    MeshOp mesh) {
  SmallVector<AxisList> out(rule.getNumFactors());
  if (!sharding || !mesh || t >= rule.getNumTensors() ||
      sharding.getMesh().getValue() != mesh.getSymName())
    return out;
  ArrayRef<DimFactors> dims = rule.getTensor(t);
  if (sharding.getRank() != dims.size())
    return out;
  for (auto [d, factors] : llvm::enumerate(dims)) {
    // A dim of one factor is that factor: it takes the axes, whether or not
    // they divide it (an uneven dim is padded, docs/sharding.md), until
    // they split it fully; as below, the axes after that are not followed.
    if (factors.size() == 1) {
      int64_t split = 1, whole = rule.getFactor(factors.front()).size;
      for (StringRef axis : sharding.getDimAxes(d)) {
        int64_t size = mesh.getAxisSize(axis);
        if (size < 1 || split == whole ||
            (whole % (split * size) != 0 && split >= whole))
          break;
        out[factors.front()].push_back(axis);
        split *= size;
      }
      continue;
    }
    size_t k = 0;
    int64_t filled = 1; // product of the axes given to factors[k] so far
    for (StringRef axis : sharding.getDimAxes(d)) {
      int64_t size = mesh.getAxisSize(axis);
      if (size < 1)
        break;
      // A factor fully split by earlier axes passes the next ones on.
      while (k < factors.size() && filled == rule.getFactor(factors[k]).size) {
        ++k;
        filled = 1;
      }
      if (k == factors.size() ||
          rule.getFactor(factors[k]).size % (filled * size) != 0)
        break; // straddles a factor boundary: not followed
      out[factors[k]].push_back(axis);
      filled *= size;
    }
  }
  return out;
}

/// True if factor `f` is a dim of its own wherever it appears: then a
/// device's padded block of the factor is its block of the dim, and the
/// factor may be split unevenly. In a dim of several factors (a reshape's
/// merged dim) the blocks of an uneven factor are not blocks of the dim.
static bool isWholeDimEverywhere(const ShardingRule &rule, int64_t f) {
  for (unsigned t = 0, e = rule.getNumTensors(); t < e; ++t)
    for (const DimFactors &dim : rule.getTensor(t))
      if (dim.size() > 1 && llvm::is_contained(dim, f))
        return false;
  return true;
}

/// True if every tensor of `rule` has every factor.
static bool everyTensorHasEveryFactor(const ShardingRule &rule) {
  llvm::BitVector has(rule.getNumFactors());
  for (unsigned t = 0, e = rule.getNumTensors(); t < e; ++t) {
    has.reset();
    for (const DimFactors &dim : rule.getTensor(t))
      for (int64_t f : dim)
        has.set(f);
    if (!has.all())
      return false;
  }
  return true;
}

FactorShardings
FactorShardings::compute(const ShardingRule &rule, MeshOp mesh,
                         ArrayRef<TensorShardingInput> tensors) {
  FactorShardings fs(rule, mesh);
  int64_t numFactors = rule.getNumFactors();
  fs.factorAxes.assign(numFactors, AxisList());
  fs.factorSource.assign(numFactors, -1);

  // 1. Candidates, per factor.
  SmallVector<SmallVector<Candidate, 2>> candidates(numFactors);
  unsigned numInputs = std::min<size_t>(tensors.size(), rule.getNumTensors());
  for (unsigned t = 0; t < numInputs; ++t) {
    if (!tensors[t].sharding)
      continue;
    SmallVector<AxisList> axes =
        factorAxesOf(rule, t, tensors[t].sharding, mesh);
    for (int64_t f = 0; f < numFactors; ++f) {
      if (axes[f].empty())
        continue;
      if (rule.getFactor(f).kind == FactorKind::NeedReplication) {
        FactorConflict c{FactorConflict::Kind::Unshardable,
                         ConflictReason::NeedReplication};
        c.factor = f;
        c.loserTensor = t;
        c.loserAxes = axes[f];
        fs.conflicts.push_back(std::move(c));
        continue;
      }
      candidates[f].push_back({std::move(axes[f]), static_cast<int>(t),
                               tensors[t].isUser,
                               rule.getTensorNumElements(t),
                               tensors[t].isStationary});
    }
  }

  // 2. Merge each factor's candidates, best first.
  SmallVector<const Candidate *> best(numFactors, nullptr);
  for (int64_t f = 0; f < numFactors; ++f) {
    auto &cands = candidates[f];
    if (cands.empty())
      continue;
    llvm::stable_sort(cands, [](const Candidate &a, const Candidate &b) {
      return a.ranksBefore(b);
    });
    best[f] = &cands.front();
    SmallVector<const Candidate *, 2> merged = {&cands.front()};
    AxisList axes = cands.front().axes;
    int source = cands.front().tensor;
    for (const Candidate &c : llvm::drop_begin(cands)) {
      if (compatible(axes, c.axes)) {
        if (c.axes.size() > axes.size()) {
          axes = c.axes;
          source = c.tensor;
        }
        merged.push_back(&c);
        continue;
      }
      // The best-ranked merged candidate that `c` contradicts beat it.
      const Candidate *winner = merged.back();
      for (const Candidate *m : merged)
        if (!compatible(m->axes, c.axes)) {
          winner = m;
          break;
        }
      FactorConflict conflict{FactorConflict::Kind::IncompatibleCandidates,
                              winner->reasonOver(c)};
      conflict.factor = f;
      conflict.loserTensor = c.tensor;
      conflict.loserAxes = c.axes;
      conflict.winnerTensor = winner->tensor;
      conflict.winnerAxes = winner->axes;
      fs.conflicts.push_back(std::move(conflict));
    }
    // A factor the axes do not divide is padded on its last devices; that
    // is only a layout of the tensors where it is a whole dim. Elsewhere
    // (a merged dim of a reshape) its axes are dropped until they divide,
    // and the tensor is moved into the layout that remains.
    auto split = [&] {
      int64_t product = 1;
      for (StringRef axis : axes)
        product *= std::max<int64_t>(fs.axisSize(axis), 1);
      return product;
    };
    if (!isWholeDimEverywhere(rule, f))
      while (!axes.empty() && rule.getFactor(f).size % split() != 0)
        axes.pop_back();
    fs.factorAxes[f] = std::move(axes);
    fs.factorSource[f] = fs.factorAxes[f].empty() ? -1 : source;
  }

  // 3. One factor per axis.
  SmallVector<int64_t> order;
  for (int64_t f = 0; f < numFactors; ++f)
    if (!fs.factorAxes[f].empty())
      order.push_back(f);
  auto isReduction = [&](int64_t f) {
    FactorKind kind = rule.getFactor(f).kind;
    return kind == FactorKind::Reduction || kind == FactorKind::MaxReduction;
  };
  // Devices each factor's merged axes split it over. Where every tensor of
  // the op holds every factor (element-wise ops, transpose, reshape), the
  // tensors differ only in how they split the same dims, and among equals
  // the more split factor keeps an axis: the coarser layout reaches the
  // finer one mostly by slicing, the other way round gathers. Elsewhere
  // (matmul's rows against its columns) a tensor without the winning factor
  // loses its whole split, so the order of the tensors decides.
  SmallVector<int64_t> split(numFactors, 1);
  if (everyTensorHasEveryFactor(rule))
    for (int64_t f : order)
      for (StringRef axis : fs.factorAxes[f])
        split[f] *= std::max<int64_t>(fs.axisSize(axis), 1);
  auto rank = [&](int64_t f) {
    const Candidate &c = *best[f];
    return std::make_tuple(isReduction(f), !c.isUser, -c.numElements, -split[f],
                           !c.isStationary, c.tensor);
  };
  llvm::stable_sort(order,
                    [&](int64_t a, int64_t b) { return rank(a) < rank(b); });
  llvm::SmallDenseMap<StringRef, int64_t, 8> owner;
  for (int64_t f : order) {
    AxisList &axes = fs.factorAxes[f];
    for (size_t i = 0; i < axes.size(); ++i) {
      auto it = owner.find(axes[i]);
      if (it == owner.end())
        continue;
      int64_t w = it->second;
      ConflictReason reason;
      if (isReduction(w) != isReduction(f))
        reason = ConflictReason::ParallelOverReduction;
      else if (best[w]->isUser != best[f]->isUser ||
               best[w]->numElements != best[f]->numElements)
        reason = best[w]->reasonOver(*best[f]);
      else if (split[w] != split[f])
        reason = ConflictReason::MoreSplit;
      else if (best[w]->isStationary != best[f]->isStationary)
        reason = ConflictReason::StationaryTensor;
      else if (best[w]->tensor == best[f]->tensor)
        reason = ConflictReason::FactorOrder;
      else
        reason = ConflictReason::TensorOrder;
      FactorConflict conflict{FactorConflict::Kind::AxisClaimedTwice, reason};
      conflict.axis = axes[i];
      conflict.factor = w;
      conflict.loserFactor = f;
      conflict.winnerTensor = fs.factorSource[w];
      conflict.loserTensor = fs.factorSource[f];
      conflict.winnerAxes = fs.factorAxes[w];
      conflict.loserAxes.assign(axes.begin() + i, axes.end());
      fs.conflicts.push_back(std::move(conflict));
      axes.resize(i);
      break;
    }
    for (StringRef axis : axes)
      owner.try_emplace(axis, f);
    if (axes.empty())
      fs.factorSource[f] = -1;
  }
  return fs;
}

bool FactorShardings::projectDim(unsigned t, unsigned d, AxisList &axes) const {
  bool exact = true, previousFull = true;
  for (int64_t f : rule.getTensor(t)[d]) {
    ArrayRef<StringRef> fAxes = factorAxes[f];
    if (!previousFull) {
      // A split of a minor factor under an unsplit major one is a strided
      // layout, which a dim's axis list cannot say.
      exact &= fAxes.empty();
      continue;
    }
    int64_t split = 1;
    for (StringRef axis : fAxes) {
      axes.push_back(axis);
      split *= axisSize(axis);
    }
    previousFull = split == rule.getFactor(f).size;
  }
  return exact;
}

ShardingAttr FactorShardings::getTensorSharding(unsigned t,
                                                bool withPartial) const {
  if (!mesh || t >= rule.getNumTensors())
    return {};
  withPartial &= rule.isResultTensor(t);
  if (projections.empty())
    projections.resize(2 * rule.getNumTensors());
  ShardingAttr &memo = projections[2 * t + withPartial];
  if (!memo)
    memo = projectTensor(t, withPartial);
  return memo;
}

ShardingAttr FactorShardings::projectTensor(unsigned t,
                                            bool withPartial) const {
  SmallVector<SmallVector<StringRef>> dims;
  for (unsigned d = 0, e = rule.getTensor(t).size(); d < e; ++d) {
    AxisList axes;
    projectDim(t, d, axes);
    dims.emplace_back(axes.begin(), axes.end());
  }
  AxisList partial;
  if (withPartial)
    partial = getPartialAxes();
  MLIRContext *ctx = MeshOp(mesh).getContext();
  return ShardingAttr::get(
      ctx, FlatSymbolRefAttr::get(MeshOp(mesh).getSymNameAttr()), dims,
      partial);
}

AxisList FactorShardings::getPartialAxes() const {
  AxisList partial;
  for (int64_t f = 0, e = rule.getNumFactors(); f < e; ++f)
    if (rule.getFactor(f).kind == FactorKind::Reduction)
      partial.append(factorAxes[f].begin(), factorAxes[f].end());
  return partial;
}

AxisList FactorShardings::getMaxReducedAxes() const {
  AxisList axes;
  for (int64_t f = 0, e = rule.getNumFactors(); f < e; ++f)
    if (rule.getFactor(f).kind == FactorKind::MaxReduction)
      axes.append(factorAxes[f].begin(), factorAxes[f].end());
  return axes;
}

bool FactorShardings::isExactFor(unsigned t) const {
  if (t >= rule.getNumTensors())
    return false;
  bool exact = true;
  for (unsigned d = 0, e = rule.getTensor(t).size(); d < e; ++d) {
    AxisList axes;
    exact &= projectDim(t, d, axes);
  }
  return exact;
}

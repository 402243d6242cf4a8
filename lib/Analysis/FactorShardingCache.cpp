//===- FactorShardingCache.cpp - memoized FactorShardings -----------------===//

#include "shardc/Analysis/FactorShardingCache.h"

using namespace mlir;
using namespace shardc;

void shardc::appendRuleKey(const ShardingRule &rule,
                           SmallVectorImpl<int64_t> &key) {
  key.push_back(rule.getNumFactors());
  for (const Factor &f : rule.getFactors()) {
    key.push_back(f.size);
    key.push_back(static_cast<int64_t>(f.kind));
  }
  key.push_back(rule.getNumOperands());
  key.push_back(rule.getNumTensors());
  for (unsigned t = 0, e = rule.getNumTensors(); t < e; ++t) {
    ArrayRef<DimFactors> dims = rule.getTensor(t);
    key.push_back(dims.size());
    for (const DimFactors &factors : dims) {
      key.push_back(factors.size());
      key.append(factors.begin(), factors.end());
    }
  }
}

const FactorShardings &
FactorShardingCache::get(const ShardingRule &rule, MeshOp mesh,
                         ArrayRef<TensorShardingInput> tensors) {
  scratch.clear();
  appendRuleKey(rule, scratch);
  scratch.push_back(reinterpret_cast<intptr_t>(mesh.getOperation()));
  scratch.push_back(tensors.size());
  for (const TensorShardingInput &t : tensors) {
    scratch.push_back(
        reinterpret_cast<intptr_t>(t.sharding.getAsOpaquePointer()));
    scratch.push_back(t.isUser | (t.isStationary << 1));
  }
  if (const Entry *hit = index.lookup(scratch)) {
    ++hits;
    return hit->value;
  }
  Entry &entry = entries.emplace_back(
      Entry{std::vector<int64_t>(scratch.begin(), scratch.end()),
            FactorShardings::compute(rule, mesh, tensors)});
  index[entry.key] = &entry;
  return entry.value;
}

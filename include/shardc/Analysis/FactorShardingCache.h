//===- FactorShardingCache.h - memoized FactorShardings ---------*- C++ -*-===//
//
// Propagation visits every op several times and the partitioner weighs
// several candidate layouts per op; a model is mostly the same few ops with
// the same shardings over and over (N identical layers). This cache computes
// FactorShardings once per distinct question and hands out the stored
// answer, whose projections (FactorShardings::getTensorSharding) are
// memoized too, so repeated questions build no attribute at all.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_ANALYSIS_FACTORSHARDINGCACHE_H
#define SHARDC_ANALYSIS_FACTORSHARDINGCACHE_H

#include "shardc/Analysis/FactorSharding.h"

#include "llvm/ADT/DenseMap.h"

#include <deque>
#include <vector>

namespace shardc {

/// Appends to `key` everything of `rule` that FactorShardings reads: every
/// factor's size and kind, the operand count, and each tensor's dims with
/// their factor lists. Two rules with equal keys are equal rules.
void appendRuleKey(const ShardingRule &rule,
                   llvm::SmallVectorImpl<int64_t> &key);

/// Memoizes FactorShardings::compute(rule, mesh, tensors).
///
/// The key is the full input of compute: the rule (appendRuleKey), the mesh
/// op, and per tensor its sharding attribute (attributes are uniqued, so the
/// pointer stands for the content) and its isUser flag. compute is a pure
/// function of these (it reads the mesh's axis sizes, which do not change
/// while a pass runs), so a stored answer is the answer. A cache lives as
/// long as one pass over one module; returned references stay valid as long
/// as the cache.
class FactorShardingCache {
public:
  const FactorShardings &get(const ShardingRule &rule, MeshOp mesh,
                             llvm::ArrayRef<TensorShardingInput> tensors);

  /// Questions answered from the cache (for tests).
  unsigned getNumHits() const { return hits; }
  unsigned getNumEntries() const { return entries.size(); }

private:
  struct Entry {
    std::vector<int64_t> key;
    FactorShardings value;
  };
  /// A deque: entries, and the key storage the index points into, never
  /// move.
  std::deque<Entry> entries;
  llvm::DenseMap<llvm::ArrayRef<int64_t>, const Entry *> index;
  llvm::SmallVector<int64_t, 64> scratch;
  unsigned hits = 0;
};

} // namespace shardc

#endif // SHARDC_ANALYSIS_FACTORSHARDINGCACHE_H

//===- Optimizer.h - parameter updates on device blocks ---------*- C++ -*-===//
//
// The update is elementwise, so each device updates its own parameter block
// with its own gradient block and keeps its own optimizer state: the state
// is sharded exactly like its parameter, with no communication.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_ENGINE_OPTIMIZER_H
#define SHARDC_ENGINE_OPTIMIZER_H

#include "shardc/Engine/ShardedEngine.h"

namespace shardc {

struct OptimizerState {
  int64_t step = 0;
  /// Adam's first and second moments, [local device][parameter].
  std::vector<std::vector<Tensor>> firstMoment, secondMoment;
};

/// Updates `params[d][p]` with `grads[d][p]`, blocks of equal shape.
void applyOptimizer(const OptimizerOptions &options, OptimizerState &state,
                    const std::vector<std::vector<Tensor *>> &params,
                    const std::vector<std::vector<const Tensor *>> &grads);

} // namespace shardc

#endif // SHARDC_ENGINE_OPTIMIZER_H

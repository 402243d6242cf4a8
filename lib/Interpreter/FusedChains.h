//===- FusedChains.h - one loop for a known chain of fused ops --*- C++ -*-===//
//
// Private to lib/Interpreter. A fused group runs node by node over blocks
// that stay in the L1 cache (runFusedGroup): each node is its own vector
// loop, which loads its operands from a block and stores its result into
// one. For the Adam update, the largest pass of a training step, that
// took twice the time of a plain loop doing the same update with every
// intermediate in registers. A group whose nodes are exactly a chain
// written out in FusedChains.cpp is computed by such a loop instead.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_INTERPRETER_FUSEDCHAINS_H
#define SHARDC_LIB_INTERPRETER_FUSEDCHAINS_H

#include "ElementwiseFusion.h"

#include <memory>

namespace shardc::detail {

/// A fused group computed by one loop over its elements, written for the
/// group's chain of ops, with every intermediate in registers.
class FusedChain {
public:
  virtual ~FusedChain() = default;
  /// Computes the group it was matched on, with runFusedGroup's arguments
  /// and the bits the ops' own kernels give, op by op.
  virtual void run(llvm::ArrayRef<const Tensor *> leaves,
                   llvm::ArrayRef<Tensor *> outputs) const = 0;
};

/// The loop for `group` when its nodes, their operands and which of them
/// are stored are exactly one of the chains written out (the Adam update
/// as lib/Transforms/TrainingStep.cpp builds it); null otherwise.
std::unique_ptr<FusedChain> matchFusedChain(const FusedGroup &group);

} // namespace shardc::detail

#endif // SHARDC_LIB_INTERPRETER_FUSEDCHAINS_H

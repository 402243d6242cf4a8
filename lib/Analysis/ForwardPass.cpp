//===- ForwardPass.cpp - the ops a training step's loss depends on --------===//

#include "shardc/Analysis/ForwardPass.h"

#include "llvm/ADT/SmallVector.h"

using namespace mlir;

llvm::DenseSet<Operation *> shardc::collectForwardPass(Operation *terminator,
                                                       unsigned numResults) {
  llvm::DenseSet<Operation *> forward;
  llvm::SmallVector<Operation *> work;
  for (Value v : terminator->getOperands().take_front(
           std::min<unsigned>(numResults, terminator->getNumOperands())))
    if (Operation *def = v.getDefiningOp())
      work.push_back(def);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!forward.insert(op).second)
      continue;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        work.push_back(def);
  }
  return forward;
}

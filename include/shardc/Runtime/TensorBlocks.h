//===- TensorBlocks.h - cutting tensors into blocks and back ----*- C++ -*-===//
//
// The data movement every backend shares, on top of Tensor's block slicing
// and concatenation: element-wise reduction of a group's tensors, and laying
// a global tensor out on a mesh by its sharding (and assembling it back).
// Collectives of every backend are built from these, so the simulator and
// the real workers agree bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_TENSORBLOCKS_H
#define SHARDC_RUNTIME_TENSORBLOCKS_H

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Interpreter/Communicator.h"
#include "shardc/Support/MeshTopology.h"
#include "shardc/Support/Tensor.h"

namespace shardc {

/// Element-wise sum (or max) of equally shaped tensors, combined in the
/// order given, so every backend rounds the same way.
Tensor reduceTensors(llvm::ArrayRef<const Tensor *> tensors,
                     Reduction kind);

/// acc = acc (+ or max) x elementwise, for tensors of the same dtype and
/// element count (reduceElements' arithmetic).
void accumulateInto(Tensor &acc, const Tensor &x, Reduction kind);

/// The block of `global` that device `device` holds under `sharding`. Over
/// partial axes the blocks are summands of `global`: the device at
/// coordinate 0 of every partial axis holds the block, the others zeros (so
/// that assembleGlobal sums them back to `global` exactly).
llvm::Expected<Tensor> extractDeviceBlock(const Tensor &global,
                                          ShardingAttr sharding, MeshOp mesh,
                                          const MeshTopology &topology,
                                          int64_t device);

/// Rebuilds a global tensor from every device's block (`blocks[d]` is
/// device d's). Replicas must agree exactly; partial axes are summed.
/// Fails with `why` naming the first disagreement.
mlir::FailureOr<Tensor> assembleGlobal(llvm::ArrayRef<const Tensor *> blocks,
                                       ShardingAttr sharding, MeshOp mesh,
                                       const MeshTopology &topology,
                                       llvm::ArrayRef<int64_t> globalShape,
                                       std::string &why);

} // namespace shardc

#endif // SHARDC_RUNTIME_TENSORBLOCKS_H

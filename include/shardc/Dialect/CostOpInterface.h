//===- CostOpInterface.h - per-op compute cost ------------------*- C++ -*-===//
//
// The FLOPs of an op from its sharding-rule factor sizes: one model for the
// partitioner and the simulator (docs/cost-model.md).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_COSTOPINTERFACE_H
#define SHARDC_DIALECT_COSTOPINTERFACE_H

#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/ArrayRef.h"

#include "shardc/Dialect/CostOpInterface.h.inc"

namespace shardc {
class ShardingRule;
/// `scale` times the product of `factorSizes`, multiplied in order (the
/// cost of an op doing `scale` FLOPs per point of its iteration space).
double getIterationSpaceFlops(double scale, llvm::ArrayRef<double> factorSizes);
/// The FLOPs of `op` on its own (local) shapes: its rule's factor sizes fed
/// to its CostOpInterface; 0 for an op without either.
double getOpFlops(mlir::Operation *op);
} // namespace shardc

#endif // SHARDC_DIALECT_COSTOPINTERFACE_H

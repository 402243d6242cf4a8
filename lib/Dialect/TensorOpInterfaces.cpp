//===- TensorOpInterfaces.cpp - the tensor ops' interfaces ----------------===//
//
// The generated definitions of the op interfaces every tensor op has, and
// the cost helpers shared by the op families.
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/CostOpInterface.h"
#include "shardc/Dialect/DifferentiableOpInterface.h"
#include "shardc/Dialect/KernelOpInterface.h"
#include "shardc/Dialect/ShardingRule.h"

using namespace mlir;
using namespace shardc;

#include "shardc/Dialect/CostOpInterface.cpp.inc"
#include "shardc/Dialect/DifferentiableOpInterface.cpp.inc"
#include "shardc/Dialect/KernelOpInterface.cpp.inc"
#include "shardc/Dialect/ShardingRuleInterface.cpp.inc"

double shardc::getIterationSpaceFlops(double scale,
                                      ArrayRef<double> factorSizes) {
  // In factor order, so the partitioner's local sizes (fractional when a
  // size does not divide) give the same double every time.
  double flops = scale;
  for (double size : factorSizes)
    flops *= size;
  return flops;
}

double shardc::getOpFlops(Operation *op) {
  auto cost = dyn_cast<CostOpInterface>(op);
  auto ruled = dyn_cast<ShardingRuleOpInterface>(op);
  if (!cost || !ruled)
    return 0;
  ShardingRule rule = ruled.getShardingRule();
  SmallVector<double, 8> sizes;
  for (const Factor &f : rule.getFactors())
    sizes.push_back(static_cast<double>(f.size));
  return cost.getFlops(sizes);
}

KernelClass shardc::getKernelClass(Operation *op) {
  if (auto cost = dyn_cast<CostOpInterface>(op))
    return cost.getKernelClass();
  return KernelClass::MemoryBound;
}

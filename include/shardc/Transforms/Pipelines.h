//===- Pipelines.h - the pass sequences the tools and engine run -*- C++
//-*-===//

#ifndef SHARDC_TRANSFORMS_PIPELINES_H
#define SHARDC_TRANSFORMS_PIPELINES_H

#include "mlir/Pass/PassManager.h"

namespace shardc {

/// Propagation, then (with `partition`) partitioning and cleanup; with
/// `explain`, propagation remarks where each sharding came from.
void addShardingPipeline(mlir::OpPassManager &pm, bool partition, bool explain);

} // namespace shardc

#endif // SHARDC_TRANSFORMS_PIPELINES_H

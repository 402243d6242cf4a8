//===- CostModel.h - what moving and computing costs ------------*- C++ -*-===//
//
// One model prices every plan: the partitioner's choice of layout, `shardc
// explain`, and the simulator's time estimate (docs/cost-model.md).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_ANALYSIS_COSTMODEL_H
#define SHARDC_ANALYSIS_COSTMODEL_H

#include "shardc/Dialect/CollectiveOpInterface.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace shardc {

/// The machine the estimates model. Defaults: a 5 us per-message latency
/// and 25 GB/s per link (a PCIe-class interconnect), and 100 GFLOP/s per
/// device (one CPU core with a good GEMM).
struct MachineModel {
  double linkLatencySeconds = 5e-6;
  double linkBytesPerSecond = 25e9;
  double flopsPerSecond = 100e9;

  /// `messages` sequential messages sending `bytes` in all.
  double transferSeconds(int64_t messages, int64_t bytes) const {
    return messages * linkLatencySeconds + double(bytes) / linkBytesPerSecond;
  }

  /// One collective over `groupSize` devices with `localBytes`-byte input
  /// blocks, run with whichever of its algorithms is faster here (as MPI
  /// libraries switch algorithms by message size).
  double collectiveSeconds(CollectiveKind kind, int64_t groupSize,
                           int64_t localBytes) const {
    double best = std::numeric_limits<double>::infinity();
    for (CollectiveAlgorithm a :
         collectiveAlgorithms(kind, groupSize, localBytes))
      best = std::min(best, transferSeconds(a.messages, a.bytesPerDevice));
    return best;
  }
};

} // namespace shardc

#endif // SHARDC_ANALYSIS_COSTMODEL_H

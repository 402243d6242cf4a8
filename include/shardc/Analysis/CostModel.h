//===- CostModel.h - what moving and computing costs ------------*- C++ -*-===//
//
// One model prices every plan: the partitioner's choice of layout, `shardc
// explain`, the simulator's time estimate and `shardc estimate`
// (docs/cost-model.md, docs/machines.md).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_ANALYSIS_COSTMODEL_H
#define SHARDC_ANALYSIS_COSTMODEL_H

#include "shardc/Dialect/CollectiveOpInterface.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

namespace shardc {

/// One kind of link: a latency per message and a bandwidth per device.
struct LinkModel {
  double latencySeconds = 5e-6;
  double bytesPerSecond = 25e9;
  /// Once per collective call, whatever its algorithm sends: the members'
  /// rendezvous (threads waking each other, a GPU runtime's launch and
  /// handshake). 0 where the file does not say.
  double syncSeconds = 0;
};

/// How a collective's group lies on the nodes: `inner` members share a
/// node, and the group spans `outer` nodes (inner * outer = group size).
struct GroupSpan {
  int64_t inner = 1;
  int64_t outer = 1;
};

/// Element types a device computes in, for its peak rates.
enum class ComputeType { BF16, F16, TF32, F32 };

/// The machine the estimates model (docs/machines.md): nodes of devices,
/// each with a memory, peak FLOP/s per element type and the efficiency a
/// GEMM or a memory-bound op reaches, joined by one link inside a node and
/// another between nodes. The defaults are the `alpha-beta` preset
/// (machines/alpha-beta.json): one node of any size, a 5 us per-message
/// latency and 25 GB/s per link (a PCIe-class interconnect), and
/// 100 GFLOP/s per device (one CPU core with a good GEMM).
struct MachineModel {
  /// Inside a node (and everywhere when devicesPerNode is 0).
  double linkLatencySeconds = 5e-6;
  double linkBytesPerSecond = 25e9;
  /// The rate the f32 programs shardc compiles are priced at: the f32
  /// peak times the largest GEMM efficiency.
  double flopsPerSecond = 100e9;
  std::string name = "alpha-beta";

  /// Devices per node; 0: every device in one node.
  int64_t devicesPerNode = 0;
  LinkModel interNode;
  /// Per device. 0 where the file does not say.
  int64_t memoryBytes = 0;
  double memoryBytesPerSecond = 0;
  /// Peak FLOP/s by ComputeType (bf16, f16, tf32, f32).
  double peakFlops[4] = {100e9, 100e9, 100e9, 100e9};
  /// Achieved fraction of peak by GEMM size: (FLOPs of one GEMM on one
  /// device, efficiency) points, interpolated in log(FLOPs), clamped at
  /// both ends. Empty: 1.
  llvm::SmallVector<std::pair<double, double>, 4> gemmEfficiency;
  /// Achieved fraction of memory bandwidth by memory-bound ops.
  double memoryEfficiency = 1;
  /// Seconds every kernel costs besides its work: a GPU's launch, an
  /// interpreter's dispatch and result allocation. 0 where not said.
  double opOverheadSeconds = 0;
  /// Whether chains of elementwise ops run as one kernel (a fusing
  /// compiler on a GPU) or op by op, each result written to memory
  /// (shardc's threads backend).
  bool fusesElementwise = true;
  /// Devices that are threads of one host: the cores they share (0: each
  /// device has its own). More devices than cores time-share them.
  int64_t hostCores = 0;
  /// Wall seconds each collective call costs the step besides its work
  /// where devices time-share the host's cores: while a device waits for
  /// the others its thread sleeps, and the core can idle until the device
  /// it waits for has run and woken it (0 where not said).
  double hostWaitSeconds = 0;

  /// The intra-node link's per-collective rendezvous.
  double linkSyncSeconds = 0;

  LinkModel intraNode() const {
    return {linkLatencySeconds, linkBytesPerSecond, linkSyncSeconds};
  }

  /// How much slower each device computes when `numDevices` time-share
  /// the host's cores.
  double timeSharing(int64_t numDevices) const {
    if (hostCores <= 0 || numDevices <= hostCores)
      return 1;
    return double(numDevices) / double(hostCores);
  }

  /// The wall time a collective call adds where `numDevices` devices
  /// time-share the host's cores (hostWaitSeconds), 0 where they do not.
  double timeSharedWaitSeconds(int64_t numDevices) const {
    return timeSharing(numDevices) > 1 ? hostWaitSeconds : 0;
  }

  /// `messages` sequential messages sending `bytes` in all, on `link`.
  static double transferSeconds(const LinkModel &link, int64_t messages,
                                double bytes) {
    return messages * link.latencySeconds + bytes / link.bytesPerSecond;
  }
  /// The same inside a node.
  double transferSeconds(int64_t messages, int64_t bytes) const {
    return transferSeconds(intraNode(), messages, double(bytes));
  }

  /// One collective over `groupSize` devices of one node with
  /// `localBytes`-byte input blocks, run with whichever of its algorithms
  /// is faster here (as MPI libraries switch algorithms by message size).
  double collectiveSeconds(CollectiveKind kind, int64_t groupSize,
                           int64_t localBytes) const {
    return collectiveSeconds(kind, groupSize, double(localBytes), intraNode());
  }
  static double collectiveSeconds(CollectiveKind kind, int64_t groupSize,
                                  double localBytes, const LinkModel &link) {
    double best = std::numeric_limits<double>::infinity();
    // The algorithms' volumes scale with the block: price them on an
    // integral block and scale, so blocks beyond int64 stay exact enough.
    int64_t probe = int64_t(std::min(localBytes, 1e15));
    double scale = probe ? localBytes / double(probe) : 0;
    for (CollectiveAlgorithm a : collectiveAlgorithms(kind, groupSize, probe))
      best = std::min(best, transferSeconds(link, a.messages,
                                            double(a.bytesPerDevice) * scale));
    return groupSize > 1 ? best + link.syncSeconds : best;
  }

  /// A collective whose group lies on the nodes as `span` says: within one
  /// node on the intra-node link, across nodes (one member per node) on
  /// the inter-node link, and hierarchically when it spans both — the
  /// reduce-scatter inside the node, the collective between nodes on the
  /// 1/inner slice, the all-gather inside the node (docs/machines.md).
  double collectiveSeconds(CollectiveKind kind, GroupSpan span,
                           double localBytes) const {
    LinkModel intra = intraNode();
    if (span.outer <= 1)
      return collectiveSeconds(kind, span.inner, localBytes, intra);
    if (span.inner <= 1)
      return collectiveSeconds(kind, span.outer, localBytes, interNode);
    double i = double(span.inner), o = double(span.outer);
    switch (kind) {
    case CollectiveKind::AllReduce:
      return collectiveSeconds(CollectiveKind::ReduceScatter, span.inner,
                               localBytes, intra) +
             collectiveSeconds(CollectiveKind::AllReduce, span.outer,
                               localBytes / i, interNode) +
             collectiveSeconds(CollectiveKind::AllGather, span.inner,
                               localBytes / i, intra);
    case CollectiveKind::ReduceScatter:
      return collectiveSeconds(CollectiveKind::ReduceScatter, span.inner,
                               localBytes, intra) +
             collectiveSeconds(CollectiveKind::ReduceScatter, span.outer,
                               localBytes / i, interNode);
    case CollectiveKind::AllGather:
      return collectiveSeconds(CollectiveKind::AllGather, span.outer,
                               localBytes, interNode) +
             collectiveSeconds(CollectiveKind::AllGather, span.inner,
                               localBytes * o, intra);
    default:
      // all_to_all and permutes send across nodes: the slower link.
      return collectiveSeconds(kind, span.inner * span.outer, localBytes,
                               interNode);
    }
  }

  /// Where the group over the mesh axes `groupAxes` (indices into
  /// `meshSizes`, the mesh's axis sizes major to minor) lies: device ids
  /// fill the nodes in row-major order, so minor axes share a node.
  GroupSpan groupSpan(llvm::ArrayRef<int64_t> meshSizes,
                      llvm::ArrayRef<int64_t> groupAxes) const {
    int64_t n = 1;
    for (int64_t a : groupAxes)
      n *= meshSizes[a];
    if (devicesPerNode <= 0 || n <= 1)
      return {n, 1};
    // Members of device 0's group that fall in node 0: enumerate the
    // group's ids (its strides are the products of the more minor sizes).
    llvm::SmallVector<int64_t> strides(meshSizes.size(), 1);
    for (int64_t a = int64_t(meshSizes.size()) - 2; a >= 0; --a)
      strides[a] = strides[a + 1] * meshSizes[a + 1];
    llvm::SmallVector<int64_t> ids = {0};
    for (int64_t a : groupAxes) {
      llvm::SmallVector<int64_t> next;
      for (int64_t id : ids)
        for (int64_t c = 0; c < meshSizes[a]; ++c) {
          int64_t v = id + c * strides[a];
          if (v < devicesPerNode)
            next.push_back(v);
        }
      ids = std::move(next);
    }
    int64_t inner = std::max<int64_t>(int64_t(ids.size()), 1);
    return {inner, (n + inner - 1) / inner};
  }

  /// Seconds of a GEMM of `flops` FLOPs on one device in `type`.
  double gemmSeconds(double flops, ComputeType type) const {
    return flops / (peakFlops[int(type)] * gemmEfficiencyAt(flops));
  }
  /// Seconds of a memory-bound op moving `bytes` (read and written) and
  /// computing `flops` on the vector units (the f32 peak).
  double memoryBoundSeconds(double bytes, double flops) const {
    double byBytes = memoryBytesPerSecond > 0
                         ? bytes / (memoryBytesPerSecond * memoryEfficiency)
                         : 0;
    return std::max(byBytes, flops / flopsPerSecond);
  }
  /// The gemmEfficiency table at `flops`.
  double gemmEfficiencyAt(double flops) const {
    if (gemmEfficiency.empty())
      return 1;
    if (flops <= gemmEfficiency.front().first)
      return gemmEfficiency.front().second;
    for (size_t i = 1; i < gemmEfficiency.size(); ++i) {
      auto [x1, y1] = gemmEfficiency[i];
      if (flops <= x1) {
        auto [x0, y0] = gemmEfficiency[i - 1];
        double t =
            (std::log(flops) - std::log(x0)) / (std::log(x1) - std::log(x0));
        return y0 + t * (y1 - y0);
      }
    }
    return gemmEfficiency.back().second;
  }
};

/// Reads a machine description file (docs/machines.md). Fails with a
/// message naming the file and the field.
llvm::Expected<MachineModel> loadMachineModel(llvm::StringRef path);
/// The machine a command prices on: the file at `path` (the alpha-beta
/// preset when empty) with the old flags' figures, where positive, in
/// place of its intra-node link and f32 rate (docs/machines.md).
llvm::Expected<MachineModel> resolveMachineModel(llvm::StringRef path,
                                                 double linkLatency,
                                                 double linkBandwidth,
                                                 double flopRate);
/// The same from JSON text; `origin` names it in messages.
llvm::Expected<MachineModel> parseMachineModel(llvm::StringRef text,
                                               llvm::StringRef origin);

} // namespace shardc

#endif // SHARDC_ANALYSIS_COSTMODEL_H

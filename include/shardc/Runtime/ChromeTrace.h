//===- ChromeTrace.h - a run's timeline as a Chrome trace -------*- C++ -*-===//
//
// The spans a run records per device, on a compute and a communication
// track, and their Chrome trace event file (Perfetto and chrome://tracing
// open it): one process per device with a `compute` and a `communication`
// thread, so a collective running beside compute (a gradient's reduction
// during the backward pass) shows as overlapping spans. The simulator
// records simulated time (docs/cost-model.md#overlap), the threads and mpi
// backends wall-clock time (docs/engine.md#traces).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_CHROMETRACE_H
#define SHARDC_RUNTIME_CHROMETRACE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace shardc {

/// One span of the timeline, for the Chrome trace.
struct TraceSpan {
  int64_t device;
  std::string name;
  /// "compute" or "communication": also the device's track it is drawn on.
  std::string category;
  double startSeconds;
  double durationSeconds;
};

/// Writes `spans` as a Chrome trace event file, with a process (and its two
/// tracks) for each of `devices`.
void writeChromeTrace(llvm::ArrayRef<int64_t> devices,
                      llvm::ArrayRef<TraceSpan> spans, llvm::raw_ostream &os);

} // namespace shardc

#endif // SHARDC_RUNTIME_CHROMETRACE_H

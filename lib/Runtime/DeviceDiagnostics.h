//===- DeviceDiagnostics.h - per-device diagnostics of a run ----*- C++ -*-===//
//
// Private to lib/Runtime. MLIR's diagnostic engine is one per context, and
// the device threads of a run emit into it concurrently. While a
// DeviceDiagnostics is alive it takes every diagnostic emitted on a device
// worker (DevicePool::currentDevice() >= 0) and keeps it with its device;
// replay() re-emits them from the calling thread, prefixed "device N: ", the
// first failing device first and the others in device order, so what the
// user reads does not depend on how the threads were scheduled.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_RUNTIME_DEVICEDIAGNOSTICS_H
#define SHARDC_LIB_RUNTIME_DEVICEDIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"

#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace shardc::detail {

class DeviceDiagnostics {
public:
  DeviceDiagnostics(mlir::MLIRContext *context, int64_t numDevices);
  ~DeviceDiagnostics();
  DeviceDiagnostics(const DeviceDiagnostics &) = delete;
  DeviceDiagnostics &operator=(const DeviceDiagnostics &) = delete;

  /// Stops capturing (further diagnostics go to the context's other
  /// handlers) and re-emits what was captured; `first` (if any) comes
  /// first.
  void replay(std::optional<int64_t> first);
  /// True if `device` emitted an error.
  bool hasError(int64_t device) const;

private:
  struct Captured {
    mlir::Location loc;
    mlir::DiagnosticSeverity severity;
    std::string message;
    std::vector<std::pair<mlir::Location, std::string>> notes;
  };
  void stop();

  mlir::MLIRContext *context;
  std::optional<mlir::DiagnosticEngine::HandlerID> handler;
  mutable std::mutex mutex;
  std::vector<std::vector<Captured>> perDevice;
};

} // namespace shardc::detail

#endif // SHARDC_LIB_RUNTIME_DEVICEDIAGNOSTICS_H

//===- DeviceDiagnostics.cpp - per-device diagnostics of a run ------------===//

#include "DeviceDiagnostics.h"

#include "DevicePool.h"

using namespace mlir;
using namespace shardc::detail;

DeviceDiagnostics::DeviceDiagnostics(MLIRContext *context, int64_t numDevices)
    : context(context), perDevice(numDevices) {
  handler = context->getDiagEngine().registerHandler(
      [this](Diagnostic &diag) -> LogicalResult {
        int64_t device = DevicePool::currentDevice();
        if (device < 0 || device >= static_cast<int64_t>(perDevice.size()))
          return failure(); // not ours: the next handler takes it
        Captured c{diag.getLocation(), diag.getSeverity(), diag.str(), {}};
        for (Diagnostic &note : diag.getNotes())
          c.notes.push_back({note.getLocation(), note.str()});
        std::lock_guard<std::mutex> lock(mutex);
        perDevice[device].push_back(std::move(c));
        return success();
      });
}

DeviceDiagnostics::~DeviceDiagnostics() { stop(); }

void DeviceDiagnostics::stop() {
  if (handler)
    context->getDiagEngine().eraseHandler(*handler);
  handler.reset();
}

bool DeviceDiagnostics::hasError(int64_t device) const {
  std::lock_guard<std::mutex> lock(mutex);
  for (const Captured &c : perDevice[device])
    if (c.severity == DiagnosticSeverity::Error)
      return true;
  return false;
}

void DeviceDiagnostics::replay(std::optional<int64_t> first) {
  stop();
  std::vector<int64_t> order;
  if (first)
    order.push_back(*first);
  for (int64_t d = 0; d < static_cast<int64_t>(perDevice.size()); ++d)
    if (d != first)
      order.push_back(d);
  for (int64_t d : order) {
    for (Captured &c : perDevice[d]) {
      InFlightDiagnostic diag =
          context->getDiagEngine().emit(c.loc, c.severity);
      diag << "device " << d << ": " << c.message;
      for (auto &[loc, text] : c.notes)
        diag.attachNote(loc) << text;
    }
    perDevice[d].clear();
  }
}

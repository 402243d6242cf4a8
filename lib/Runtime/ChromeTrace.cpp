//===- ChromeTrace.cpp - a run's timeline as a Chrome trace ---------------===//

#include "shardc/Runtime/ChromeTrace.h"

#include "llvm/Support/JSON.h"

using namespace shardc;

void shardc::writeChromeTrace(llvm::ArrayRef<int64_t> devices,
                              llvm::ArrayRef<TraceSpan> spans,
                              llvm::raw_ostream &os) {
  // Per device a process with two threads: Perfetto draws the compute and
  // the communication track one above the other, so overlap is visible.
  llvm::json::Array events;
  auto meta = [&](llvm::StringRef what, int64_t pid, int64_t tid,
                  std::string name) {
    events.push_back(
        llvm::json::Object{{"name", what},
                           {"ph", "M"},
                           {"pid", pid},
                           {"tid", tid},
                           {"args", llvm::json::Object{{"name", name}}}});
  };
  for (int64_t d : devices) {
    meta("process_name", d, 0, "device " + std::to_string(d));
    meta("thread_name", d, 0, "compute");
    meta("thread_name", d, 1, "communication");
  }
  for (const TraceSpan &span : spans)
    events.push_back(llvm::json::Object{
        {"name", span.name},
        {"cat", span.category},
        {"ph", "X"},
        {"pid", span.device},
        {"tid", span.category == "compute" ? int64_t(0) : int64_t(1)},
        {"ts", span.startSeconds * 1e6},
        {"dur", span.durationSeconds * 1e6}});
  llvm::json::Object root{{"traceEvents", std::move(events)},
                          {"displayTimeUnit", "ns"}};
  os << llvm::json::Value(std::move(root)) << "\n";
}

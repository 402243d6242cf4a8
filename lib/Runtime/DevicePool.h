//===- DevicePool.h - one persistent worker thread per device ---*- C++ -*-===//
//
// Private to lib/Runtime. The threads backend's workers: created once, then
// handed one job per run (an inference loop calls run() many times, and
// thread creation would otherwise be paid every step). Each worker knows
// its device index through currentDevice(), which is how diagnostics
// emitted on it are attributed.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_RUNTIME_DEVICEPOOL_H
#define SHARDC_LIB_RUNTIME_DEVICEPOOL_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace shardc::detail {

class DevicePool {
public:
  explicit DevicePool(int64_t numWorkers);
  ~DevicePool();
  DevicePool(const DevicePool &) = delete;
  DevicePool &operator=(const DevicePool &) = delete;

  int64_t size() const { return static_cast<int64_t>(workers.size()); }

  /// Runs job(i) on worker i for every worker; returns when all are done.
  /// Not reentrant: one run at a time, never from a worker.
  void runOnEach(llvm::function_ref<void(int64_t)> job);

  /// The device index of the calling worker thread, -1 on any other thread.
  static int64_t currentDevice();

private:
  void work(int64_t index);

  std::vector<std::thread> workers;
  std::mutex mutex;
  std::condition_variable wake, done;
  llvm::function_ref<void(int64_t)> job;
  uint64_t generation = 0;
  int64_t remaining = 0;
  bool stopping = false;
};

} // namespace shardc::detail

#endif // SHARDC_LIB_RUNTIME_DEVICEPOOL_H

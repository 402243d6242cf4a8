//===- DevicePool.cpp - one persistent worker thread per device -----------===//

#include "DevicePool.h"

using namespace shardc::detail;

static thread_local int64_t workerDevice = -1;

int64_t DevicePool::currentDevice() { return workerDevice; }

DevicePool::DevicePool(int64_t numWorkers) {
  workers.reserve(numWorkers);
  for (int64_t i = 0; i < numWorkers; ++i)
    workers.emplace_back([this, i] { work(i); });
}

DevicePool::~DevicePool() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  for (std::thread &t : workers)
    t.join();
}

void DevicePool::work(int64_t index) {
  workerDevice = index;
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex);
  while (true) {
    wake.wait(lock, [&] { return stopping || generation != seen; });
    if (stopping)
      return;
    seen = generation;
    lock.unlock();
    job(index);
    lock.lock();
    if (--remaining == 0)
      done.notify_all();
  }
}

void DevicePool::runOnEach(llvm::function_ref<void(int64_t)> newJob) {
  std::unique_lock<std::mutex> lock(mutex);
  job = newJob;
  remaining = size();
  ++generation;
  wake.notify_all();
  done.wait(lock, [&] { return remaining == 0; });
}

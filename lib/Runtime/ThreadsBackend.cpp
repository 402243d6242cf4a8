//===- ThreadsBackend.cpp - one worker thread per mesh device -------------===//

#include "shardc/Runtime/ThreadsBackend.h"

#include "DeviceDiagnostics.h"
#include "DevicePool.h"
#include "SharedMemoryCommunicator.h"
#include "TracingCommunicator.h"
#include "shardc/Runtime/RetainFreedMemory.h"

#include "shardc/Interpreter/BlasThreads.h"
#include "shardc/Interpreter/Interpreter.h"

#include <algorithm>
#include <mutex>
#include <numeric>
#include <thread>

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;

int shardc::resolveBlasThreads(const ThreadsOptions &options,
                               int64_t numDevices) {
  if (options.blasThreadsPerDevice > 0)
    return options.blasThreadsPerDevice;
  return kDeviceBlasThreads;
}

namespace {
/// The context must lock its uniquers while several threads use it; a
/// context made single-threaded is switched over for the run.
class MultithreadingScope {
public:
  explicit MultithreadingScope(MLIRContext *context)
      : context(context), wasEnabled(context->isMultithreadingEnabled()) {
    if (!wasEnabled)
      context->enableMultithreading(true);
  }
  ~MultithreadingScope() {
    if (!wasEnabled)
      context->enableMultithreading(false);
  }

private:
  MLIRContext *context;
  bool wasEnabled;
};

/// Runs `perDevice` on every worker of `pool` with a fresh shared-memory
/// world, then reports failures as the header promises.
LogicalResult
runOnPool(DevicePool &pool, MLIRContext *context, const ThreadsOptions &options,
          llvm::function_ref<LogicalResult(int64_t, Communicator &)> perDevice,
          Location where) {
  int64_t n = pool.size();
  MultithreadingScope threading(context);
  ScopedBlasThreads blas(resolveBlasThreads(options, n));

  SharedMemoryWorld world(context, n, options);
  std::vector<SharedMemoryCommunicator> communicators;
  for (int64_t d = 0; d < n; ++d)
    communicators.emplace_back(world, d);
  std::vector<char> failedDevice(n, false);
  DeviceDiagnostics diagnostics(context, n);
  pool.runOnEach([&](int64_t d) {
    bool failed = mlir::failed(perDevice(d, communicators[d]));
    failedDevice[d] = failed;
    world.finish(d, failed);
  });

  std::optional<int64_t> first = world.firstFailure();
  std::vector<char> silent(n, false);
  for (int64_t d = 0; d < n; ++d)
    silent[d] = failedDevice[d] && !diagnostics.hasError(d);
  diagnostics.replay(first);
  if (!first)
    return success();
  // A failure with no message of its own still names its device.
  for (int64_t d = 0; d < n; ++d)
    if (silent[d])
      emitError(where) << "device " << d << ": failed"
                       << (d == *first ? "" : " (stopped)");
  return failure();
}

class ThreadsBackend final : public MeshBackend {
public:
  ThreadsBackend(MLIRContext *context, int64_t numDevices,
                 const ThreadsOptions &options)
      : context(context), options(options), pool(numDevices),
        devices(numDevices) {
    std::iota(devices.begin(), devices.end(), 0);
  }

  BackendKind kind() const override { return BackendKind::Threads; }
  int64_t numDevices() const override { return pool.size(); }
  llvm::ArrayRef<int64_t> localDevices() const override { return devices; }

  FailureOr<DeviceTensors> run(func::FuncOp spmd,
                               const DeviceTensors &args) override {
    std::lock_guard<std::mutex> lock(runMutex);
    if (!spmd)
      return failure();
    if (static_cast<int64_t>(args.size()) != numDevices())
      return spmd.emitError()
             << "the threads backend runs " << numDevices()
             << " devices but was given arguments for " << args.size();
    DeviceTensors results(numDevices());
    // One clock for every device, so that their tracks line up.
    std::vector<DeviceTimeline> timelines;
    std::vector<std::vector<TraceSpan>> deviceSpans(numDevices());
    trace.clear();
    if (tracing)
      for (int64_t d = 0; d < numDevices(); ++d)
        timelines.emplace_back(d, DeviceTimeline::Clock::now());
    LogicalResult status = runOnPool(
        pool, spmd->getContext(), options,
        [&](int64_t d, Communicator &communicator) -> LogicalResult {
          std::optional<TracingCommunicator> traced;
          if (tracing)
            traced.emplace(communicator, timelines[d]);
          InterpreterOptions interpreterOptions;
          interpreterOptions.communicator = traced ? &*traced : &communicator;
          interpreterOptions.maxTensorBytes = options.maxTensorBytes;
          FailureOr<SmallVector<Tensor>> out =
              interpretFunction(spmd, args[d], interpreterOptions);
          if (failed(out))
            return failure();
          if (tracing)
            deviceSpans[d] = timelines[d].finish();
          for (Tensor &t : *out)
            results[d].push_back(std::move(t));
          return success();
        },
        spmd.getLoc());
    if (failed(status))
      return failure();
    for (std::vector<TraceSpan> &spans : deviceSpans)
      for (TraceSpan &span : spans)
        trace.push_back(std::move(span));
    return results;
  }

  std::vector<TraceSpan> lastTrace() const override { return trace; }

  FailureOr<std::vector<Tensor>>
  gatherBlocks(std::vector<Tensor> localBlocks) override {
    // Every device is local: the blocks are all here already.
    if (static_cast<int64_t>(localBlocks.size()) != numDevices())
      return emitError(UnknownLoc::get(context))
             << "gatherBlocks: the threads backend has " << numDevices()
             << " devices but was given " << localBlocks.size() << " blocks";
    return localBlocks;
  }

private:
  MLIRContext *context;
  ThreadsOptions options;
  DevicePool pool;
  std::vector<int64_t> devices;
  std::mutex runMutex;
  std::vector<TraceSpan> trace;
};
} // namespace

std::unique_ptr<MeshBackend>
shardc::createThreadsBackend(MeshOp mesh, const ThreadsOptions &options) {
  if (!mesh)
    return nullptr;
  FailureOr<MeshTopology> topology = getMeshTopology(mesh);
  if (failed(topology))
    return nullptr;
  if (options.blasThreadsPerDevice < 0 || options.timeoutSeconds < 0) {
    mesh.emitError("threads backend: BLAS threads and timeout must not be "
                   "negative");
    return nullptr;
  }
  // Before the pool starts, so that its threads share the one arena.
  if (options.retainFreedMemory)
    retainFreedMemory();
  return std::make_unique<ThreadsBackend>(mesh->getContext(),
                                          topology->numDevices(), options);
}

LogicalResult
shardc::runOnThreads(MLIRContext &context, int64_t numDevices,
                     llvm::function_ref<LogicalResult(Communicator &)> body,
                     const ThreadsOptions &options) {
  Location where = UnknownLoc::get(&context);
  if (numDevices < 1)
    return emitError(where)
           << "runOnThreads needs at least one device, got " << numDevices;
  if (options.retainFreedMemory)
    retainFreedMemory();
  DevicePool pool(numDevices);
  return runOnPool(
      pool, &context, options,
      [&](int64_t, Communicator &communicator) { return body(communicator); },
      where);
}

//===- TracingCommunicator.h - a device's wall-clock timeline ---*- C++ -*-===//
//
// Private to lib/Runtime. A Communicator that forwards every call to
// another and records the device's timeline for a Chrome trace
// (ChromeTrace.h): each call that blocks is a span on the communication
// track, and the time between them, when the device computes, spans on the
// compute track. A started reduction (startAllReduce) is a communication
// span from its start to the moment its result is here (isComplete after a
// progress(), or wait()), drawn beside the compute that ran meanwhile: the
// overlap of gradient reductions with the backward pass. Wall-clock
// seconds from the run's start (`origin`).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_RUNTIME_TRACINGCOMMUNICATOR_H
#define SHARDC_LIB_RUNTIME_TRACINGCOMMUNICATOR_H

#include "shardc/Interpreter/Communicator.h"
#include "shardc/Runtime/ChromeTrace.h"

#include <chrono>
#include <vector>

namespace shardc::detail {

/// One device's spans, recorded by the device's own thread.
class DeviceTimeline {
public:
  using Clock = std::chrono::steady_clock;
  DeviceTimeline(int64_t device, Clock::time_point origin)
      : device(device), origin(origin) {}

  double now() const {
    return std::chrono::duration<double>(Clock::now() - origin).count();
  }
  /// The device stops computing at `t` (a blocking call starts).
  void pauseCompute(double t);
  /// ... and computes again from `t`.
  void resumeCompute(double t) { computeSince = t; }
  void communication(std::string name, double start, double end);
  /// Closes the last compute span; returns the spans.
  std::vector<TraceSpan> finish();

private:
  int64_t device;
  Clock::time_point origin;
  double computeSince = 0;
  std::vector<TraceSpan> spans;
};

class TracingCommunicator : public Communicator {
public:
  TracingCommunicator(Communicator &inner, DeviceTimeline &timeline)
      : inner(inner), timeline(timeline) {}

  int64_t deviceId() const override { return inner.deviceId(); }
  int64_t numDevices() const override { return inner.numDevices(); }
  mlir::LogicalResult barrier() override;
  mlir::LogicalResult send(int64_t dest, const Tensor &tensor) override;
  mlir::FailureOr<Tensor> receive(int64_t src) override;
  std::future<mlir::LogicalResult> sendAsync(int64_t dest,
                                             Tensor tensor) override;
  mlir::FailureOr<Tensor> allGather(const Tensor &local,
                                    llvm::ArrayRef<int64_t> group,
                                    int64_t dim) override;
  mlir::FailureOr<Tensor> allReduce(const Tensor &local,
                                    llvm::ArrayRef<int64_t> group,
                                    Reduction kind) override;
  mlir::FailureOr<Tensor> reduceScatter(const Tensor &local,
                                        llvm::ArrayRef<int64_t> group,
                                        int64_t dim, Reduction kind) override;
  mlir::FailureOr<Tensor> allToAll(const Tensor &local,
                                   llvm::ArrayRef<int64_t> group,
                                   int64_t splitDim,
                                   int64_t concatDim) override;
  mlir::FailureOr<Tensor>
  collectivePermute(const Tensor &local, llvm::ArrayRef<int64_t> group,
                    llvm::ArrayRef<std::pair<int64_t, int64_t>> pairs) override;
  mlir::FailureOr<std::unique_ptr<PendingCollective>>
  startAllReduce(Tensor local, llvm::ArrayRef<int64_t> group,
                 Reduction kind) override;
  mlir::FailureOr<std::unique_ptr<PendingCollective>>
  startReduceScatter(Tensor local, llvm::ArrayRef<int64_t> group, int64_t dim,
                     Reduction kind) override;
  using Communicator::allGather;
  using Communicator::allReduce;
  using Communicator::allToAll;
  using Communicator::reduceScatter;

private:
  /// Runs `call` as one blocking span named `name`.
  template <typename Call>
  auto blocking(std::string name, Call call) -> decltype(call());
  mlir::FailureOr<std::unique_ptr<PendingCollective>>
  traced(std::string name, double start,
         mlir::FailureOr<std::unique_ptr<PendingCollective>> pending);

  Communicator &inner;
  DeviceTimeline &timeline;
};

} // namespace shardc::detail

#endif // SHARDC_LIB_RUNTIME_TRACINGCOMMUNICATOR_H

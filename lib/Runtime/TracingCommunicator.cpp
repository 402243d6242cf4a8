//===- TracingCommunicator.cpp - a device's wall-clock timeline -----------===//

#include "TracingCommunicator.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;
using llvm::ArrayRef;

void DeviceTimeline::pauseCompute(double t) {
  if (t > computeSince)
    spans.push_back(
        {device, "compute", "compute", computeSince, t - computeSince});
  computeSince = t;
}

void DeviceTimeline::communication(std::string name, double start, double end) {
  spans.push_back(
      {device, std::move(name), "communication", start, end - start});
}

std::vector<TraceSpan> DeviceTimeline::finish() {
  pauseCompute(now());
  return std::move(spans);
}

/// "all_reduce [256, 128]": the call and the local tensor it moves.
static std::string spanName(llvm::StringRef kind, const Tensor &local) {
  return (kind + " " + formatShape(local.shape())).str();
}

template <typename Call>
auto TracingCommunicator::blocking(std::string name, Call call)
    -> decltype(call()) {
  double start = timeline.now();
  timeline.pauseCompute(start);
  auto result = call();
  double end = timeline.now();
  timeline.communication(std::move(name), start, end);
  timeline.resumeCompute(end);
  return result;
}

LogicalResult TracingCommunicator::barrier() {
  return blocking("barrier", [&] { return inner.barrier(); });
}

LogicalResult TracingCommunicator::send(int64_t dest, const Tensor &tensor) {
  return blocking(spanName("send", tensor),
                  [&] { return inner.send(dest, tensor); });
}

FailureOr<Tensor> TracingCommunicator::receive(int64_t src) {
  return blocking("receive from " + std::to_string(src),
                  [&] { return inner.receive(src); });
}

std::future<LogicalResult> TracingCommunicator::sendAsync(int64_t dest,
                                                          Tensor tensor) {
  std::string name = spanName("send_async", tensor);
  return blocking(std::move(name),
                  [&] { return inner.sendAsync(dest, std::move(tensor)); });
}

FailureOr<Tensor> TracingCommunicator::allGather(const Tensor &local,
                                                 ArrayRef<int64_t> group,
                                                 int64_t dim) {
  return blocking(spanName("all_gather", local),
                  [&] { return inner.allGather(local, group, dim); });
}

FailureOr<Tensor> TracingCommunicator::allReduce(const Tensor &local,
                                                 ArrayRef<int64_t> group,
                                                 Reduction kind) {
  return blocking(spanName("all_reduce", local),
                  [&] { return inner.allReduce(local, group, kind); });
}

FailureOr<Tensor> TracingCommunicator::reduceScatter(const Tensor &local,
                                                     ArrayRef<int64_t> group,
                                                     int64_t dim,
                                                     Reduction kind) {
  return blocking(spanName("reduce_scatter", local),
                  [&] { return inner.reduceScatter(local, group, dim, kind); });
}

FailureOr<Tensor> TracingCommunicator::allToAll(const Tensor &local,
                                                ArrayRef<int64_t> group,
                                                int64_t splitDim,
                                                int64_t concatDim) {
  return blocking(spanName("all_to_all", local), [&] {
    return inner.allToAll(local, group, splitDim, concatDim);
  });
}

FailureOr<Tensor> TracingCommunicator::collectivePermute(
    const Tensor &local, ArrayRef<int64_t> group,
    ArrayRef<std::pair<int64_t, int64_t>> pairs) {
  return blocking(spanName("collective_permute", local),
                  [&] { return inner.collectivePermute(local, group, pairs); });
}

namespace {
/// A started reduction's span: from its start until its result is here.
class TracedPending : public PendingCollective {
public:
  TracedPending(std::unique_ptr<PendingCollective> inner,
                DeviceTimeline &timeline, std::string name, double start)
      : inner(std::move(inner)), timeline(timeline), name(std::move(name)),
        start(start) {}

  void progress() override {
    if (ended)
      return;
    double t0 = timeline.now();
    inner->progress();
    if (inner->isComplete()) {
      // It completed here, on this device's thread (the threads backend
      // folds the members' tensors): that time was not compute.
      double t1 = timeline.now();
      timeline.pauseCompute(t0);
      end(t1);
      timeline.resumeCompute(t1);
    }
  }
  bool isComplete() const override { return inner->isComplete(); }
  FailureOr<Tensor> wait() override {
    double t0 = timeline.now();
    bool waits = !ended && !inner->isComplete();
    if (waits)
      timeline.pauseCompute(t0);
    FailureOr<Tensor> result = inner->wait();
    double t1 = timeline.now();
    if (!ended)
      end(t1);
    if (waits)
      timeline.resumeCompute(t1);
    return result;
  }

private:
  void end(double t) {
    ended = true;
    timeline.communication(name, start, t);
  }

  std::unique_ptr<PendingCollective> inner;
  DeviceTimeline &timeline;
  std::string name;
  double start;
  bool ended = false;
};
} // namespace

FailureOr<std::unique_ptr<PendingCollective>>
TracingCommunicator::traced(std::string name, double start,
                            FailureOr<std::unique_ptr<PendingCollective>> p) {
  if (failed(p))
    return failure();
  if ((*p)->isComplete()) {
    // Run at once (a backend without overlap): a blocking call.
    double end = timeline.now();
    timeline.pauseCompute(start);
    timeline.communication(std::move(name), start, end);
    timeline.resumeCompute(end);
    return std::move(*p);
  }
  return std::unique_ptr<PendingCollective>(std::make_unique<TracedPending>(
      std::move(*p), timeline, std::move(name), start));
}

FailureOr<std::unique_ptr<PendingCollective>>
TracingCommunicator::startAllReduce(Tensor local, ArrayRef<int64_t> group,
                                    Reduction kind) {
  std::string name = spanName("all_reduce", local);
  double start = timeline.now();
  return traced(std::move(name), start,
                inner.startAllReduce(std::move(local), group, kind));
}

FailureOr<std::unique_ptr<PendingCollective>>
TracingCommunicator::startReduceScatter(Tensor local, ArrayRef<int64_t> group,
                                        int64_t dim, Reduction kind) {
  std::string name = spanName("reduce_scatter", local);
  double start = timeline.now();
  return traced(std::move(name), start,
                inner.startReduceScatter(std::move(local), group, dim, kind));
}

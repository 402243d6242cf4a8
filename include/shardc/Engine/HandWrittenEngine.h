//===- HandWrittenEngine.h - the engine API, written by hand ----*- C++ -*-===//
//
// For SPMD code written by hand, as the engine API (docs/engine.md) has
// it: one instance per device, whose loadCheckpoint / forward / backward
// call its primitives (deviceId, numDevices, barrier, send, receive,
// sendAsync, allGather, allReduce, allToAll, plus reduceScatter) on a
// Communicator.
// runOnThreads (shardc/Runtime/ThreadsBackend.h) runs one instance per
// device thread; examples/engine/ ports a SingleDevice engine and a
// hand-written Megatron MLP onto it. ShardedEngine derives the same methods
// from a compiled program instead.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_ENGINE_HANDWRITTENENGINE_H
#define SHARDC_ENGINE_HANDWRITTENENGINE_H

#include "shardc/Interpreter/Communicator.h"

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace shardc {

class HandWrittenEngine {
public:
  explicit HandWrittenEngine(Communicator &communicator)
      : communicator(communicator) {}
  virtual ~HandWrittenEngine();

  //===--- what a subclass writes (seed: the abstract methods) ------------===//
  virtual mlir::LogicalResult
  loadCheckpoint(const std::map<std::string, Tensor> &params) = 0;
  virtual mlir::FailureOr<Tensor> forward(const Tensor &x) = 0;
  virtual mlir::FailureOr<std::map<std::string, Tensor>>
  backward(const Tensor &grads) = 0;

  /// forward() on each input until the reader returns std::nullopt, each
  /// output handed to the writer (seed: inference_loop).
  mlir::LogicalResult
  inferenceLoop(const std::function<std::optional<Tensor>()> &reader,
                const std::function<mlir::LogicalResult(Tensor)> &writer);

protected:
  //===--- The engine API's primitives ------------------------------------===//
  int64_t deviceId() const { return communicator.deviceId(); }
  int64_t numDevices() const { return communicator.numDevices(); }
  mlir::LogicalResult barrier() { return communicator.barrier(); }
  mlir::LogicalResult send(int64_t dest, const Tensor &t) {
    return communicator.send(dest, t);
  }
  mlir::FailureOr<Tensor> receive(int64_t src) {
    return communicator.receive(src);
  }
  std::future<mlir::LogicalResult> sendAsync(int64_t dest, Tensor t) {
    return communicator.sendAsync(dest, std::move(t));
  }
  mlir::FailureOr<Tensor> allGather(const Tensor &t, int64_t axis = 0) {
    return communicator.allGather(t, axis);
  }
  mlir::FailureOr<Tensor> allReduce(const Tensor &t,
                                    Reduction op = Reduction::Sum) {
    return communicator.allReduce(t, op);
  }
  mlir::FailureOr<Tensor> allToAll(const Tensor &t, int64_t axis = 0) {
    return communicator.allToAll(t, axis);
  }
  mlir::FailureOr<Tensor> reduceScatter(const Tensor &t, int64_t axis = 0,
                                        Reduction op = Reduction::Sum) {
    return communicator.reduceScatter(t, axis, op);
  }

  Communicator &communicator;
};

} // namespace shardc

#endif // SHARDC_ENGINE_HANDWRITTENENGINE_H

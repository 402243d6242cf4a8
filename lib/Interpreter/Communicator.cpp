//===- Communicator.cpp - the backend-independent part --------------------===//
//
// The engine API's whole-mesh signatures (docs/engine.md) are group calls
// over every device, so a backend implements the group collectives once and
// gets both.
//
//===----------------------------------------------------------------------===//

#include "shardc/Interpreter/Communicator.h"
#include "shardc/Interpreter/Interpreter.h"

#include <numeric>

using namespace mlir;
using namespace shardc;

Communicator::~Communicator() = default;
PendingCollective::~PendingCollective() = default;

namespace {
/// A collective that completed when it was started.
class CompletedCollective : public PendingCollective {
public:
  explicit CompletedCollective(FailureOr<Tensor> result)
      : result(std::move(result)) {}
  FailureOr<Tensor> wait() override { return std::move(result); }
  bool isComplete() const override { return true; }

private:
  FailureOr<Tensor> result;
};
} // namespace

FailureOr<std::unique_ptr<PendingCollective>>
Communicator::startAllReduce(Tensor local, llvm::ArrayRef<int64_t> group,
                             Reduction kind) {
  FailureOr<Tensor> result = allReduce(local, group, kind);
  if (failed(result))
    return failure();
  return std::unique_ptr<PendingCollective>(
      std::make_unique<CompletedCollective>(std::move(result)));
}

FailureOr<std::unique_ptr<PendingCollective>>
Communicator::startReduceScatter(Tensor local, llvm::ArrayRef<int64_t> group,
                                 int64_t dim, Reduction kind) {
  FailureOr<Tensor> result = reduceScatter(local, group, dim, kind);
  if (failed(result))
    return failure();
  return std::unique_ptr<PendingCollective>(
      std::make_unique<CompletedCollective>(std::move(result)));
}

std::future<LogicalResult> Communicator::sendAsync(int64_t dest,
                                                   Tensor tensor) {
  std::promise<LogicalResult> done;
  done.set_value(send(dest, tensor));
  return done.get_future();
}

llvm::SmallVector<int64_t> Communicator::everyDevice() const {
  llvm::SmallVector<int64_t> all(numDevices());
  std::iota(all.begin(), all.end(), 0);
  return all;
}

StringRef shardc::stringifyReduction(Reduction reduction) {
  return reduction == Reduction::Sum ? "sum" : "max";
}

Reduction shardc::toCommunicatorReduction(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum:
    return Reduction::Sum;
  case ReductionKind::Max:
    return Reduction::Max;
  }
  return Reduction::Sum;
}

FailureOr<Tensor> Communicator::allGather(const Tensor &local, int64_t dim) {
  return allGather(local, everyDevice(), dim);
}

FailureOr<Tensor> Communicator::allReduce(const Tensor &local,
                                          Reduction kind) {
  return allReduce(local, everyDevice(), kind);
}

FailureOr<Tensor> Communicator::reduceScatter(const Tensor &local, int64_t dim,
                                              Reduction kind) {
  return reduceScatter(local, everyDevice(), dim, kind);
}

FailureOr<Tensor> Communicator::allToAll(const Tensor &local, int64_t dim) {
  return allToAll(local, everyDevice(), dim, dim);
}

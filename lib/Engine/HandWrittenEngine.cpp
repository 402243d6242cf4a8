//===- HandWrittenEngine.cpp - the hand-written engine's inference loop ---===//

#include "shardc/Engine/HandWrittenEngine.h"

using namespace mlir;
using namespace shardc;

HandWrittenEngine::~HandWrittenEngine() = default;

LogicalResult HandWrittenEngine::inferenceLoop(
    const std::function<std::optional<Tensor>()> &reader,
    const std::function<LogicalResult(Tensor)> &writer) {
  while (std::optional<Tensor> x = reader()) {
    FailureOr<Tensor> y = forward(*x);
    if (failed(y) || failed(writer(std::move(*y))))
      return failure();
  }
  return success();
}

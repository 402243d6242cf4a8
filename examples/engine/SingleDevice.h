//===- SingleDevice.h - the seed's unsharded MLP, ported --------*- C++ -*-===//
//
// ReLU(x W0) W1 with the seed's hand-written backward, line for line: the
// forward pass saves x and z on a tape, backward pops them.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_EXAMPLES_ENGINE_SINGLEDEVICE_H
#define SHARDC_EXAMPLES_ENGINE_SINGLEDEVICE_H

#include "SeedMath.h"

#include "shardc/Engine/HandWrittenEngine.h"

#include <vector>

class SingleDevice : public shardc::HandWrittenEngine {
public:
  using HandWrittenEngine::HandWrittenEngine;

  mlir::LogicalResult
  loadCheckpoint(const std::map<std::string, shardc::Tensor> &params) override {
    w0 = params.at("layer_0/weights").clone();
    w1 = params.at("layer_1/weights").clone();
    return mlir::success();
  }

  mlir::FailureOr<shardc::Tensor> forward(const shardc::Tensor &x) override {
    activations.push_back(x.clone());                        // 1. save input
    seed::RowMatrix z = seed::view(x) * seed::view(w0);      // 2. layer 0
    activations.push_back(seed::fromMatrix(z));              // 3. save z
    seed::RowMatrix out = seed::relu(z) * seed::view(w1);    // 4. layer 1
    return seed::fromMatrix(out);
  }

  mlir::FailureOr<std::map<std::string, shardc::Tensor>>
  backward(const shardc::Tensor &grads) override {
    shardc::Tensor z = std::move(activations.back());
    activations.pop_back();
    seed::RowMatrix hRelu = seed::relu(seed::view(z));
    seed::RowMatrix w1Grad = hRelu.transpose() * seed::view(grads);
    seed::RowMatrix g = seed::view(grads) * seed::view(w1).transpose();
    g = g.cwiseProduct(seed::positive(seed::view(z))); // relu'
    shardc::Tensor xInput = std::move(activations.back());
    activations.pop_back();
    seed::RowMatrix w0Grad = seed::view(xInput).transpose() * g;
    std::map<std::string, shardc::Tensor> out;
    out.emplace("layer_0/weights", seed::fromMatrix(w0Grad));
    out.emplace("layer_1/weights", seed::fromMatrix(w1Grad));
    return out;
  }

private:
  shardc::Tensor w0, w1;
  std::vector<shardc::Tensor> activations; // the seed's tape
};

#endif // SHARDC_EXAMPLES_ENGINE_SINGLEDEVICE_H

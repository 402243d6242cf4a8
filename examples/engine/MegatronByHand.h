//===- MegatronByHand.h - an MLP, tensor parallel by hand -------*- C++ -*-===//
//
// Megatron-LM's MLP written the way the seed writes sharded code: device d
// holds columns d of W0 and rows d of W1, so the first matmul and the ReLU
// need no communication and the second produces a partial sum, completed by
// one all_reduce (Megatron's "g"). Backward needs none for the weight
// gradients, which stay sharded; the seed's API returns full gradients, so
// they are all_gathered at the end (a trainer would keep them sharded).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_EXAMPLES_ENGINE_MEGATRONBYHAND_H
#define SHARDC_EXAMPLES_ENGINE_MEGATRONBYHAND_H

#include "SeedMath.h"

#include "shardc/Engine/HandWrittenEngine.h"

#include <vector>

class MegatronByHand : public shardc::HandWrittenEngine {
public:
  using HandWrittenEngine::HandWrittenEngine;

  mlir::LogicalResult
  loadCheckpoint(const std::map<std::string, shardc::Tensor> &params) override {
    const shardc::Tensor &fullW0 = params.at("layer_0/weights");
    int64_t hidden = fullW0.dim(1);
    if (hidden % numDevices() != 0)
      return mlir::failure();
    int64_t shard = hidden / numDevices();
    w0 = seed::columns(fullW0, deviceId() * shard, shard);
    w1 = seed::rows(params.at("layer_1/weights"), deviceId() * shard, shard);
    return mlir::success();
  }

  mlir::FailureOr<shardc::Tensor> forward(const shardc::Tensor &x) override {
    activations.push_back(x.clone());
    seed::RowMatrix z = seed::view(x) * seed::view(w0); // local columns
    activations.push_back(seed::fromMatrix(z));
    shardc::Tensor partial =
        seed::fromMatrix(seed::relu(z) * seed::view(w1)); // partial sum
    return allReduce(partial);
  }

  mlir::FailureOr<std::map<std::string, shardc::Tensor>>
  backward(const shardc::Tensor &grads) override {
    shardc::Tensor z = std::move(activations.back());
    activations.pop_back();
    seed::RowMatrix hRelu = seed::relu(seed::view(z));
    seed::RowMatrix w1Grad = hRelu.transpose() * seed::view(grads);
    seed::RowMatrix g = seed::view(grads) * seed::view(w1).transpose();
    g = g.cwiseProduct(seed::positive(seed::view(z)));
    shardc::Tensor xInput = std::move(activations.back());
    activations.pop_back();
    seed::RowMatrix w0Grad = seed::view(xInput).transpose() * g;
    // Full gradients for the seed's API: columns of W0, rows of W1.
    mlir::FailureOr<shardc::Tensor> fullW0 =
        allGather(seed::fromMatrix(w0Grad), /*axis=*/1);
    mlir::FailureOr<shardc::Tensor> fullW1 =
        allGather(seed::fromMatrix(w1Grad), /*axis=*/0);
    if (mlir::failed(fullW0) || mlir::failed(fullW1))
      return mlir::failure();
    std::map<std::string, shardc::Tensor> out;
    out.emplace("layer_0/weights", std::move(*fullW0));
    out.emplace("layer_1/weights", std::move(*fullW1));
    return out;
  }

private:
  shardc::Tensor w0, w1;
  std::vector<shardc::Tensor> activations;
};

#endif // SHARDC_EXAMPLES_ENGINE_MEGATRONBYHAND_H

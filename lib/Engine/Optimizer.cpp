//===- Optimizer.cpp - SGD and Adam on device blocks ----------------------===//

#include "shardc/Engine/Optimizer.h"

#include <cmath>

using namespace shardc;

void shardc::applyOptimizer(
    const OptimizerOptions &options, OptimizerState &state,
    const std::vector<std::vector<Tensor *>> &params,
    const std::vector<std::vector<const Tensor *>> &grads) {
  ++state.step;
  if (options.kind == OptimizerOptions::Kind::Sgd) {
    for (size_t d = 0; d < params.size(); ++d)
      for (size_t p = 0; p < params[d].size(); ++p) {
        float *w = params[d][p]->data();
        const float *g = grads[d][p]->data();
        for (int64_t i = 0, e = params[d][p]->numElements(); i < e; ++i)
          w[i] -= options.learningRate * g[i];
      }
    return;
  }
  // Adam: the moments start at zero, shaped like each block.
  if (state.firstMoment.empty()) {
    state.firstMoment.resize(params.size());
    state.secondMoment.resize(params.size());
    for (size_t d = 0; d < params.size(); ++d)
      for (Tensor *p : params[d]) {
        state.firstMoment[d].push_back(
            llvm::cantFail(Tensor::allocate(p->shape())));
        state.secondMoment[d].push_back(
            llvm::cantFail(Tensor::allocate(p->shape())));
      }
  }
  double correction1 = 1 - std::pow(double(options.beta1), state.step);
  double correction2 = 1 - std::pow(double(options.beta2), state.step);
  float stepSize = float(options.learningRate / correction1);
  float rootCorrection2 = float(std::sqrt(correction2));
  for (size_t d = 0; d < params.size(); ++d)
    for (size_t p = 0; p < params[d].size(); ++p) {
      float *w = params[d][p]->data();
      const float *g = grads[d][p]->data();
      float *m = state.firstMoment[d][p].data();
      float *v = state.secondMoment[d][p].data();
      for (int64_t i = 0, e = params[d][p]->numElements(); i < e; ++i) {
        m[i] = options.beta1 * m[i] + (1 - options.beta1) * g[i];
        v[i] = options.beta2 * v[i] + (1 - options.beta2) * g[i] * g[i];
        w[i] -= stepSize * m[i] /
                (std::sqrt(v[i]) / rootCorrection2 + options.epsilon);
      }
    }
}

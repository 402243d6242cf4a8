//===- main.cpp - a program outside shardc's tree that embeds it ---------===//
//
// Built against an installed shardc by test/install/run-install-test.sh:
// compiles the Megatron MLP for 4 devices, loads a checkpoint, runs forward
// on worker threads and checks the result against relu(x w0) w1 computed
// here by plain loops. Prints "consumer: OK" and exits 0, or says what
// differs and exits 1.
//
//===----------------------------------------------------------------------===//

#include "shardc/Engine/Setup.h"
#include "shardc/Engine/ShardedEngine.h"
#include "shardc/Import/JsonImporter.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using shardc::Tensor;

static const char *kModel = R"({
  "mesh": {"name": "mesh", "axes": [["model", 4]]},
  "inputs": [{"name": "x",  "shape": [8, 16]},
             {"name": "w0", "shape": [16, 32], "param": true, "sharding": [null, "model"]},
             {"name": "w1", "shape": [32, 16], "param": true}],
  "ops": [{"op": "matmul", "inputs": ["x", "w0"], "output": "h"},
          {"op": "relu", "inputs": ["h"], "output": "u"},
          {"op": "matmul", "inputs": ["u", "w1"], "output": "z"}],
  "outputs": [{"name": "z", "sharding": [null, null]}]})";

/// A tensor of `shape` whose element i is sin(seed + i).
static Tensor filled(llvm::ArrayRef<int64_t> shape, float seed) {
  Tensor t = llvm::cantFail(Tensor::allocate(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data()[i] = std::sin(seed + static_cast<float>(i));
  return t;
}

int main() {
  mlir::MLIRContext context;
  shardc::setUpContext(context);
  shardc::EngineOptions options;
  options.backend = shardc::BackendKind::Threads;
  auto engine = shardc::ShardedEngine::compile(
      shardc::importJsonGraph(kModel, "model.json", &context), options);
  if (mlir::failed(engine))
    return 1;

  std::map<std::string, Tensor> checkpoint;
  checkpoint["w0"] = filled({16, 32}, 1);
  checkpoint["w1"] = filled({32, 16}, 2);
  std::vector<Tensor> inputs;
  inputs.push_back(filled({8, 16}, 3));
  if (mlir::failed((*engine)->loadCheckpoint(checkpoint)))
    return 1;
  auto outputs = (*engine)->forward(inputs);
  if (mlir::failed(outputs))
    return 1;

  const Tensor &x = inputs[0], &w0 = checkpoint["w0"], &w1 = checkpoint["w1"];
  const Tensor &z = outputs->front();
  float worst = 0;
  for (int64_t b = 0; b < 8; ++b)
    for (int64_t d = 0; d < 16; ++d) {
      float want = 0;
      for (int64_t f = 0; f < 32; ++f) {
        float h = 0;
        for (int64_t k = 0; k < 16; ++k)
          h += x.at({b, k}) * w0.at({k, f});
        want += std::max(h, 0.0f) * w1.at({f, d});
      }
      worst = std::max(worst, std::fabs(z.at({b, d}) - want));
    }
  llvm::outs() << "consumer: 4 devices, max |z - reference| = " << worst
               << (worst < 1e-4f ? "\nconsumer: OK\n" : "\n");
  return worst < 1e-4f ? 0 : 1;
}

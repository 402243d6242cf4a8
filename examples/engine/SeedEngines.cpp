//===- SeedEngines.cpp - the seed's engines, three ways, one answer -------===//
//
// The seed MLP ReLU(x W0) W1, forward and backward, computed by
//   1. the seed's SingleDevice, ported (one device thread),
//   2. a hand-written Megatron version (4 device threads, all_reduce),
//   3. shardc's compiled ShardedEngine (W0 column-sharded by annotation,
//      everything else derived), on the threads backend,
// and checked against each other: every device's output and every full
// gradient must agree within 1e-5 relative. Exits 1 on any mismatch.
//
//   build/bin/shardc-seed-engines
//
//===----------------------------------------------------------------------===//

#include "MegatronByHand.h"
#include "SingleDevice.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Engine/ShardedEngine.h"
#include "shardc/Interpreter/Kernels.h"
#include "shardc/Runtime/ShardedExecution.h"
#include "shardc/Runtime/ThreadsBackend.h"
#include "shardc/Support/RandomTensor.h"
#include "shardc/Transforms/Passes.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>

using namespace mlir;
using shardc::Tensor;

namespace {
constexpr int64_t kBatch = 16, kModel = 64, kHidden = 256, kDevices = 4;

/// The same MLP for the compiler: only W0's sharding is given.
constexpr const char *kProgram = R"mlir(
shardc.mesh @mesh ["model"=4]
func.func @main(%x: tensor<16x64xf32> {shardc.name = "x"},
                %w0: tensor<64x256xf32> {shardc.name = "layer_0/weights",
                  shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"}]>},
                %w1: tensor<256x64xf32> {shardc.name = "layer_1/weights"})
    -> (tensor<16x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}) {
  %z = shardc.matmul %x, %w0 : (tensor<16x64xf32>, tensor<64x256xf32>) -> tensor<16x256xf32>
  %h = shardc.relu %z : tensor<16x256xf32>
  %out = shardc.matmul %h, %w1 : (tensor<16x256xf32>, tensor<256x64xf32>) -> tensor<16x64xf32>
  return %out : tensor<16x64xf32>
}
)mlir";

struct Answer {
  Tensor out;
  std::map<std::string, Tensor> grads;
};

std::map<std::string, Tensor> checkpoint() {
  std::map<std::string, Tensor> params;
  params.emplace("layer_0/weights",
                 shardc::randomTensor({kModel, kHidden}, 1, "layer_0/weights"));
  params.emplace("layer_1/weights",
                 shardc::randomTensor({kHidden, kModel}, 1, "layer_1/weights"));
  return params;
}

/// Runs a hand-written engine on `devices` threads; every device's answer.
template <typename Engine>
FailureOr<std::vector<Answer>> runByHand(MLIRContext &ctx, int64_t devices,
                                         const Tensor &x, const Tensor &dy) {
  std::vector<Answer> answers(devices);
  std::map<std::string, Tensor> params = checkpoint();
  LogicalResult done = shardc::runOnThreads(
      ctx, devices, [&](shardc::Communicator &comm) -> LogicalResult {
        Engine engine(comm);
        if (failed(engine.loadCheckpoint(params)))
          return failure();
        FailureOr<Tensor> out = engine.forward(x);
        if (failed(out))
          return failure();
        FailureOr<std::map<std::string, Tensor>> grads = engine.backward(dy);
        if (failed(grads))
          return failure();
        answers[comm.deviceId()] = {std::move(*out), std::move(*grads)};
        return success();
      });
  if (failed(done))
    return failure();
  return answers;
}

bool agree(llvm::StringRef what, const Tensor &got, const Tensor &want,
           double &worst) {
  double rel = shardc::compareToReference(got, want).first;
  worst = std::max(worst, rel);
  if (rel <= 1e-5)
    return true;
  llvm::errs() << "shardc-seed-engines: " << what
               << " disagrees: max_rel_err " << rel << "\n";
  return false;
}
} // namespace

int main() {
  MLIRContext ctx;
  ctx.getOrLoadDialect<shardc::ShardcDialect>();
  shardc::registerKernelModels(ctx);
  ctx.getOrLoadDialect<func::FuncDialect>();
  shardc::registerShardcPasses();
  Tensor x = shardc::randomTensor({kBatch, kModel}, 2, "x");
  Tensor dy = shardc::randomTensor({kBatch, kModel}, 3, "dy");

  FailureOr<std::vector<Answer>> single =
      runByHand<SingleDevice>(ctx, 1, x, dy);
  FailureOr<std::vector<Answer>> megatron =
      runByHand<MegatronByHand>(ctx, kDevices, x, dy);
  if (failed(single) || failed(megatron))
    return 1;
  const Answer &want = single->front();

  shardc::EngineOptions options;
  options.backend = shardc::BackendKind::Threads;
  options.parameters = {"layer_0/weights", "layer_1/weights"};
  auto compiled = shardc::ShardedEngine::compile(
      parseSourceString<ModuleOp>(kProgram, &ctx), options);
  if (failed(compiled) || failed((*compiled)->loadCheckpoint(checkpoint())))
    return 1;
  std::vector<Tensor> inputs;
  inputs.push_back(x.clone());
  FailureOr<std::vector<Tensor>> out = (*compiled)->forward(inputs);
  std::vector<Tensor> cotangents;
  cotangents.push_back(dy.clone());
  auto grads = succeeded(out) ? (*compiled)->backward(cotangents)
                              : FailureOr<std::map<std::string, Tensor>>();
  if (failed(out) || failed(grads))
    return 1;

  bool ok = true;
  double worst = 0;
  for (const Answer &a : *megatron) {
    ok &= agree("hand-written Megatron output", a.out, want.out, worst);
    for (const auto &[name, g] : want.grads)
      ok &= agree("hand-written Megatron " + name + " gradient",
                  a.grads.at(name), g, worst);
  }
  ok &= agree("compiled engine output", (*out)[0], want.out, worst);
  for (const auto &[name, g] : want.grads)
    ok &= agree("compiled engine " + name + " gradient", grads->at(name), g,
                worst);
  llvm::outs() << llvm::format(
      "SingleDevice (1 thread), Megatron by hand (%lld threads) and the "
      "compiled engine (threads backend, %lld devices) agree: max_rel_err "
      "%.3g %s\n",
      (long long)kDevices, (long long)(*compiled)->numDevices(), worst,
      ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
}

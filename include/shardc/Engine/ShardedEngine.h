//===- ShardedEngine.h - the engine API over a compiled program -*- C++ -*-===//
//
// The engine API (docs/engine.md) is an abstract ShardedEngine whose
// subclasses write load_checkpoint, forward and backward by hand against
// collectives.
// This engine derives them instead: give it a global program (a mesh and a
// few sharding annotations), and it propagates, partitions and, for
// training, differentiates it once; then it runs the per-device programs on
// a backend (sim, threads or mpi) with the engine API's lifecycle:
//
//   engine API (Python)        here
//   load_checkpoint(params)    loadCheckpoint(std::map<name, full tensor>)
//   forward(x)                 forward({x})         -> full outputs
//   backward(grads)            backward({dy})       -> map<name, full grad>
//   inference_loop(in, out)    inferenceLoop(reader, writer)
//   (optimizer API)            trainStep(inputs, optimizer) -> loss
//
// Parameters live on their devices between calls, each device holding only
// its block; forward keeps the activations backward needs (the tape)
// on the devices too. Full tensors cross the API boundary only.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_ENGINE_SHARDEDENGINE_H
#define SHARDC_ENGINE_SHARDEDENGINE_H

#include "shardc/Runtime/MeshBackend.h"
#include "shardc/Runtime/MpiCommunicator.h"
#include "shardc/Runtime/SimulatedMesh.h"
#include "shardc/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace shardc {

/// Plain SGD (p -= lr * g) or Adam (Kingma & Ba, bias-corrected), compiled
/// into the training step by --shardc-training-step.
struct OptimizerOptions {
  enum class Kind { Sgd, Adam } kind = Kind::Sgd;
  /// An input of the step: may change from one trainStep to the next.
  float learningRate = 0.01f;
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;
  /// Mesh axes to split the optimizer state (and the update) over as well:
  /// ZeRO-1/2 on a data axis. Empty: the state is laid out like its
  /// parameter.
  std::vector<std::string> zeroAxes;
  /// "f32", "bf16-mixed" or "f16-mixed" (docs/precision.md).
  std::string precision = "f32";
  /// "none", "selective" or "full" (docs/recompute.md).
  std::string recompute = "none";
  /// For "full": the regex naming each layer's input ("": the pass's
  /// default, `^x0$|_res2$`).
  std::string layerInputs;
};

struct EngineOptions {
  BackendKind backend = BackendKind::Sim;
  /// For the sim backend.
  SimulationOptions simulation;
  /// Device threads' BLAS threads for the threads backend (0: cores /
  /// devices, at least 1).
  int blasThreadsPerDevice = 0;
  /// For the mpi backend: reductions, the abort policy and the liveness
  /// timeout (docs/mpi.md).
  MpiCommunicatorOptions mpi;
  /// The arguments that are parameters (set by loadCheckpoint, differentiated
  /// by backward). Empty: those marked `shardc.param` in the program.
  std::vector<std::string> parameters;
  /// Also build the backward program. Off for inference-only engines and
  /// for programs with ops that have no gradient rule.
  bool training = true;
  /// Choose every sharding the model does not annotate by cost
  /// (docs/auto-sharding.md, "Engine"): the whole step of
  /// `autoShardOptimizer` is planned when training (Adam's moments in the
  /// plan), the forward program otherwise, and the plan's argument and
  /// result layouts become the model's annotations.
  std::optional<ShardcAutoShardOptions> autoShard;
  /// The optimizer the engine will train with, whose step --auto-shard
  /// plans (trainStep may still be given another).
  OptimizerOptions autoShardOptimizer;
};

/// The --shardc-training-step options that compile `optimizer`'s step for the
/// parameters `params`: what trainStep runs, and what an unsharded
/// reference of the same steps must run.
ShardcTrainingStepOptions
getOptimizerPassOptions(const OptimizerOptions &optimizer,
                        llvm::ArrayRef<std::string> params);

/// What one device holds for training, in bytes: ZeRO's accounting. With
/// Adam in f32 it is 16 bytes per parameter the device holds (parameter,
/// gradient, two moments); docs/engine.md derives it.
struct DeviceMemory {
  int64_t parameters = 0;
  int64_t gradients = 0;      ///< as of the last trainStep/backward
  int64_t optimizerState = 0; ///< Adam's moments and powers (SGD: none)
  int64_t activations = 0;    ///< the tape kept from forward for backward
  int64_t total() const {
    return parameters + gradients + optimizerState + activations;
  }
};

class ShardedEngine {
public:
  ~ShardedEngine();
  ShardedEngine(const ShardedEngine &) = delete;
  ShardedEngine &operator=(const ShardedEngine &) = delete;

  /// Compiles `global` (one function, one mesh) for `options.backend`.
  /// Fails with diagnostics in `global`'s context.
  static mlir::FailureOr<std::unique_ptr<ShardedEngine>>
  compile(mlir::OwningOpRef<mlir::ModuleOp> global,
          const EngineOptions &options = {});

  //===--- the mesh (seed: device_id, num_devices) ------------------------===//
  int64_t numDevices() const;
  /// The devices this process drives (all of them, except under mpi).
  llvm::ArrayRef<int64_t> localDevices() const;
  MeshBackend &backend() { return *meshBackend; }

  //===--- The program's interface ----------------------------------------===//
  const std::vector<std::string> &parameterNames() const { return paramNames; }
  /// The non-parameter arguments, in order: forward's inputs.
  const std::vector<std::string> &inputNames() const { return inputNamesList; }
  const std::vector<std::string> &outputNames() const {
    return outputNamesList;
  }
  /// The programs as compiled (for printing and tests).
  mlir::ModuleOp program() { return *module; }

  //===--- The engine API's lifecycle -------------------------------------===//
  /// Shards every parameter to its devices. Every parameter must be given,
  /// with its global shape (or the shape checkpoints hold it in, its
  /// `shardc.checkpoint_shape`, in which parameters() and the gradients
  /// return it). Entries of the model's buffers (`shardc.buffers`, which a
  /// torch state_dict holds) are skipped; other unknown names are an error.
  mlir::LogicalResult
  loadCheckpoint(const std::map<std::string, Tensor> &params);
  /// The full parameters as the devices hold them now.
  mlir::FailureOr<std::map<std::string, Tensor>> parameters();

  /// Runs the forward pass on full inputs (one per inputNames()) and returns
  /// the full outputs. With training on, keeps what backward needs.
  mlir::FailureOr<std::vector<Tensor>> forward(llvm::ArrayRef<Tensor> inputs);
  /// Gradients of every parameter given one cotangent per output, for the
  /// last forward(). Each forward() allows one backward().
  mlir::FailureOr<std::map<std::string, Tensor>>
  backward(llvm::ArrayRef<Tensor> outputGrads);

  /// One optimizer step on a program whose first output is a scalar loss:
  /// the program of --shardc-training-step (forward, backward with d(loss) = 1,
  /// the update), compiled at the first call, runs on the devices with the
  /// parameters and the optimizer state as they hold them. Returns the loss
  /// before the update. Only the learning rate may differ between calls
  /// until the next loadCheckpoint, which resets the optimizer state.
  mlir::FailureOr<float> trainStep(llvm::ArrayRef<Tensor> inputs,
                                   const OptimizerOptions &optimizer);

  /// Per local device, what it holds now (the tape between a forward and
  /// its backward, the gradients of the last backward or step).
  std::vector<DeviceMemory> memoryPerDevice() const;

  /// forward() on each input the reader gives until it returns
  /// std::nullopt, each result handed to the writer; stops at the first
  /// failure of any of the three.
  using InputReader =
      std::function<mlir::FailureOr<std::optional<std::vector<Tensor>>>()>;
  using OutputWriter =
      std::function<mlir::LogicalResult(std::vector<Tensor> outputs)>;
  mlir::LogicalResult inferenceLoop(const InputReader &reader,
                                    const OutputWriter &writer);

  /// The compiled programs and device state (opaque).
  struct Impl;

private:
  explicit ShardedEngine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::unique_ptr<MeshBackend> meshBackend;
  std::vector<std::string> paramNames, inputNamesList, outputNamesList;
};

} // namespace shardc

#endif // SHARDC_ENGINE_SHARDEDENGINE_H

//===- ShardedEngine.cpp - the engine API over a compiled program ---------===//
//
// Compilation pins the program's interface first: propagation runs once on
// the global program and the shardings it gives every argument and result
// are written back as annotations. The inference program and the training
// program (autodiff, then the same propagation) are then partitioned from
// that pinned program, so both agree on where each parameter block lives
// and one set of device-resident parameters serves both.
//
//===----------------------------------------------------------------------===//

#include "shardc/Engine/ShardedEngine.h"

#include "EngineBackends.h"

#include "shardc/Dialect/FunctionInterface.h"
#include "shardc/Dialect/MeshLookup.h"
#include "shardc/Dialect/ShardcOps.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Runtime/TensorBlocks.h"
#include "shardc/Support/CheckpointEntries.h"
#include "shardc/Transforms/AutoShard.h"
#include "shardc/Transforms/Passes.h"
#include "shardc/Transforms/Pipelines.h"
#include "shardc/Transforms/SplitForwardBackward.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace shardc;

namespace {
/// What the engine knows of one global argument or result.
struct Slot {
  std::string name;
  SmallVector<int64_t> shape; ///< global
  ShardingAttr sharding;
  /// The shape checkpoints hold it in (getCheckpointShape): parameters are
  /// read, returned and differentiated in it.
  SmallVector<int64_t> checkpointShape;
  /// The element type the program takes (none for one it cannot run).
  std::optional<DType> dtype;
};
} // namespace

struct ShardedEngine::Impl {
  EngineOptions options;
  MeshOp mesh;
  std::optional<MeshTopology> topology;
  OwningOpRef<ModuleOp> trainModule;
  func::FuncOp inference;                   ///< partitioned forward
  func::FuncOp trainForward, trainBackward; ///< split partitioned VJP
  unsigned numResiduals = 0;

  std::vector<Slot> args, results;
  std::vector<unsigned> paramArgs, inputArgs; ///< global argument indices
  /// The model's recorded buffers: checkpoint entries loadCheckpoint skips.
  std::vector<std::string> bufferNames;
  /// Per parameter (in paramArgs order): the sharding of its gradient as
  /// the backward program returns it.
  std::vector<ShardingAttr> gradShardings;

  /// [local device][global argument]: parameters stay, inputs are replaced
  /// by each forward().
  DeviceTensors deviceArgs;
  bool paramsLoaded = false;
  /// [local device][residual]: the last training forward's activations.
  DeviceTensors tape;
  bool tapeValid = false;
  /// The pinned global program, kept to compile the training step from.
  OwningOpRef<ModuleOp> pinned;
  /// The partitioned training step (--shardc-training-step) and what it was
  /// compiled for.
  OwningOpRef<ModuleOp> stepModule;
  func::FuncOp step;
  std::optional<OptimizerOptions> stepOptions;
  /// Step argument index of each state input; step result index of each
  /// next parameter (in paramArgs order) and next state; gradient results.
  std::vector<unsigned> stateArgs, nextParamResults, nextStateResults,
      gradientResults;
  /// [local device][state]: the optimizer state between steps.
  DeviceTensors optimizerState;
  /// Bytes of each local device's gradients from the last backward.
  std::vector<int64_t> gradientBytes;
};

ShardedEngine::ShardedEngine(std::unique_ptr<Impl> impl)
    : impl(std::move(impl)) {}
ShardedEngine::~ShardedEngine() = default;

int64_t ShardedEngine::numDevices() const { return meshBackend->numDevices(); }
ArrayRef<int64_t> ShardedEngine::localDevices() const {
  return meshBackend->localDevices();
}

static LogicalResult
runPipeline(ModuleOp module, llvm::function_ref<void(OpPassManager &)> add) {
  PassManager pm(module->getContext(), ModuleOp::getOperationName());
  add(pm);
  return pm.run(module);
}

/// Copies the sharding propagation gives every argument and result of
/// `func` onto them as annotations.
static LogicalResult pinInterfaceShardings(ModuleOp module, func::FuncOp func) {
  OwningOpRef<ModuleOp> propagated = module.clone();
  if (failed(runPipeline(*propagated, [](OpPassManager &pm) {
        buildPropagatePipeline(pm);
      })))
    return failure();
  func::FuncOp done = getEntryFunction(*propagated);
  if (!done)
    return failure();
  copyInterfaceShardings(done, func);
  return success();
}

FailureOr<std::unique_ptr<ShardedEngine>>
ShardedEngine::compile(OwningOpRef<ModuleOp> global,
                       const EngineOptions &options) {
  if (!global)
    return failure();
  ModuleOp module = *global;
  func::FuncOp func = getEntryFunction(module);
  if (!func)
    return failure();
  if (func->hasAttr(ShardcDialect::getSpmdAttrName()))
    return func.emitError("the engine compiles the global program; this one "
                          "is already partitioned");
  size_t numMeshes;
  if (!getOnlyMesh(module, &numMeshes))
    return emitError(module.getLoc())
           << "the engine needs exactly one mesh, the model has " << numMeshes;

  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->bufferNames = getModelBufferNames(module);

  // Which arguments are parameters.
  llvm::StringMap<unsigned> argIndex;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    argIndex[getArgumentName(func, i)] = i;
  llvm::SmallBitVector isParam(func.getNumArguments());
  if (!options.parameters.empty()) {
    for (const std::string &name : options.parameters) {
      auto it = argIndex.find(name);
      if (it == argIndex.end())
        return func.emitError()
               << "parameter '" << name << "' is not an input of @"
               << func.getSymName();
      isParam.set(it->second);
    }
  } else {
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (func.getArgAttr(i, ShardcDialect::getParamAttrName()))
        isParam.set(i);
  }
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    (isParam.test(i) ? impl->paramArgs : impl->inputArgs).push_back(i);

  if (options.autoShard) {
    std::vector<std::string> names;
    for (unsigned i : impl->paramArgs)
      names.push_back(getArgumentName(func, i));
    ShardcTrainingStepOptions step =
        getOptimizerPassOptions(options.autoShardOptimizer, names);
    // The plan is chosen for the step without recompute: its copies are
    // laid out like their originals.
    step.recompute = "none";
    bool train = options.training && !names.empty();
    if (failed(pinAutoShardPlan(module, train ? &step : nullptr,
                                *options.autoShard)))
      return failure();
  }
  if (failed(pinInterfaceShardings(module, func)))
    return failure();
  impl->pinned = module.clone();

  // Training program first, from a copy of the pinned global one.
  std::vector<std::string> paramNames;
  for (unsigned i : impl->paramArgs)
    paramNames.push_back(getArgumentName(func, i));
  if (options.training && !paramNames.empty()) {
    // Propagate before differentiating, so that each cotangent is laid out
    // like its forward value (the autodiff pass copies the sharding); then
    // shard the whole VJP program.
    impl->trainModule = module.clone();
    ShardcAutodiffOptions autodiff;
    autodiff.wrt.assign(paramNames.begin(), paramNames.end());
    if (failed(runPipeline(*impl->trainModule, [&](OpPassManager &pm) {
          buildAutodiffPipeline(pm, autodiff, /*propagateFirst=*/true,
                                ShardingStage::Partition);
        })))
      return failure();
    func::FuncOp vjp = getEntryFunction(*impl->trainModule);
    FailureOr<ForwardBackwardSplit> split =
        splitForwardBackward(vjp, func.getNumArguments(), func.getNumResults(),
                             "forward", "backward");
    if (failed(split))
      return failure();
    impl->trainForward = split->forward;
    impl->trainBackward = split->backward;
    impl->numResiduals = split->numResiduals;
    vjp.erase();
    for (unsigned g = 0; g < impl->paramArgs.size(); ++g)
      impl->gradShardings.push_back(
          impl->trainBackward.getResultAttrOfType<ShardingAttr>(
              g, ShardcDialect::getShardingAttrName()));
  }

  // The inference program.
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    impl->args.push_back(
        {getArgumentName(func, i),
         llvm::to_vector(
             cast<RankedTensorType>(func.getArgumentTypes()[i]).getShape()),
         nullptr, getCheckpointShape(func, i),
         executableDType(cast<RankedTensorType>(func.getArgumentTypes()[i])
                             .getElementType())});
  std::vector<std::string> outputNames = getResultNames(func);
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    impl->results.push_back(
        {outputNames[i],
         llvm::to_vector(
             cast<RankedTensorType>(func.getResultTypes()[i]).getShape()),
         nullptr});
  if (failed(runPipeline(module, [](OpPassManager &pm) {
        buildPartitionPipeline(pm);
      })))
    return failure();
  impl->inference = getEntryFunction(module);
  impl->mesh = getOnlyMesh(module);
  StringRef key = ShardcDialect::getShardingAttrName();
  for (auto [i, slot] : llvm::enumerate(impl->args))
    slot.sharding = impl->inference.getArgAttrOfType<ShardingAttr>(i, key);
  for (auto [i, slot] : llvm::enumerate(impl->results))
    slot.sharding = impl->inference.getResultAttrOfType<ShardingAttr>(i, key);
  for (const Slot &slot : llvm::concat<const Slot>(impl->args, impl->results))
    if (!slot.sharding)
      return func.emitError()
             << "'" << slot.name << "' has no sharding after partitioning";
  FailureOr<MeshTopology> topology = getMeshTopology(impl->mesh);
  if (failed(topology))
    return failure();
  impl->topology = std::move(*topology);

  FailureOr<std::unique_ptr<MeshBackend>> backend =
      createEngineBackend(impl->mesh, options);
  if (failed(backend))
    return failure();

  auto engine =
      std::unique_ptr<ShardedEngine>(new ShardedEngine(std::move(impl)));
  engine->module = std::move(global);
  engine->meshBackend = std::move(*backend);
  for (unsigned i : engine->impl->paramArgs)
    engine->paramNames.push_back(engine->impl->args[i].name);
  for (unsigned i : engine->impl->inputArgs)
    engine->inputNamesList.push_back(engine->impl->args[i].name);
  engine->outputNamesList = std::move(outputNames);
  engine->impl->deviceArgs.resize(engine->localDevices().size());
  for (auto &perDevice : engine->impl->deviceArgs)
    perDevice.resize(engine->impl->args.size());
  return engine;
}

/// Each local device's block of `global`, laid out by `sharding`.
static LogicalResult
scatterToDevices(ShardedEngine &engine, const ShardedEngine::Impl &impl,
                 const Tensor &global, ShardingAttr sharding, StringRef name,
                 llvm::function_ref<void(size_t, Tensor)> place) {
  for (auto [local, device] : llvm::enumerate(engine.localDevices())) {
    llvm::Expected<Tensor> block =
        extractDeviceBlock(global, sharding, impl.mesh, *impl.topology, device);
    if (!block)
      return emitError(engine.program().getLoc())
             << "'" << name << "': " << llvm::toString(block.takeError());
    place(local, std::move(*block));
  }
  return success();
}

/// The full tensor from every device's block of one value.
static FailureOr<Tensor>
assembleFromDevices(ShardedEngine::Impl &impl, MeshBackend &backend,
                    std::vector<Tensor> localBlocks, ShardingAttr sharding,
                    ArrayRef<int64_t> shape, StringRef name) {
  FailureOr<std::vector<Tensor>> blocks =
      backend.gatherBlocks(std::move(localBlocks));
  if (failed(blocks))
    return failure();
  SmallVector<const Tensor *> pointers;
  for (const Tensor &t : *blocks)
    pointers.push_back(&t);
  std::string why;
  FailureOr<Tensor> global =
      assembleGlobal(pointers, sharding, impl.mesh, *impl.topology, shape, why);
  if (failed(global))
    return emitError(impl.mesh.getLoc()) << "'" << name << "': " << why;
  return global;
}

static LogicalResult checkShape(Location loc, StringRef what, StringRef name,
                                const Tensor &t, ArrayRef<int64_t> shape) {
  if (t.shape() == shape)
    return success();
  std::string want;
  llvm::raw_string_ostream os(want);
  os << "[";
  llvm::interleaveComma(shape, os);
  os << "]";
  return emitError(loc) << what << " '" << name << "' must have shape " << want
                        << ", got " << t.describe();
}

/// Element types are never converted: an integer array given for a float
/// parameter is a mistake far more often than an intent (a wrong entry, a
/// quantized weight that needs its scale), and converting silently would
/// hide it (docs/engine.md, docs/python.md).
static LogicalResult checkElementType(Location loc, StringRef what,
                                      StringRef name, const Tensor &t,
                                      std::optional<DType> dtype) {
  if (!dtype || t.dtype() == *dtype)
    return success();
  return emitError(loc) << what << " '" << name << "' holds "
                        << dtypeName(*dtype) << " elements, got "
                        << t.describe() << " (element types are not converted)";
}

/// `full` (a parameter or its gradient) in the shape checkpoints hold it in.
static LogicalResult toCheckpointShape(ShardedEngine &engine, const Slot &slot,
                                       Tensor &full) {
  if (llvm::Error e = full.reshape(slot.checkpointShape))
    return engine.program().emitError()
           << slot.name << ": " << llvm::toString(std::move(e));
  return success();
}

LogicalResult
ShardedEngine::loadCheckpoint(const std::map<std::string, Tensor> &params) {
  Location loc = impl->inference.getLoc();
  llvm::StringSet<> known, buffers;
  for (unsigned i : impl->paramArgs)
    known.insert(impl->args[i].name);
  // A buffer's entry (torch's state_dict has them) sets nothing: the
  // model holds it as a constant.
  for (const std::string &name : impl->bufferNames)
    buffers.insert(name);
  // Nor do a state_dict's integer buffers and a tied weight's other name.
  std::map<std::string, std::string> skipped = skippedCheckpointEntries(
      params, [&](StringRef name) { return known.contains(name); });
  for (const auto &[name, tensor] : params)
    if (!known.contains(name) && !buffers.contains(name) &&
        !skipped.count(name))
      return emitError(loc) << "checkpoint entry '" << name
                            << "' is not a parameter of the model";
  for (unsigned i : impl->paramArgs) {
    const Slot &slot = impl->args[i];
    auto it = params.find(slot.name);
    if (it == params.end())
      return emitError(loc)
             << "checkpoint has no entry for parameter '" << slot.name << "'";
    // In the checkpoint's shape, or in the model's view of it.
    if (it->second.shape() != ArrayRef<int64_t>(slot.shape) &&
        failed(checkShape(loc, "parameter", slot.name, it->second,
                          slot.checkpointShape)))
      return failure();
    if (failed(checkElementType(loc, "parameter", slot.name, it->second,
                                slot.dtype)))
      return failure();
  }
  for (unsigned i : impl->paramArgs) {
    const Slot &slot = impl->args[i];
    Tensor full = params.at(slot.name).clone();
    if (llvm::Error e = full.reshape(slot.shape))
      return emitError(loc)
             << slot.name << ": " << llvm::toString(std::move(e));
    if (failed(scatterToDevices(*this, *impl, full, slot.sharding, slot.name,
                                [&](size_t local, Tensor block) {
                                  impl->deviceArgs[local][i] = std::move(block);
                                })))
      return failure();
  }
  impl->paramsLoaded = true;
  impl->tapeValid = false;
  impl->optimizerState.clear();
  return success();
}

FailureOr<std::map<std::string, Tensor>> ShardedEngine::parameters() {
  if (!impl->paramsLoaded)
    return emitError(impl->inference.getLoc())
           << "no parameters: call loadCheckpoint first";
  std::map<std::string, Tensor> out;
  for (unsigned i : impl->paramArgs) {
    const Slot &slot = impl->args[i];
    std::vector<Tensor> blocks;
    for (auto &perDevice : impl->deviceArgs)
      blocks.push_back(perDevice[i].clone());
    FailureOr<Tensor> full =
        assembleFromDevices(*impl, *meshBackend, std::move(blocks),
                            slot.sharding, slot.shape, slot.name);
    if (failed(full) || failed(toCheckpointShape(*this, slot, *full)))
      return failure();
    out.emplace(slot.name, std::move(*full));
  }
  return out;
}

/// Checks `inputs` against the program and lays them out on the devices.
static LogicalResult placeInputs(ShardedEngine &engine,
                                 ShardedEngine::Impl &impl,
                                 ArrayRef<Tensor> inputs) {
  Location loc = impl.inference.getLoc();
  if (!impl.paramsLoaded && !impl.paramArgs.empty())
    return emitError(loc) << "no parameters: call loadCheckpoint first";
  if (inputs.size() != impl.inputArgs.size())
    return emitError(loc) << "the model takes " << impl.inputArgs.size()
                          << " inputs, got " << inputs.size();
  for (auto [k, i] : llvm::enumerate(impl.inputArgs))
    if (failed(checkShape(loc, "input", impl.args[i].name, inputs[k],
                          impl.args[i].shape)) ||
        failed(checkElementType(loc, "input", impl.args[i].name, inputs[k],
                                impl.args[i].dtype)))
      return failure();
  for (auto [k, i] : llvm::enumerate(impl.inputArgs))
    if (failed(scatterToDevices(engine, impl, inputs[k], impl.args[i].sharding,
                                impl.args[i].name,
                                [&](size_t local, Tensor block) {
                                  impl.deviceArgs[local][i] = std::move(block);
                                })))
      return failure();
  return success();
}

/// The full outputs from the first results of each device.
static FailureOr<std::vector<Tensor>>
assembleOutputs(ShardedEngine::Impl &impl, MeshBackend &backend,
                DeviceTensors &perDevice) {
  std::vector<Tensor> outputs;
  for (auto [r, slot] : llvm::enumerate(impl.results)) {
    std::vector<Tensor> blocks;
    for (auto &results : perDevice)
      blocks.push_back(std::move(results[r]));
    FailureOr<Tensor> full = assembleFromDevices(
        impl, backend, std::move(blocks), slot.sharding, slot.shape, slot.name);
    if (failed(full))
      return failure();
    outputs.push_back(std::move(*full));
  }
  return outputs;
}

FailureOr<std::vector<Tensor>> ShardedEngine::forward(ArrayRef<Tensor> inputs) {
  if (failed(placeInputs(*this, *impl, inputs)))
    return failure();
  bool training = static_cast<bool>(impl->trainForward);
  FailureOr<DeviceTensors> results = meshBackend->run(
      training ? impl->trainForward : impl->inference, impl->deviceArgs);
  if (failed(results))
    return failure();
  if (training) {
    impl->tape.clear();
    impl->tape.resize(results->size());
    for (auto [local, perDevice] : llvm::enumerate(*results))
      for (unsigned r = impl->results.size(); r < perDevice.size(); ++r)
        impl->tape[local].push_back(std::move(perDevice[r]));
    impl->tapeValid = true;
  }
  return assembleOutputs(*impl, *meshBackend, *results);
}

/// Runs the backward program on the tape and `outputGrads`; returns each
/// local device's gradient blocks, in parameter order.
static FailureOr<DeviceTensors> runBackward(ShardedEngine &engine,
                                            ShardedEngine::Impl &impl,
                                            MeshBackend &backend,
                                            ArrayRef<Tensor> outputGrads) {
  func::FuncOp bwd = impl.trainBackward;
  if (!bwd)
    return emitError(impl.inference.getLoc())
           << "this engine was compiled without training (no parameters, "
              "or EngineOptions::training is off)";
  if (!impl.tapeValid)
    return bwd.emitError("backward needs a forward first (each forward "
                         "allows one backward)");
  if (outputGrads.size() != impl.results.size())
    return bwd.emitError() << "backward takes one gradient per output ("
                           << impl.results.size() << "), got "
                           << outputGrads.size();
  for (auto [r, slot] : llvm::enumerate(impl.results))
    if (failed(checkShape(bwd.getLoc(), "gradient of output", slot.name,
                          outputGrads[r], slot.shape)))
      return failure();

  // backward(args..., residuals..., cotangents...): borrow the devices'
  // arguments and tape for the call and give them back after.
  size_t numArgs = impl.args.size();
  size_t firstCotangent = numArgs + impl.numResiduals;
  DeviceTensors callArgs(impl.deviceArgs.size());
  for (auto [local, perDevice] : llvm::enumerate(callArgs)) {
    for (Tensor &t : impl.deviceArgs[local])
      perDevice.push_back(std::move(t));
    for (Tensor &t : impl.tape[local])
      perDevice.push_back(std::move(t));
    perDevice.resize(firstCotangent + impl.results.size());
  }
  auto giveBack = [&] {
    for (auto [local, perDevice] : llvm::enumerate(callArgs)) {
      for (size_t i = 0; i < numArgs; ++i)
        impl.deviceArgs[local][i] = std::move(perDevice[i]);
      impl.tape[local].clear();
    }
    impl.tapeValid = false;
  };
  for (auto [r, slot] : llvm::enumerate(impl.results)) {
    auto sharding = bwd.getArgAttrOfType<ShardingAttr>(
        firstCotangent + r, ShardcDialect::getShardingAttrName());
    if (failed(scatterToDevices(
            engine, impl, outputGrads[r], sharding ? sharding : slot.sharding,
            slot.name + ".grad", [&](size_t local, Tensor block) {
              callArgs[local][firstCotangent + r] = std::move(block);
            }))) {
      giveBack();
      return failure();
    }
  }
  FailureOr<DeviceTensors> grads = backend.run(bwd, callArgs);
  giveBack();
  if (succeeded(grads)) {
    impl.gradientBytes.assign(grads->size(), 0);
    for (auto [local, perDevice] : llvm::enumerate(*grads))
      for (const Tensor &g : perDevice)
        impl.gradientBytes[local] += g.byteSize();
  }
  return grads;
}

FailureOr<std::map<std::string, Tensor>>
ShardedEngine::backward(ArrayRef<Tensor> outputGrads) {
  FailureOr<DeviceTensors> grads =
      runBackward(*this, *impl, *meshBackend, outputGrads);
  if (failed(grads))
    return failure();
  std::map<std::string, Tensor> out;
  for (auto [g, argIndex] : llvm::enumerate(impl->paramArgs)) {
    const Slot &slot = impl->args[argIndex];
    std::vector<Tensor> blocks;
    for (auto &perDevice : *grads)
      blocks.push_back(std::move(perDevice[g]));
    ShardingAttr sharding =
        impl->gradShardings[g] ? impl->gradShardings[g] : slot.sharding;
    FailureOr<Tensor> full =
        assembleFromDevices(*impl, *meshBackend, std::move(blocks), sharding,
                            slot.shape, slot.name + ".grad");
    if (failed(full) || failed(toCheckpointShape(*this, slot, *full)))
      return failure();
    out.emplace(slot.name, std::move(*full));
  }
  return out;
}

ShardcTrainingStepOptions
shardc::getOptimizerPassOptions(const OptimizerOptions &optimizer,
                                ArrayRef<std::string> params) {
  ShardcTrainingStepOptions options;
  options.optimizer =
      optimizer.kind == OptimizerOptions::Kind::Adam ? "adam" : "sgd";
  options.beta1 = optimizer.beta1;
  options.beta2 = optimizer.beta2;
  options.epsilon = optimizer.epsilon;
  options.params.assign(params.begin(), params.end());
  options.zeroAxes.assign(optimizer.zeroAxes.begin(), optimizer.zeroAxes.end());
  options.precision = optimizer.precision;
  options.recompute = optimizer.recompute;
  if (!optimizer.layerInputs.empty())
    options.layerInputs = optimizer.layerInputs;
  return options;
}

/// The optimizer settings that shape the compiled step (all but the
/// learning rate, an input).
static bool sameStepShape(const OptimizerOptions &a,
                          const OptimizerOptions &b) {
  return a.kind == b.kind && a.beta1 == b.beta1 && a.beta2 == b.beta2 &&
         a.epsilon == b.epsilon && a.zeroAxes == b.zeroAxes &&
         a.precision == b.precision && a.recompute == b.recompute &&
         a.layerInputs == b.layerInputs;
}

/// Compiles the training step for `optimizer` from the pinned program:
/// propagate, --shardc-training-step, propagate, partition, clean up.
static LogicalResult compileStep(ShardedEngine::Impl &impl,
                                 const OptimizerOptions &optimizer) {
  OwningOpRef<ModuleOp> module = impl.pinned->clone();
  std::vector<std::string> params;
  for (unsigned i : impl.paramArgs)
    params.push_back(impl.args[i].name);
  ShardcTrainingStepOptions options =
      getOptimizerPassOptions(optimizer, params);
  if (failed(runPipeline(*module, [&](OpPassManager &pm) {
        buildTrainPipeline(pm, options, /*propagateFirst=*/true,
                           ShardingStage::Partition);
      })))
    return failure();
  func::FuncOp step = getEntryFunction(*module);
  StringRef key = ShardcDialect::getShardingAttrName();

  // Map the step's interface onto the engine's by the names and roles the
  // training-step pass gives it.
  llvm::StringMap<unsigned> stepArg;
  for (unsigned i = 0; i < step.getNumArguments(); ++i)
    stepArg[getArgumentName(step, i)] = i;
  impl.stateArgs.clear();
  impl.nextParamResults.assign(impl.paramArgs.size(), ~0u);
  impl.nextStateResults.clear();
  impl.gradientResults.clear();
  for (unsigned i = 0; i < step.getNumArguments(); ++i)
    if (step.getArgAttr(i, ShardcDialect::getOptimizerStateAttrName()))
      impl.stateArgs.push_back(i);
  llvm::StringMap<unsigned> stateIndex, paramIndex;
  for (auto [k, i] : llvm::enumerate(impl.stateArgs))
    stateIndex[getArgumentName(step, i)] = k;
  for (auto [k, i] : llvm::enumerate(impl.paramArgs))
    paramIndex[impl.args[i].name] = k;
  impl.nextStateResults.assign(impl.stateArgs.size(), ~0u);
  for (unsigned r = 0; r < step.getNumResults(); ++r) {
    if (step.getResultAttr(r, ShardcDialect::getGradientOfAttrName()))
      impl.gradientResults.push_back(r);
    auto next = step.getResultAttrOfType<StringAttr>(
        r, ShardcDialect::getNextAttrName());
    if (!next)
      continue;
    if (auto it = paramIndex.find(next.getValue()); it != paramIndex.end())
      impl.nextParamResults[it->second] = r;
    else if (auto st = stateIndex.find(next.getValue()); st != stateIndex.end())
      impl.nextStateResults[st->second] = r;
  }
  // The step must read and write each argument where the devices hold it.
  for (unsigned i = 0; i < impl.args.size(); ++i)
    if (step.getArgAttr(i, key) != impl.inference.getArgAttr(i, key) ||
        getArgumentName(step, i) != impl.args[i].name)
      return step.emitError()
             << "internal error: the training step lays out input '"
             << impl.args[i].name << "' unlike the inference program";
  for (auto [k, r] : llvm::enumerate(impl.nextParamResults))
    if (r == ~0u ||
        step.getResultAttr(r, key) != step.getArgAttr(impl.paramArgs[k], key))
      return step.emitError()
             << "internal error: the training step does not return parameter '"
             << impl.args[impl.paramArgs[k]].name << "' in its own layout";
  for (auto [k, r] : llvm::enumerate(impl.nextStateResults))
    if (r == ~0u)
      return step.emitError()
             << "internal error: the training step does not "
                "return optimizer state '"
             << getArgumentName(step, impl.stateArgs[k]) << "'";
  impl.stepModule = std::move(module);
  impl.step = step;
  impl.stepOptions = optimizer;
  return success();
}

/// Each local device's initial optimizer state, in its local shapes.
static LogicalResult initializeState(ShardedEngine::Impl &impl) {
  impl.optimizerState.clear();
  impl.optimizerState.resize(impl.deviceArgs.size());
  for (auto &perDevice : impl.optimizerState)
    for (unsigned i : impl.stateArgs) {
      llvm::Expected<std::optional<Tensor>> t =
          initialOptimizerState(impl.step, i);
      if (!t)
        return impl.step.emitError()
               << "optimizer state '" << getArgumentName(impl.step, i)
               << "': " << llvm::toString(t.takeError());
      perDevice.push_back(std::move(**t));
    }
  return success();
}

FailureOr<float> ShardedEngine::trainStep(ArrayRef<Tensor> inputs,
                                          const OptimizerOptions &optimizer) {
  Location loc = impl->inference.getLoc();
  if (impl->results.empty() || !impl->results.front().shape.empty())
    return emitError(loc) << "trainStep needs a program whose first output "
                             "is the scalar loss";
  if (impl->paramArgs.empty())
    return emitError(loc) << "trainStep needs parameters to train";
  if (impl->stepOptions && !sameStepShape(*impl->stepOptions, optimizer)) {
    if (!impl->optimizerState.empty())
      return emitError(loc)
             << "trainStep: the optimizer settings changed (only the learning "
                "rate may change between steps); loadCheckpoint starts over";
    impl->stepOptions.reset();
  }
  if (!impl->stepOptions && failed(compileStep(*impl, optimizer)))
    return failure();
  if (failed(placeInputs(*this, *impl, inputs)))
    return failure();
  if (impl->optimizerState.empty() && failed(initializeState(*impl)))
    return failure();

  // step(args..., learning_rate, state...): borrow the devices' arguments
  // and state for the call; the inputs come back, the parameters and the
  // state are replaced by their next values.
  size_t numArgs = impl->args.size();
  DeviceTensors callArgs(impl->deviceArgs.size());
  for (auto [local, perDevice] : llvm::enumerate(callArgs)) {
    for (Tensor &t : impl->deviceArgs[local])
      perDevice.push_back(std::move(t));
    Tensor rate = llvm::cantFail(Tensor::allocate({})); // a scalar fits
    rate.data()[0] = optimizer.learningRate;
    perDevice.push_back(std::move(rate));
    for (Tensor &t : impl->optimizerState[local])
      perDevice.push_back(std::move(t));
  }
  FailureOr<DeviceTensors> results = meshBackend->run(impl->step, callArgs);
  for (auto [local, perDevice] : llvm::enumerate(callArgs)) {
    for (size_t i = 0; i < numArgs; ++i)
      impl->deviceArgs[local][i] = std::move(perDevice[i]);
    for (auto [k, i] : llvm::enumerate(impl->stateArgs))
      impl->optimizerState[local][k] = std::move(perDevice[i]);
  }
  impl->tapeValid = false;
  if (failed(results))
    return failure();

  std::vector<Tensor> lossBlocks;
  for (auto &perDevice : *results)
    lossBlocks.push_back(std::move(perDevice[0]));
  FailureOr<Tensor> loss = assembleFromDevices(
      *impl, *meshBackend, std::move(lossBlocks), impl->results[0].sharding,
      impl->results[0].shape, impl->results[0].name);
  if (failed(loss))
    return failure();
  impl->gradientBytes.assign(results->size(), 0);
  for (auto [local, perDevice] : llvm::enumerate(*results)) {
    for (auto [k, r] : llvm::enumerate(impl->nextParamResults))
      impl->deviceArgs[local][impl->paramArgs[k]] = std::move(perDevice[r]);
    for (auto [k, r] : llvm::enumerate(impl->nextStateResults))
      impl->optimizerState[local][k] = std::move(perDevice[r]);
    for (unsigned r : impl->gradientResults)
      impl->gradientBytes[local] += perDevice[r].byteSize();
  }
  return loss->data()[0];
}

LogicalResult ShardedEngine::inferenceLoop(const InputReader &reader,
                                           const OutputWriter &writer) {
  while (true) {
    FailureOr<std::optional<std::vector<Tensor>>> next = reader();
    if (failed(next))
      return failure();
    if (!*next)
      return success();
    if (failed(placeInputs(*this, *impl, **next)))
      return failure();
    FailureOr<DeviceTensors> results =
        meshBackend->run(impl->inference, impl->deviceArgs);
    if (failed(results))
      return failure();
    FailureOr<std::vector<Tensor>> outputs =
        assembleOutputs(*impl, *meshBackend, *results);
    if (failed(outputs) || failed(writer(std::move(*outputs))))
      return failure();
  }
}

std::vector<DeviceMemory> ShardedEngine::memoryPerDevice() const {
  std::vector<DeviceMemory> out(impl->deviceArgs.size());
  for (auto [local, memory] : llvm::enumerate(out)) {
    if (impl->paramsLoaded)
      for (unsigned i : impl->paramArgs)
        memory.parameters += impl->deviceArgs[local][i].byteSize();
    if (local < impl->gradientBytes.size())
      memory.gradients = impl->gradientBytes[local];
    if (local < impl->optimizerState.size())
      for (const Tensor &t : impl->optimizerState[local])
        memory.optimizerState += t.byteSize();
    if (impl->tapeValid)
      for (const Tensor &t : impl->tape[local])
        memory.activations += t.byteSize();
  }
  return out;
}

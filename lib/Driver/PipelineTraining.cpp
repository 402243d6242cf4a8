//===- PipelineTraining.cpp - pipelined training steps --------------------===//
//
// Plans the stage programs, feeds each device its arguments and runs the
// steps on a backend (shardc/Driver/PipelineTraining.h).
//
//===----------------------------------------------------------------------===//

#include "shardc/Driver/PipelineTraining.h"

#include "shardc/Dialect/ValueNames.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Runtime/TensorBlocks.h"

#include <chrono>

using namespace mlir;
using namespace shardc;

FailureOr<Tensor> shardc::initialStateOf(func::FuncOp fn, unsigned arg) {
  llvm::Expected<std::optional<Tensor>> state = initialOptimizerState(fn, arg);
  if (!state)
    return fn.emitError() << llvm::toString(state.takeError());
  if (!*state)
    return fn.emitError() << "argument #" << arg << " is no optimizer state";
  return std::move(**state);
}

void shardc::feedResultsBack(func::FuncOp fn, std::vector<Tensor> &args,
                             std::vector<Tensor> &results) {
  for (unsigned r = 0; r < fn.getNumResults(); ++r)
    if (auto name = fn.getResultAttrOfType<StringAttr>(
            r, ShardcDialect::getNextAttrName()))
      for (unsigned a = 0; a < fn.getNumArguments(); ++a)
        if (getArgumentName(fn, a) == name.getValue())
          args[a] = results[r].clone();
}

FailureOr<PipelineTrainingPlan>
shardc::planPipelineTraining(func::FuncOp func,
                             const PipelineTrainingOptions &options) {
  // The stage programs' own checks (optimizer, micro-batches, axis, ...)
  // are the builder's.
  if (options.steps < 1)
    return func.emitError() << "pipelined training needs at least 1 step";
  PipelineTrainingPlan plan;
  plan.func = func;
  // The reference runs on the model as given, before the stage programs
  // join the module; a second copy measures the reference's own
  // sensitivity to rounding.
  auto module = func->getParentOfType<ModuleOp>();
  plan.referenceModule = module.clone();
  plan.perturbedModule = module.clone();
  FailureOr<PipelineProgram> program =
      buildPipelineProgram(func, options.pipeline);
  if (failed(program))
    return failure();
  plan.program = std::move(*program);
  return plan;
}

FailureOr<Tensor> shardc::stageBlockOf(const PipelineProgram &program,
                                       int64_t device, const Tensor &global,
                                       ShardingAttr sharding) {
  if (!sharding)
    return global.clone();
  MeshOp mesh = program.mesh;
  FailureOr<MeshTopology> topology = getMeshTopology(mesh);
  if (failed(topology))
    return failure();
  llvm::Expected<Tensor> block =
      extractDeviceBlock(global, sharding, mesh, *topology, device);
  if (!block)
    return mesh.emitError()
           << "device " << device << ": " << llvm::toString(block.takeError());
  return std::move(*block);
}

namespace {

/// Device `device`'s arguments of its stage program for the first step:
/// its block of each input, the learning rate, and the optimizer state at
/// its initial value.
FailureOr<std::vector<Tensor>> argumentsOfDevice(const PipelineProgram &program,
                                                 ArrayRef<int64_t> stageOf,
                                                 int64_t device,
                                                 ArrayRef<Tensor> inputs,
                                                 double learningRate) {
  std::vector<Tensor> args;
  const PipelineStage &stage = program.stages[stageOf[device]];
  func::FuncOp fn = stage.program;
  for (auto [k, source] : llvm::enumerate(stage.argumentSources)) {
    if (source >= 0) {
      FailureOr<Tensor> block =
          stageBlockOf(program, device, inputs[source],
                       fn.getArgAttrOfType<ShardingAttr>(
                           k, ShardcDialect::getShardingAttrName()));
      if (failed(block))
        return failure();
      args.push_back(std::move(*block));
      continue;
    }
    if (source == -2) { // a device's block of a state is its initial value
      FailureOr<Tensor> state = initialStateOf(fn, k);
      if (failed(state))
        return failure();
      args.push_back(std::move(*state));
      continue;
    }
    Tensor lr = llvm::cantFail(Tensor::allocate({}));
    lr.values()[0] = float(learningRate);
    args.push_back(std::move(lr));
  }
  return args;
}

/// The steps on this process's rank of an mpirun job.
LogicalResult runStepsOnRank(const PipelineTrainingPlan &plan,
                             ArrayRef<Tensor> inputs,
                             const PipelineTrainingOptions &options,
                             PipelineTrainingRun &run) {
  FailureOr<std::unique_ptr<MpiBackend>> ranks =
      createMpiBackend(plan.program.mesh);
  if (failed(ranks))
    return failure();
  int64_t rank = (*ranks)->getCommunicator().deviceId();
  FailureOr<std::vector<Tensor>> args = argumentsOfDevice(
      plan.program, run.stageOf, rank, inputs, options.learningRate);
  if (failed(args))
    return failure();
  func::FuncOp rankProgram = plan.program.stages[run.stageOf[rank]].program;
  run.mpiBackend = std::move(*ranks);
  for (int64_t s = 0; s < options.steps; ++s) {
    FailureOr<std::vector<Tensor>> out = runPipelineOnRank(
        run.pipeline, *args, run.mpiBackend->getCommunicator());
    if (failed(out))
      return failure();
    run.results[rank] = std::move(*out);
    feedResultsBack(rankProgram, *args, run.results[rank]);
  }
  run.localDevices.push_back(rank);
  return success();
}

/// One step of every device on the simulator or on threads.
FailureOr<std::vector<std::vector<Tensor>>>
runOneStep(const PipelineTrainingOptions &options, PipelineTrainingRun &run,
           const std::vector<std::vector<Tensor>> &deviceArgs) {
  if (options.backend == BackendKind::Sim) {
    SimulationOptions sim;
    sim.machine = options.machine;
    std::vector<std::vector<Tensor>> stepArgs;
    for (const std::vector<Tensor> &device : deviceArgs) {
      stepArgs.emplace_back();
      for (const Tensor &t : device)
        stepArgs.back().push_back(t.clone());
    }
    // The report is the last step's.
    return simulatePipeline(run.pipeline, std::move(stepArgs), sim,
                            run.simulation);
  }
  ThreadsOptions threads;
  threads.timeoutSeconds = 600;
  return runPipelineOnThreads(run.pipeline, deviceArgs, threads);
}

/// The steps of every device in this process (sim or threads).
LogicalResult runStepsInProcess(const PipelineTrainingPlan &plan,
                                ArrayRef<Tensor> inputs,
                                const PipelineTrainingOptions &options,
                                PipelineTrainingRun &run) {
  int64_t numDevices = static_cast<int64_t>(run.stageOf.size());
  std::vector<std::vector<Tensor>> deviceArgs;
  for (int64_t d = 0; d < numDevices; ++d) {
    FailureOr<std::vector<Tensor>> args = argumentsOfDevice(
        plan.program, run.stageOf, d, inputs, options.learningRate);
    if (failed(args))
      return failure();
    deviceArgs.push_back(std::move(*args));
    run.localDevices.push_back(d);
  }
  if (options.backend == BackendKind::Threads)
    plan.func->getContext()->enableMultithreading();
  for (int64_t s = 0; s < options.steps; ++s) {
    auto start = std::chrono::steady_clock::now();
    FailureOr<std::vector<std::vector<Tensor>>> out =
        runOneStep(options, run, deviceArgs);
    if (failed(out))
      return failure();
    // The wall time is the last step's.
    run.wallSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    run.results = std::move(*out);
    for (int64_t d = 0; d < numDevices; ++d)
      feedResultsBack(plan.program.stages[run.stageOf[d]].program,
                      deviceArgs[d], run.results[d]);
  }
  return success();
}

} // namespace

FailureOr<PipelineTrainingRun>
shardc::runPipelineSteps(const PipelineTrainingPlan &plan,
                         ArrayRef<Tensor> inputs,
                         const PipelineTrainingOptions &options) {
  PipelineTrainingRun run;
  const PipelineProgram &program = plan.program;
  run.pipeline = PipelinePrograms{program.mesh, program.axis, {}};
  for (const PipelineStage &stage : program.stages)
    run.pipeline.programs.push_back(stage.program);
  FailureOr<std::vector<int64_t>> stageOf = stagesOfDevices(run.pipeline);
  if (failed(stageOf))
    return failure();
  run.stageOf = std::move(*stageOf);
  run.results.resize(run.stageOf.size());
  LogicalResult ran = options.backend == BackendKind::Mpi
                          ? runStepsOnRank(plan, inputs, options, run)
                          : runStepsInProcess(plan, inputs, options, run);
  if (failed(ran))
    return failure();
  return run;
}

FailureOr<PipelineTraining>
shardc::trainPipelined(PipelineTrainingPlan &plan, ArrayRef<Tensor> inputs,
                       const PipelineTrainingOptions &options,
                       llvm::function_ref<LogicalResult()> beforeRun) {
  PipelineTraining training;
  FailureOr<PipelineReference> reference =
      runPipelineReference(*plan.referenceModule, inputs, options);
  if (failed(reference))
    return failure();
  training.reference = std::move(*reference);
  if (beforeRun && failed(beforeRun()))
    return failure();
  FailureOr<PipelineTrainingRun> run = runPipelineSteps(plan, inputs, options);
  if (failed(run))
    return failure();
  training.run = std::move(*run);
  FailureOr<PipelineTrainingCheck> check = checkPipelineTraining(
      plan, training.run, training.reference, inputs, options);
  if (failed(check))
    return failure();
  if (options.backend == BackendKind::Mpi)
    check = gatherCheckFromEveryRank(*check);
  if (failed(check))
    return failure();
  training.check = std::move(*check);
  return training;
}

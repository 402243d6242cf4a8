//===- PipelineTrainedValues.cpp - whole values after pipelined steps -----===//
//
// A stage's devices hold the blocks of its parameters under the stage
// program's result shardings, over the mesh axes other than the stage axis;
// the devices of the other stages hold none. The whole value is assembled
// from one stage's devices, each standing in for the devices that differ
// from it only in the stage coordinate. Under mpi the blocks are first
// gathered onto every rank.
//
//===----------------------------------------------------------------------===//

#include "shardc/Driver/PipelineTraining.h"

#include "shardc/Dialect/ValueNames.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Runtime/TensorBlocks.h"

using namespace mlir;
using namespace shardc;

namespace {

/// Result `r` of stage `s`'s program by device: the stage's devices' values
/// (fetched from the other ranks under mpi, where the devices of other
/// stages send a placeholder), empty tensors elsewhere.
FailureOr<std::vector<Tensor>> blocksByDevice(const PipelineTrainingRun &run,
                                              int64_t s, unsigned r) {
  std::vector<Tensor> blocks(run.stageOf.size());
  if (!run.mpiBackend) {
    for (auto [d, stage] : llvm::enumerate(run.stageOf))
      if (stage == s)
        blocks[d] = run.results[d][r].clone();
    return blocks;
  }
  int64_t rank = run.localDevices.front();
  std::vector<Tensor> local;
  local.push_back(run.stageOf[rank] == s
                      ? run.results[rank][r].clone()
                      : llvm::cantFail(Tensor::allocate({})));
  return run.mpiBackend->gatherBlocks(std::move(local));
}

/// Result `r` of stage `s`'s program, whole, of shape `shape`.
FailureOr<Tensor> assembleResult(const PipelineTrainingPlan &plan,
                                 const PipelineTrainingRun &run,
                                 const MeshTopology &topology, int64_t s,
                                 unsigned r, ArrayRef<int64_t> shape) {
  const PipelineProgram &program = plan.program;
  func::FuncOp fn = program.stages[s].program;
  auto first = llvm::find(run.stageOf, s);
  if (first == run.stageOf.end())
    return fn.emitError() << "no device runs stage " << s;
  int64_t holder = first - run.stageOf.begin();
  FailureOr<std::vector<Tensor>> byDevice = blocksByDevice(run, s, r);
  if (failed(byDevice))
    return failure();
  auto sharding = fn.getResultAttrOfType<ShardingAttr>(
      r, ShardcDialect::getShardingAttrName());
  if (!sharding)
    return std::move((*byDevice)[holder]);
  int64_t stageAxis = topology.axisIndex(program.axis);
  int64_t stageCoordinate = topology.coordinates(holder)[stageAxis];
  std::vector<const Tensor *> blocks;
  for (int64_t d = 0; d < topology.numDevices(); ++d) {
    SmallVector<int64_t> coords = topology.coordinates(d);
    coords[stageAxis] = stageCoordinate;
    blocks.push_back(&(*byDevice)[topology.deviceId(coords)]);
  }
  std::string why;
  FailureOr<Tensor> whole =
      assembleGlobal(blocks, sharding, program.mesh, topology, shape, why);
  if (failed(whole))
    return fn.emitError() << "result #" << r << ": " << why;
  return whole;
}

} // namespace

FailureOr<PipelineTrainedValues>
shardc::assembleTrainedValues(const PipelineTrainingPlan &plan,
                              const PipelineTrainingRun &run) {
  const PipelineProgram &program = plan.program;
  func::FuncOp func = plan.func;
  FailureOr<MeshTopology> topology = getMeshTopology(program.mesh);
  if (failed(topology))
    return failure();
  PipelineTrainedValues values;
  // Every rank walks the same stages and results: under mpi each result is
  // one collective gather.
  for (auto [s, stage] : llvm::enumerate(program.stages))
    for (auto [r, param] : llvm::enumerate(stage.resultParams)) {
      if (param == -2)
        continue; // optimizer state
      auto type =
          cast<RankedTensorType>(param < 0 ? func.getResultTypes()[0]
                                           : func.getArgument(param).getType());
      FailureOr<Tensor> whole =
          assembleResult(plan, run, *topology, s, r, type.getShape());
      if (failed(whole))
        return failure();
      if (param < 0)
        values.loss = std::move(*whole);
      else
        values.parameters[getArgumentName(func, param)] = std::move(*whole);
    }
  return values;
}

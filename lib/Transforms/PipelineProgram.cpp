//===- PipelineProgram.cpp - one program per pipeline stage ---------------===//
//
// How the loss function becomes the stage programs (PipelineParallel.h):
//
//  1. The function is cloned at the micro-batch size: every non-parameter
//     argument's dim 0 is divided by m and the result types are inferred
//     again op by op (PipelineMicrobatch.h).
//  2. Each stage's ops become a function of their own, whose arguments are
//     the inputs it uses and the values it receives from earlier stages
//     and whose results are the values later stages use (and, on the last
//     stage, the loss). Constants and what is computed from them alone (a
//     causal mask) are recomputed by each stage that uses them rather than
//     sent.
//  3. That function is differentiated (the autodiff core, with respect to
//     the stage's parameters and what it received) and split into forward
//     and backward halves (SplitForwardBackward.h).
//  4. The stage program unrolls the schedule: for forward action Fj it
//     slices micro-batch j of its inputs, receives, inlines the forward
//     half and sends; for Bj it receives the cotangents of what it sent,
//     inlines the backward half with Fj's residuals, sends the gradients of
//     what it received back and adds its parameters' gradients to the
//     running sums; last, one optimizer step (PipelineUpdate.h).
//
// When the loss function states shardings, its stages are sharded over the
// other mesh axes (3D parallelism): the micro-batch function is propagated
// once, so that every value crossing stages has one sharding, and each
// stage's differentiated function is partitioned with those values pinned
// to it before step 3 (PipelineSharding.h). The stage programs then work on
// each device's blocks and hold the stage's collectives.
//
//===----------------------------------------------------------------------===//

#include "shardc/Transforms/PipelineParallel.h"

#include "PipelineMicrobatch.h"
#include "PipelineSharding.h"
#include "PipelineUpdate.h"

#include "shardc/Dialect/CostOpInterface.h"
#include "shardc/Dialect/MeshLookup.h"
#include "shardc/Dialect/ShardcOps.h"
#include "shardc/Dialect/TensorOpBuilders.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Transforms/Autodiff.h"
#include "shardc/Transforms/Recompute.h"
#include "shardc/Transforms/SplitForwardBackward.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Regex.h"

#include <functional>

using namespace mlir;
using namespace shardc;

namespace {

bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

int64_t byteSizeOf(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return tensor.getNumElements() *
         std::max<int64_t>(1, tensor.getElementTypeBitWidth() / 8);
}

/// A value computed by one stage and used by later ones.
struct Boundary {
  Value value;
  int64_t from;
  /// The stages using it, ascending.
  SmallVector<int64_t> to;
};

/// Records what a builder creates, so that an action's ops can be tagged.
struct CreatedOps : OpBuilder::Listener {
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    ops.push_back(op);
  }
  std::vector<Operation *> ops;
};

/// What one stage's forward and backward halves take and give.
struct StageHalves {
  func::FuncOp forward, backward;
  /// Arguments of the halves' primal part: loss-function argument indices,
  /// then the received boundaries (indices into `boundaries`).
  SmallVector<unsigned> usedArgs;
  SmallVector<unsigned> received;
  /// Boundaries this stage sends (indices into `boundaries`).
  SmallVector<unsigned> sent;
  /// Which primal arguments are differentiated, in gradient order.
  SmallVector<unsigned> wrt;
  unsigned numResiduals = 0;
  /// Per used argument: its type in the stage program (a device's block of
  /// the whole batch) and, when the stage is sharded, its sharding.
  SmallVector<Type> stageArgTypes;
  SmallVector<ShardingAttr> argShardings;
};

class PipelineBuilder {
public:
  PipelineBuilder(func::FuncOp func, const PipelineOptions &options,
                  PipelineProgram &program)
      : func(func), options(options), program(program),
        builder(func.getContext()) {}

  LogicalResult run();

private:
  LogicalResult checkFunction();
  LogicalResult checkRecompute();
  void findBoundaries(func::FuncOp micro);
  FailureOr<StageHalves> buildHalves(func::FuncOp micro, int64_t stage);
  LogicalResult recomputeStage(func::FuncOp fn, const StageHalves &halves,
                               unsigned numOutputs);
  LogicalResult assemble(int64_t stage, const StageHalves &halves);

  func::FuncOp func;
  const PipelineOptions &options;
  PipelineProgram &program;
  OpBuilder builder;
  SmallVector<unsigned> params;
  llvm::DenseSet<unsigned> isParam;
  std::vector<Boundary> boundaries;
  /// Stage of each op of the micro-batch function.
  llvm::DenseMap<Operation *, int64_t> stageOf;
  /// Its values computed from no argument, recomputed where used.
  llvm::DenseSet<Value> argumentFree;
  /// Functions to erase once the stage programs exist.
  SmallVector<func::FuncOp> scratch;
  /// Whether the stages are sharded over the other mesh axes.
  bool sharded = false;
};

} // namespace

LogicalResult PipelineBuilder::checkFunction() {
  StringRef optimizer = options.optimizer.optimizer;
  if (optimizer != "sgd" && optimizer != "adam")
    return func.emitError()
           << "unknown optimizer '" << optimizer << "' (expected sgd or adam)";
  if (options.microbatches < 0)
    return func.emitError() << "micro-batches must be at least 1";
  if (!isRunnableSchedule(options.schedule))
    return func.emitError()
           << "the " << stringifyPipelineSchedule(options.schedule)
           << " schedule is priced by `shardc estimate` only; pipelined "
              "programs run gpipe or 1f1b";
  if (!func.getBody().hasOneBlock())
    return func.emitError("pipelining needs a function with a single block");
  if (func->hasAttr(ShardcDialect::getSpmdAttrName()))
    return func.emitError() << "cannot pipeline @" << func.getSymName()
                            << ": it is already partitioned (shardc.spmd); "
                               "pipeline the global program";
  if (func.getNumResults() == 0 ||
      cast<RankedTensorType>(func.getResultTypes()[0]).getRank() != 0 ||
      !isFloatTensor(func.getResultTypes()[0]))
    return func.emitError() << "pipelining trains a function whose first "
                               "result is the scalar float loss; @"
                            << func.getSymName() << " has none";
  FailureOr<MeshOp> mesh = getFunctionMesh(func);
  if (failed(mesh))
    return failure();
  program.mesh = *mesh;
  int64_t size = program.mesh.getAxisSize(options.axis);
  if (size < 0)
    return program.mesh.emitError()
           << "the pipeline axis \"" << options.axis << "\" is not an axis of @"
           << program.mesh.getSymName() << " (axes "
           << program.mesh.getAxisNames() << ")";
  program.axis = options.axis;
  program.numStages = size;
  program.numMicrobatches =
      options.microbatches > 0 ? options.microbatches : size;
  program.schedule = options.schedule;

  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (func.getArgAttr(i, ShardcDialect::getParamAttrName())) {
      if (!isFloatTensor(func.getArgumentTypes()[i]))
        return func.emitError() << "parameter '" << getArgumentName(func, i)
                                << "' is not a float tensor";
      params.push_back(i);
      isParam.insert(i);
      continue;
    }
    auto type = cast<RankedTensorType>(func.getArgumentTypes()[i]);
    if (type.getRank() == 0 || type.getDimSize(0) % program.numMicrobatches)
      return func.emitError()
             << "input '" << getArgumentName(func, i) << "' (" << type
             << ") cannot be split into " << program.numMicrobatches
             << " micro-batches along dim 0";
  }
  if (params.empty())
    return func.emitError()
           << "pipelining trains parameters: mark inputs of @"
           << func.getSymName() << " as parameters (\"param\": true)";
  for (Operation &op : func.getBody().front().without_terminator())
    if (op.getNumResults() != 1)
      return op.emitError("pipelining expects ops with one result");
  return checkRecompute();
}

LogicalResult PipelineBuilder::checkRecompute() {
  const ShardcTrainingStepOptions &step = options.optimizer;
  StringRef mode = step.recompute;
  if (mode != "none" && mode != "selective" && mode != "full")
    return func.emitError() << "unknown recompute mode '" << mode
                            << "' (expected none, selective or full)";
  llvm::Regex layerInputs(step.layerInputs);
  std::string why;
  if (!layerInputs.isValid(why))
    return func.emitError() << "the layer-input pattern \"" << step.layerInputs
                            << "\" is no regex: " << why;
  if (mode != "full")
    return success();
  // Each stage is recomputed on its own and may hold no layer input; the
  // model must have one (as a whole step's recompute requires).
  for (Operation &op : func.getBody().front().without_terminator())
    if (layerInputs.match(getSourceName(op.getResult(0))))
      return success();
  return func.emitError()
         << "full recompute needs the layers' inputs: no value's name "
            "matches the layer-input pattern \""
         << step.layerInputs << "\"";
}

void PipelineBuilder::findBoundaries(func::FuncOp micro) {
  argumentFree = findArgumentFreeValues(micro);
  for (Operation &op : micro.getBody().front().without_terminator()) {
    // A constant, or a mask built from iotas, is recomputed where needed.
    if (argumentFree.contains(op.getResult(0)))
      continue;
    Value v = op.getResult(0);
    Boundary b{v, stageOf.lookup(&op), {}};
    for (Operation *user : v.getUsers())
      if (!isa<func::ReturnOp>(user) && stageOf.lookup(user) > b.from &&
          !llvm::is_contained(b.to, stageOf.lookup(user)))
        b.to.push_back(stageOf.lookup(user));
    llvm::sort(b.to);
    if (!b.to.empty())
      boundaries.push_back(std::move(b));
  }
}

LogicalResult PipelineBuilder::recomputeStage(func::FuncOp fn,
                                              const StageHalves &halves,
                                              unsigned numOutputs) {
  const ShardcTrainingStepOptions &step = options.optimizer;
  RecomputeRequest request;
  request.mode = step.recompute;
  request.layerInputs = step.layerInputs;
  // The forward pass is what the stage sends on and its loss.
  request.forwardResults = numOutputs;
  // A stage may hold no layer input; checkFunction found one in the model.
  request.requireLayerInput = false;
  // What a stage receives it keeps for its backward action, and what it
  // sends ends its part of a layer: a layer the stage boundary cuts is
  // recomputed on each side from what that side keeps.
  request.entryIsLayerInput = !halves.received.empty();
  request.exitIsLayerInput = !halves.sent.empty();
  return recomputeActivations(fn, request);
}

FailureOr<StageHalves> PipelineBuilder::buildHalves(func::FuncOp micro,
                                                    int64_t stage) {
  MLIRContext *ctx = micro.getContext();
  Block &body = micro.getBody().front();
  bool last = stage == program.numStages - 1;
  StageHalves halves;
  llvm::DenseSet<unsigned> used;
  for (Operation &op : body.without_terminator())
    if (stageOf.lookup(&op) == stage)
      for (Value v : op.getOperands())
        if (auto arg = dyn_cast<BlockArgument>(v))
          used.insert(arg.getArgNumber());
  for (unsigned i = 0; i < micro.getNumArguments(); ++i)
    if (used.contains(i))
      halves.usedArgs.push_back(i);
  for (auto [i, b] : llvm::enumerate(boundaries)) {
    if (llvm::is_contained(b.to, stage)) {
      if (!isFloatTensor(b.value.getType()))
        return b.value.getDefiningOp()->emitError()
               << describeValue(b.value) << " (" << b.value.getType()
               << ") is computed by pipeline stage " << b.from
               << " and used by stage " << stage
               << "; only float values cross stages";
      halves.received.push_back(i);
    }
    if (b.from == stage)
      halves.sent.push_back(i);
  }

  // @stage<k>(used args, received, cotangents) -> (sent, [loss]).
  SmallVector<Type> argTypes, resultTypes;
  for (unsigned i : halves.usedArgs)
    argTypes.push_back(micro.getArgumentTypes()[i]);
  for (unsigned b : halves.received)
    argTypes.push_back(boundaries[b].value.getType());
  for (unsigned b : halves.sent)
    resultTypes.push_back(boundaries[b].value.getType());
  Value loss = body.getTerminator()->getOperand(0);
  if (last)
    resultTypes.push_back(loss.getType());
  unsigned numPrimal = argTypes.size(), numOutputs = resultTypes.size();
  argTypes.append(resultTypes.begin(), resultTypes.end());

  builder.setInsertionPointAfter(micro);
  auto fn =
      func::FuncOp::create(builder, micro.getLoc(),
                           (micro.getSymName() + ".stage" + Twine(stage)).str(),
                           FunctionType::get(ctx, argTypes, resultTypes));
  scratch.push_back(fn);
  Block *entry = fn.addEntryBlock();
  auto nameArg = [&](unsigned i, StringRef name) {
    fn.setArgAttr(i, ShardcDialect::getNameAttrName(),
                  StringAttr::get(ctx, name));
  };
  IRMapping map;
  for (auto [k, i] : llvm::enumerate(halves.usedArgs)) {
    map.map(body.getArgument(i), entry->getArgument(k));
    nameArg(k, getArgumentName(micro, i));
    if (isParam.contains(i)) {
      fn.setArgAttr(k, ShardcDialect::getParamAttrName(), UnitAttr::get(ctx));
      halves.wrt.push_back(k);
    }
  }
  for (auto [k, b] : llvm::enumerate(halves.received)) {
    unsigned index = halves.usedArgs.size() + k;
    map.map(boundaries[b].value, entry->getArgument(index));
    nameArg(index, describeValue(boundaries[b].value));
    halves.wrt.push_back(index);
  }
  for (unsigned k = 0; k < numOutputs; ++k)
    nameArg(numPrimal + k, "cotangent" + std::to_string(k));

  OpBuilder b = OpBuilder::atBlockEnd(entry);
  // An argument-free value is built, with what it is built from, where the
  // stage first uses it.
  std::function<void(Value)> recompute = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (!def || map.contains(v) || !argumentFree.contains(v))
      return;
    for (Value operand : def->getOperands())
      recompute(operand);
    b.clone(*def, map)->removeAttr(ShardcDialect::getStageAttrName());
  };
  for (Operation &op : body.without_terminator()) {
    if (stageOf.lookup(&op) != stage || argumentFree.contains(op.getResult(0)))
      continue;
    for (Value v : op.getOperands())
      recompute(v);
    Operation *clone = b.clone(op, map);
    clone->removeAttr(ShardcDialect::getStageAttrName());
  }
  SmallVector<Value> results;
  for (unsigned s : halves.sent)
    results.push_back(map.lookup(boundaries[s].value));
  if (last)
    results.push_back(map.lookup(loss));
  auto ret = func::ReturnOp::create(b, micro.getLoc(), results);

  if (failed(checkDifferentiable(fn)))
    return failure();
  SmallVector<Value> seeds;
  for (unsigned k = 0; k < numOutputs; ++k)
    seeds.push_back(entry->getArgument(numPrimal + k));
  FailureOr<SmallVector<Value>> gradients =
      buildGradients(fn, halves.wrt, seeds);
  if (failed(gradients))
    return failure();
  results.append(gradients->begin(), gradients->end());
  ret->setOperands(results);
  SmallVector<Type> allResults;
  for (Value v : results)
    allResults.push_back(v.getType());
  fn.setFunctionType(FunctionType::get(ctx, argTypes, allResults));
  if (sharded) {
    // What crosses stages keeps the sharding the whole function gave it,
    // its cotangent and gradient too, so both ends hold the same block.
    SmallVector<ShardingAttr> argShardings, outputShardings;
    for (unsigned i : halves.usedArgs)
      argShardings.push_back(getStatedSharding(body.getArgument(i)));
    for (unsigned r : halves.received)
      argShardings.push_back(getStatedSharding(boundaries[r].value));
    for (unsigned s : halves.sent)
      outputShardings.push_back(getStatedSharding(boundaries[s].value));
    if (last)
      outputShardings.push_back(getStatedSharding(loss));
    SmallVector<ShardingAttr> resultShardings(outputShardings);
    for (unsigned k : halves.wrt)
      resultShardings.push_back(argShardings[k]);
    argShardings.append(outputShardings);
    if (failed(partitionStageFunction(fn, program.mesh, argShardings,
                                      resultShardings)))
      return failure();
  }
  for (auto [k, i] : llvm::enumerate(halves.usedArgs)) {
    auto type = cast<RankedTensorType>(fn.getArgumentTypes()[k]);
    SmallVector<int64_t> shape(type.getShape());
    if (!isParam.contains(i))
      shape[0] *= program.numMicrobatches;
    halves.stageArgTypes.push_back(type.clone(shape));
    halves.argShardings.push_back(fn.getArgAttrOfType<ShardingAttr>(
        k, ShardcDialect::getShardingAttrName()));
  }

  // Recompute rewrites the stage's differentiated function as it does a
  // whole step, after partitioning (whose cleanup would merge the copies
  // back): the copies read only the stage's kept values, so the split
  // below puts them in the backward half and the residuals shrink.
  if (failed(recomputeStage(fn, halves, numOutputs)))
    return failure();

  std::string name = fn.getSymName().str();
  FailureOr<ForwardBackwardSplit> split = splitForwardBackward(
      fn, numPrimal, numOutputs, name + ".forward", name + ".backward");
  if (failed(split))
    return failure();
  halves.forward = split->forward;
  halves.backward = split->backward;
  halves.numResiduals = split->numResiduals;
  scratch.push_back(split->forward);
  scratch.push_back(split->backward);

  PipelineStage &info = program.stages[stage];
  for (Operation &op : halves.forward.getBody().front())
    info.forwardFlops += getOpFlops(&op);
  for (Operation &op : halves.backward.getBody().front())
    info.backwardFlops += getOpFlops(&op);
  // What a micro-batch in flight holds: the backward's non-parameter
  // primal inputs (micro-batch slices, received activations) and the
  // residuals, where the backward uses them.
  Block &backward = halves.backward.getBody().front();
  for (unsigned i = 0; i < numPrimal + halves.numResiduals; ++i) {
    BlockArgument arg = backward.getArgument(i);
    bool param =
        i < halves.usedArgs.size() && isParam.contains(halves.usedArgs[i]);
    if (!param && !arg.use_empty())
      info.activationBytesPerMicrobatch += byteSizeOf(arg.getType());
  }
  return halves;
}

/// Clones the body of `fn` with its arguments bound to `args`; returns the
/// returned values.
static SmallVector<Value> inlineBody(OpBuilder &b, func::FuncOp fn,
                                     ValueRange args) {
  IRMapping map;
  Block &body = fn.getBody().front();
  map.map(body.getArguments(), args);
  for (Operation &op : body.without_terminator())
    b.clone(op, map);
  SmallVector<Value> out;
  for (Value v : body.getTerminator()->getOperands())
    out.push_back(map.lookupOrDefault(v));
  return out;
}

LogicalResult PipelineBuilder::assemble(int64_t stage,
                                        const StageHalves &halves) {
  MLIRContext *ctx = func.getContext();
  PipelineStage &info = program.stages[stage];
  bool last = stage == program.numStages - 1;
  int64_t m = program.numMicrobatches;
  Location loc = func.getLoc();
  auto meshRef = FlatSymbolRefAttr::get(program.mesh.getSymNameAttr());
  auto axis = StringAttr::get(ctx, program.axis);
  auto i64 = [&](int64_t v) {
    return IntegerAttr::get(IntegerType::get(ctx, 64), v);
  };

  // @pipeline_stage<k>(used args at full size, learning_rate, state)
  //     -> ([loss], next params, next state).
  SmallVector<unsigned> stageParams;
  SmallVector<Type> paramTypes;
  SmallVector<std::string> paramNames;
  for (auto [k, i] : llvm::enumerate(halves.usedArgs))
    if (isParam.contains(i)) {
      stageParams.push_back(k);
      paramTypes.push_back(halves.stageArgTypes[k]);
      paramNames.push_back(getArgumentName(func, i));
    }
  FailureOr<OwningOpRef<ModuleOp>> update = buildOptimizerStep(
      func.getLoc(), program.mesh, paramTypes, paramNames, options.optimizer);
  if (failed(update))
    return failure();
  auto step = cast<func::FuncOp>((*update)->getBody()->back());
  size_t numParams = stageParams.size();
  unsigned firstState = 2 * numParams + 1;
  unsigned numState = step.getNumArguments() - firstState;

  SmallVector<Type> argTypes;
  for (auto [k, i] : llvm::enumerate(halves.usedArgs)) {
    argTypes.push_back(halves.stageArgTypes[k]);
    info.argumentSources.push_back(i);
  }
  auto scalar = RankedTensorType::get({}, builder.getF32Type());
  argTypes.push_back(scalar);
  info.argumentSources.push_back(-1);
  for (unsigned s = 0; s < numState; ++s) {
    argTypes.push_back(step.getArgumentTypes()[firstState + s]);
    info.argumentSources.push_back(-2);
  }
  SmallVector<Type> resultTypes;
  if (last) {
    resultTypes.push_back(func.getResultTypes()[0]);
    info.resultParams.push_back(-1);
  }
  for (auto [k, type] : llvm::enumerate(paramTypes)) {
    resultTypes.push_back(type);
    info.resultParams.push_back(halves.usedArgs[stageParams[k]]);
  }
  for (unsigned s = 0; s < numState; ++s) {
    resultTypes.push_back(step.getArgumentTypes()[firstState + s]);
    info.resultParams.push_back(-2);
  }

  builder.setInsertionPointToEnd(func->getParentOfType<ModuleOp>().getBody());
  auto fn = func::FuncOp::create(builder, loc,
                                 ("pipeline_stage" + Twine(stage)).str(),
                                 FunctionType::get(ctx, argTypes, resultTypes));
  fn->setAttr(ShardcDialect::getSpmdAttrName(), UnitAttr::get(ctx));
  fn->setAttr(ShardcDialect::getStageAttrName(), i64(stage));
  Block *entry = fn.addEntryBlock();
  for (auto [k, i] : llvm::enumerate(halves.usedArgs)) {
    fn.setArgAttr(k, ShardcDialect::getNameAttrName(),
                  StringAttr::get(ctx, getArgumentName(func, i)));
    if (isParam.contains(i))
      fn.setArgAttr(k, ShardcDialect::getParamAttrName(), UnitAttr::get(ctx));
    // The global layout the device's block is a piece of (as in any SPMD
    // function), for whoever hands the blocks out.
    if (ShardingAttr sharding = halves.argShardings[k])
      fn.setArgAttr(k, ShardcDialect::getShardingAttrName(), sharding);
  }
  fn.setArgAttr(halves.usedArgs.size(), ShardcDialect::getNameAttrName(),
                StringAttr::get(ctx, "learning_rate"));
  for (unsigned s = 0; s < numState; ++s) {
    fn.setArgAttrs(halves.usedArgs.size() + 1 + s,
                   step.getArgAttrDict(firstState + s));
    fn.setResultAttrs(
        resultTypes.size() - numState + s,
        step.getResultAttrDict(step.getNumResults() - numState + s));
  }
  for (auto [r, p] : llvm::enumerate(info.resultParams)) {
    if (p < 0)
      continue;
    fn.setResultAttr(r, ShardcDialect::getNextAttrName(),
                     StringAttr::get(ctx, getArgumentName(func, p)));
    unsigned k =
        llvm::find(halves.usedArgs, unsigned(p)) - halves.usedArgs.begin();
    if (ShardingAttr sharding = halves.argShardings[k])
      fn.setResultAttr(r, ShardcDialect::getShardingAttrName(), sharding);
  }

  CreatedOps created;
  OpBuilder b = OpBuilder::atBlockEnd(entry);
  b.setListener(&created);
  auto tag = [&](StringRef action) {
    for (Operation *op : created.ops)
      op->setAttr(ShardcDialect::getPipelineActionAttrName(),
                  StringAttr::get(ctx, action));
    created.ops.clear();
  };

  // Per micro-batch: the forward half's primal arguments and residuals.
  std::vector<SmallVector<Value>> primals(m), residuals(m);
  SmallVector<Value> losses;
  SmallVector<Value> gradientSums(stageParams.size());
  // Per parameter: the all_reduce its summed gradient still needs (a
  // detached template), if any.
  SmallVector<Operation *> deferredReductions(stageParams.size(), nullptr);
  unsigned numSent = halves.sent.size();
  func::FuncOp forward = halves.forward; // a handle; its getters are not const
  for (const PipelineAction &action : program.actions[stage]) {
    int64_t j = action.microbatch;
    if (action.phase == PipelineAction::Forward) {
      SmallVector<Value> args;
      for (auto [k, i] : llvm::enumerate(halves.usedArgs)) {
        Value whole = entry->getArgument(k);
        if (isParam.contains(i)) {
          args.push_back(whole);
          continue;
        }
        auto type = cast<RankedTensorType>(whole.getType());
        SmallVector<int64_t> start(type.getRank(), 0), limit(type.getShape());
        int64_t rows = type.getDimSize(0) / m;
        start[0] = j * rows;
        limit[0] = (j + 1) * rows;
        args.push_back(buildSlice(b, loc, whole, start, limit));
      }
      // The halves' types are a device's blocks.
      for (auto [k, r] : llvm::enumerate(halves.received))
        args.push_back(RecvOp::create(
            b, loc, forward.getArgumentTypes()[halves.usedArgs.size() + k],
            meshRef, axis, i64(boundaries[r].from)));
      SmallVector<Value> out = inlineBody(b, halves.forward, args);
      for (auto [k, s] : llvm::enumerate(halves.sent))
        for (int64_t to : boundaries[s].to)
          SendOp::create(b, loc, out[k], meshRef, axis, i64(to));
      if (last)
        losses.push_back(out[numSent]);
      primals[j] = std::move(args);
      residuals[j].assign(out.begin() + numSent + (last ? 1 : 0), out.end());
    } else {
      // Cotangents of what this stage sent, summed over the stages that
      // used it; the loss's is 1 (the step's loss is the micro-batches'
      // sum).
      SmallVector<Value> args(primals[j]);
      args.append(residuals[j]);
      for (auto [k, s] : llvm::enumerate(halves.sent)) {
        Value sum;
        for (int64_t from : boundaries[s].to) {
          Value c = RecvOp::create(b, loc, forward.getResultTypes()[k], meshRef,
                                   axis, i64(from));
          sum = sum ? buildAdd(b, loc, sum, c) : c;
        }
        args.push_back(sum);
      }
      if (last)
        args.push_back(buildSplatConstant(b, loc, scalar, 1.0));
      SmallVector<Value> grads = inlineBody(b, halves.backward, args);
      for (auto [k, r] : llvm::enumerate(halves.received))
        SendOp::create(b, loc, grads[stageParams.size() + k], meshRef, axis,
                       i64(boundaries[r].from));
      for (auto [k, g] :
           llvm::enumerate(ArrayRef(grads).take_front(stageParams.size()))) {
        // A gradient the backward half all-reduces (over the data axes) is
        // summed unreduced: one all_reduce of the sum after the last
        // micro-batch replaces one per micro-batch (the sum is linear).
        Value summand = g;
        if (auto reduce = g.getDefiningOp<AllReduceOp>();
            reduce && g.use_empty() &&
            cast<CollectiveOpInterface>(*reduce).getCollectiveReduction() ==
                ReductionKind::Sum) {
          summand = reduce.getOperand();
          if (!deferredReductions[k])
            deferredReductions[k] = reduce->clone();
          llvm::erase(created.ops, reduce.getOperation());
          reduce.erase();
        }
        gradientSums[k] = gradientSums[k]
                              ? buildAdd(b, loc, gradientSums[k], summand)
                              : summand;
      }
    }
    tag(action.str());
  }

  SmallVector<Value> results;
  if (last) {
    Value sum = losses.front();
    for (Value l : ArrayRef(losses).drop_front())
      sum = buildAdd(b, loc, sum, l);
    results.push_back(sum);
  }
  for (auto [k, reduce] : llvm::enumerate(deferredReductions)) {
    if (!reduce)
      continue;
    reduce->setOperand(0, gradientSums[k]);
    b.insert(reduce);
    gradientSums[k] = reduce->getResult(0);
  }
  // The optimizer's step, on the gradients summed over the micro-batches;
  // its linear loss and pass-through gradients are dropped below.
  SmallVector<Value> stepArgs;
  for (unsigned p : stageParams)
    stepArgs.push_back(entry->getArgument(p));
  stepArgs.append(gradientSums.begin(), gradientSums.end());
  for (unsigned a = halves.usedArgs.size(); a < entry->getNumArguments(); ++a)
    stepArgs.push_back(entry->getArgument(a));
  SmallVector<Value> next = inlineBody(b, step, stepArgs);
  results.append(next.begin() + 1 + numParams, next.end());
  tag("update");
  func::ReturnOp::create(b, loc, results);
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*entry))) {
    auto action = op.getAttrOfType<StringAttr>(
        ShardcDialect::getPipelineActionAttrName());
    if (action && action.getValue() == "update" && isOpTriviallyDead(&op))
      op.erase();
  }
  info.program = fn;
  return success();
}

LogicalResult PipelineBuilder::run() {
  if (failed(checkFunction()))
    return failure();
  FailureOr<bool> statesShardings = shardc::statesShardings(func, options.axis);
  if (failed(statesShardings))
    return failure();
  sharded = *statesShardings;
  FailureOr<StageAssignment> assignment = assignStages(func, program.numStages);
  if (failed(assignment))
    return failure();
  program.assignment = std::move(*assignment);
  program.actions = buildPipelineSchedule(program.schedule, program.numStages,
                                          program.numMicrobatches);
  program.stages.resize(program.numStages);

  FailureOr<func::FuncOp> micro =
      cloneAtMicrobatchSize(func, program.numMicrobatches, isParam,
                            program.assignment.opStages, stageOf);
  if (succeeded(micro))
    scratch.push_back(*micro);
  LogicalResult result = success();
  if (succeeded(micro) && sharded) {
    // Every value of the micro-batch function gets its sharding, in place
    // (propagation only adds attributes, so the ops keep their stages).
    size_t numOps = micro->getBody().front().getOperations().size();
    if (failed(
            shardFunctionAlone(*micro, program.mesh, ShardingStage::Propagate)))
      micro = failure();
    else if (micro->getBody().front().getOperations().size() != numOps)
      micro = func.emitError("propagation changed the ops of the pipelined "
                             "function; cannot keep their stages");
  }
  if (failed(micro)) {
    result = failure();
  } else {
    findBoundaries(*micro);
    for (int64_t s = 0; s < program.numStages && succeeded(result); ++s) {
      FailureOr<StageHalves> halves = buildHalves(*micro, s);
      if (failed(halves) || failed(assemble(s, *halves)))
        result = failure();
    }
  }
  for (func::FuncOp f : scratch)
    f.erase();
  if (failed(result)) {
    for (PipelineStage &stage : program.stages)
      if (stage.program)
        stage.program.erase();
    return failure();
  }
  return success();
}

FailureOr<PipelineProgram>
shardc::buildPipelineProgram(func::FuncOp func,
                             const PipelineOptions &options) {
  PipelineProgram program;
  if (failed(PipelineBuilder(func, options, program).run()))
    return failure();
  return program;
}

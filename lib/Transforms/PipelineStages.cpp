//===- PipelineStages.cpp - which pipeline stage each op runs in ----------===//
//
// Stages are contiguous in data-flow order: an op never uses a value of a
// later stage, so activations only travel forward and gradients only back.
// Without `shardc.stage` annotations the ops are cut, in program order, into
// runs of nearly equal forward FLOPs: op i goes to the stage its FLOPs'
// midpoint falls in, so every stage costs total/p give or take one op.
//
//===----------------------------------------------------------------------===//

#include "shardc/Transforms/PipelineParallel.h"

#include "shardc/Dialect/CostOpInterface.h"
#include "shardc/Dialect/ValueNames.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace shardc;

/// The stages of the ops as annotated; an op without `shardc.stage` takes
/// the latest stage of its operands (0 without any), so constants and
/// reshapes need no annotation.
static FailureOr<std::vector<int64_t>>
annotatedStages(Block &body, int64_t numStages) {
  std::vector<int64_t> stages;
  llvm::DenseMap<Operation *, int64_t> stageOf;
  for (Operation &op : body.without_terminator()) {
    int64_t latestOperand = 0;
    for (Value v : op.getOperands())
      if (Operation *def = v.getDefiningOp())
        latestOperand = std::max(latestOperand, stageOf.lookup(def));
    int64_t stage = latestOperand;
    if (auto attr =
            op.getAttrOfType<IntegerAttr>(ShardcDialect::getStageAttrName())) {
      stage = attr.getInt();
      if (stage >= numStages)
        return op.emitError() << "stage " << stage
                              << " is out of range: the pipeline axis has "
                              << numStages << " stages";
      if (stage < latestOperand)
        for (Value v : op.getOperands())
          if (Operation *def = v.getDefiningOp();
              def && stageOf.lookup(def) > stage)
            return op.emitError()
                   << "runs in stage " << stage << " but uses "
                   << describeValue(v) << " of stage " << stageOf.lookup(def)
                   << "; stages must follow the data flow (a value is used "
                      "in its own stage or a later one)";
    }
    stageOf[&op] = stage;
    stages.push_back(stage);
  }
  return stages;
}

/// Contiguous runs of ops of nearly equal FLOPs.
static std::vector<int64_t> balancedStages(Block &body, int64_t numStages) {
  std::vector<double> flops;
  double total = 0;
  for (Operation &op : body.without_terminator()) {
    flops.push_back(getOpFlops(&op));
    total += flops.back();
  }
  std::vector<int64_t> stages;
  double before = 0;
  int64_t current = 0;
  for (double f : flops) {
    // An op that computes nothing (a constant, a reshape) stays with the
    // op before it, so that a cut never falls between an op and its
    // zero-cost epilogue.
    if (f > 0 && total > 0)
      current = std::max(
          current, std::min<int64_t>(numStages - 1,
                                     int64_t(std::floor((before + f / 2) /
                                                        total * numStages))));
    before += f;
    stages.push_back(current);
  }
  return stages;
}

FailureOr<StageAssignment> shardc::assignStages(func::FuncOp func,
                                                int64_t numStages) {
  Block &body = func.getBody().front();
  StageAssignment result;
  result.explicitStages = llvm::any_of(body, [](Operation &op) {
    return op.hasAttr(ShardcDialect::getStageAttrName());
  });
  if (result.explicitStages) {
    FailureOr<std::vector<int64_t>> stages = annotatedStages(body, numStages);
    if (failed(stages))
      return failure();
    result.opStages = std::move(*stages);
  } else {
    result.opStages = balancedStages(body, numStages);
  }

  result.stageFlops.assign(numStages, 0);
  std::vector<int64_t> opsPerStage(numStages, 0);
  llvm::DenseMap<Operation *, int64_t> stageOf;
  for (auto [i, op] : llvm::enumerate(body.without_terminator())) {
    int64_t stage = result.opStages[i];
    stageOf[&op] = stage;
    result.stageFlops[stage] += getOpFlops(&op);
    if (op.getNumOperands() != 0)
      ++opsPerStage[stage];
  }
  for (int64_t s = 0; s < numStages; ++s)
    if (opsPerStage[s] == 0)
      return func.emitError()
             << "pipeline stage " << s << " of " << numStages
             << " has no ops: "
             << (result.explicitStages
                     ? "give it some (\"stage\": " + std::to_string(s) + ")"
                     : "the model has too few ops to balance over the "
                       "pipeline axis")
             << "";

  // The loss is what the backward starts from: the last stage computes it.
  Value loss = body.getTerminator()->getOperand(0);
  Operation *lossDef = loss.getDefiningOp();
  if (!lossDef || stageOf.lookup(lossDef) != numStages - 1)
    return func.emitError()
           << "the loss " << describeValue(loss)
           << " must be computed by the last pipeline stage ("
           << numStages - 1 << "), not "
           << (lossDef ? "stage " + std::to_string(stageOf.lookup(lossDef))
                       : std::string("an input"));

  // A parameter lives on the one stage that uses it; tied weights would
  // need their gradients summed across stages.
  for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
    if (!func.getArgAttr(i, ShardcDialect::getParamAttrName()))
      continue;
    Operation *earliest = nullptr, *latest = nullptr;
    for (Operation *user : arg.getUsers()) {
      if (!earliest || stageOf.lookup(user) < stageOf.lookup(earliest))
        earliest = user;
      if (!latest || stageOf.lookup(user) > stageOf.lookup(latest))
        latest = user;
    }
    if (earliest && stageOf.lookup(earliest) != stageOf.lookup(latest))
      return latest->emitError()
             << "parameter '" << getArgumentName(func, i)
             << "' is used by pipeline stages " << stageOf.lookup(earliest)
             << " and " << stageOf.lookup(latest)
             << "; a parameter must belong to one stage (tied weights are "
                "not supported)";
  }
  return result;
}

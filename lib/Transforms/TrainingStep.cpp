//===- TrainingStep.cpp - --shardc-training-step --------------------------===//
//
// A training step as IR: the loss's gradients (the autodiff core, seeded
// with d loss = 1) followed by the SGD or Adam update, with the optimizer
// state as arguments and results of the function. Because the update is
// part of the program, propagation decides where it runs and the
// partitioner inserts its communication: the state is laid out like its
// parameter by default, and splitting it over a data axis (ZeRO-1/2) turns
// the gradients' all-reduce into a reduce-scatter and adds an all-gather of
// the new parameters, with no optimizer-specific code in either pass. The
// simulator and the engine see the state as what it is — device memory.
//
//===----------------------------------------------------------------------===//

#include "MixedPrecision.h"

#include "shardc/Dialect/MeshLookup.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ShardcOps.h"
#include "shardc/Dialect/ShardingVerifier.h"
#include "shardc/Dialect/TensorOpBuilders.h"
#include "shardc/Dialect/TensorOpQueries.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Transforms/Autodiff.h"
#include "shardc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

namespace shardc {
#define GEN_PASS_DEF_SHARDCTRAININGSTEP
#include "shardc/Transforms/Passes.h.inc"
} // namespace shardc

using namespace mlir;
using namespace shardc;

namespace {

enum class OptimizerKind { Sgd, Adam };

struct OptimizerConfig {
  OptimizerKind kind;
  double beta1, beta2, epsilon;
  SmallVector<std::string> params;
  SmallVector<std::string> zeroAxes;
  shardc::detail::Precision precision = shardc::detail::Precision::F32;
};

/// Dynamic loss scaling (f16-mixed), as torch.cuda.amp.GradScaler does:
/// halve on a step whose gradients are not finite (and skip that step),
/// double after 2000 finite steps in a row. It starts at 2^15, not torch's
/// 2^16: the loss here is an f16 value, whose cotangent is the scale, and
/// 2^16 is past f16's largest finite value (65504).
constexpr double kInitialLossScale = 32768;
constexpr double kLossScaleBackoff = 0.5;
constexpr double kLossScaleGrowth = 2;
constexpr double kLossScaleGrowthInterval = 2000;

/// One argument or result the step adds.
struct NewSlot {
  std::string name;
  Type type;
  Attribute sharding; ///< may be null
  double initialValue;
};

class TrainingStepBuilder {
public:
  TrainingStepBuilder(func::FuncOp func, const OptimizerConfig &config)
      : func(func), config(config), builder(func.getContext()) {}
  LogicalResult run();

private:
  LogicalResult checkLoss();
  LogicalResult selectParams();
  /// The layout of parameter `p`'s state and of the update: its own, split
  /// over the ZeRO axes where they fit.
  FailureOr<Attribute> stateSharding(unsigned param);
  LogicalResult checkNamesFree(ArrayRef<std::string> names);

  Value splat(double value, Type like, Location loc);
  /// `scalar` (rank 0) broadcast to `like`'s shape.
  Value broadcast(Value scalar, Type like, Location loc);
  Value named(Value v, const Twine &name);
  /// f16 loss scaling: where any of `gradients` is not finite, every next
  /// value stays its argument's and the scale backs off; otherwise the scale
  /// grows after kLossScaleGrowthInterval such steps. Appends the scale's
  /// next values to `nextState`.
  LogicalResult skipNonFiniteSteps(ArrayRef<Value> gradients, Value scale,
                                   Value goodSteps, ArrayRef<unsigned> params,
                                   SmallVectorImpl<Value> &nextParams,
                                   SmallVectorImpl<Value> &nextState,
                                   Location loc);

  func::FuncOp func;
  const OptimizerConfig &config;
  OpBuilder builder;
  SmallVector<unsigned> params;
  MeshOp mesh; ///< the module's only mesh, if it has one
};

LogicalResult TrainingStepBuilder::checkLoss() {
  if (func.getNumResults() == 0)
    return func.emitError() << "the optimizer needs a function whose first "
                               "result is the scalar loss; @"
                            << func.getSymName() << " returns nothing";
  auto loss = cast<RankedTensorType>(func.getResultTypes()[0]);
  if (loss.getRank() != 0)
    return func.emitError()
           << "the optimizer needs a function whose first result is the "
              "scalar loss; @"
           << func.getSymName() << "'s first result is " << loss;
  return success();
}

LogicalResult TrainingStepBuilder::selectParams() {
  bool anyMarked =
      llvm::any_of(llvm::seq(func.getNumArguments()), [&](unsigned i) {
        return func.getArgAttr(i, ShardcDialect::getParamAttrName()) != nullptr;
      });
  if (config.params.empty() && !anyMarked)
    return func.emitError()
           << "the optimizer has no parameters to update: mark inputs of @"
           << func.getSymName()
           << " as parameters (\"param\": true, shardc.param) or name them "
              "(params=...)";
  FailureOr<SmallVector<unsigned>> selected =
      selectDifferentiatedArguments(func, config.params);
  if (failed(selected))
    return failure();
  params = std::move(*selected);
  for (unsigned i : params)
    func.setArgAttr(i, ShardcDialect::getParamAttrName(),
                    UnitAttr::get(func.getContext()));
  return success();
}

FailureOr<Attribute> TrainingStepBuilder::stateSharding(unsigned param) {
  Attribute own = func.getArgAttr(param, ShardcDialect::getShardingAttrName());
  if (config.zeroAxes.empty())
    return own;
  auto type = cast<RankedTensorType>(func.getArgument(param).getType());
  MLIRContext *ctx = func.getContext();
  auto sharding = dyn_cast_or_null<ShardingAttr>(own);
  if (!sharding) {
    if (!mesh)
      return func.emitError()
             << "zero-axes needs a mesh: the module has none, or several and "
                "parameter '"
             << getArgumentName(func, param) << "' has no sharding";
    sharding = ShardingAttr::getReplicated(
        ctx, FlatSymbolRefAttr::get(mesh.getSymNameAttr()), type.getRank());
  }
  MeshOp paramMesh = lookupMesh(func, sharding.getMesh());
  if (!paramMesh)
    return func.emitError()
           << "parameter '" << getArgumentName(func, param)
           << "' is sharded on an unknown mesh " << sharding.getMesh();

  SmallVector<SmallVector<StringRef>> dims;
  llvm::StringSet<> used;
  for (size_t d = 0; d < sharding.getRank(); ++d) {
    dims.push_back(sharding.getDimAxes(d));
    for (StringRef a : dims.back())
      used.insert(a);
  }
  SmallVector<StringRef> partial = sharding.getPartialAxes();
  for (StringRef a : partial)
    used.insert(a);
  for (const std::string &axis : config.zeroAxes) {
    if (paramMesh.getAxisIndex(axis) < 0)
      return func.emitError()
             << "zero-axes: '" << axis << "' is not an axis of mesh @"
             << paramMesh.getSymName();
    if (used.contains(axis))
      continue; // already split over it (FSDP / ZeRO-3)
    int64_t axisSize = paramMesh.getAxisSize(axis);
    bool placed = false;
    for (auto [d, axes] : llvm::enumerate(dims)) {
      int64_t split = 1;
      for (StringRef a : axes)
        split *= paramMesh.getAxisSize(a);
      if (type.getDimSize(d) % (split * axisSize) != 0)
        continue;
      axes.push_back(paramMesh.getAxisNameList()[paramMesh.getAxisIndex(axis)]);
      used.insert(axis);
      placed = true;
      break;
    }
    if (!placed)
      emitWarning(func.getLoc())
          << "zero-axes: the state of '" << getArgumentName(func, param) << "' "
          << type << " stays unsplit over '" << axis
          << "': no dimension divides evenly";
  }
  return Attribute(ShardingAttr::get(ctx, sharding.getMesh(), dims, partial));
}

LogicalResult TrainingStepBuilder::checkNamesFree(ArrayRef<std::string> names) {
  llvm::StringSet<> taken;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    taken.insert(getArgumentName(func, i));
  for (const std::string &name : getResultNames(func))
    taken.insert(name);
  for (const std::string &name : names)
    if (taken.contains(name))
      return func.emitError() << "the optimizer step adds '" << name
                              << "', but @" << func.getSymName()
                              << " already has an input or result of that name";
  return success();
}

Value TrainingStepBuilder::splat(double value, Type like, Location loc) {
  return buildSplatConstant(builder, loc, like, value);
}

Value TrainingStepBuilder::broadcast(Value scalar, Type like, Location loc) {
  if (scalar.getType() == like)
    return scalar;
  return buildBroadcastInDim(builder, loc, like, scalar, {});
}

Value TrainingStepBuilder::named(Value v, const Twine &name) {
  Operation *def = v.getDefiningOp();
  def->setLoc(withValueName(def->getLoc(), name));
  return v;
}

LogicalResult TrainingStepBuilder::skipNonFiniteSteps(
    ArrayRef<Value> gradients, Value scale, Value goodSteps,
    ArrayRef<unsigned> params, SmallVectorImpl<Value> &nextParams,
    SmallVectorImpl<Value> &nextState, Location loc) {
  Type scalar = scale.getType();
  // sum(g * 0) over every gradient is 0 where all are finite and NaN as
  // soon as one element is infinite or NaN.
  Value total = splat(0.0, scalar, loc);
  for (Value g : gradients) {
    Value zeroed = buildMul(builder, loc, g, splat(0.0, g.getType(), loc));
    auto type = cast<RankedTensorType>(g.getType());
    if (type.getRank() > 0)
      zeroed = buildReduceSum(
          builder, loc, zeroed,
          llvm::to_vector(llvm::seq<int64_t>(0, type.getRank())));
    total = buildAdd(builder, loc, total, zeroed);
  }
  Value finite =
      named(buildCompare(builder, loc, total, splat(0.0, scalar, loc), "EQ"),
            "loss_scale.finite");
  auto keepIfFinite = [&](Value next, Value old) {
    Value pred = finite;
    auto type = cast<RankedTensorType>(next.getType());
    if (type.getRank() > 0)
      pred = buildBroadcastInDim(builder, loc, type.clone(builder.getI1Type()),
                                 finite, {});
    Value kept = buildSelect(builder, loc, pred, next, old);
    // The name stays on the value the step returns.
    StringRef name = getSourceName(next);
    if (!name.empty()) {
      next.getDefiningOp()->setLoc(withValueName(loc, name + ".unchecked"));
      named(kept, name);
    }
    return kept;
  };
  for (auto [k, p] : llvm::enumerate(params))
    nextParams[k] = keepIfFinite(nextParams[k], func.getArgument(p));
  // The state so far (Adam's) is laid out as the step's state arguments
  // after the learning rate.
  unsigned firstState = func.getNumArguments() - (nextState.size() + 2);
  for (auto [i, next] : llvm::enumerate(nextState))
    next = keepIfFinite(next, func.getArgument(firstState + i));

  Value goodPlusOne =
      buildAdd(builder, loc, goodSteps, splat(1.0, scalar, loc));
  Value grow = buildCompare(builder, loc, goodPlusOne,
                            splat(kLossScaleGrowthInterval, scalar, loc), "GE");
  Value grown = buildSelect(
      builder, loc, grow,
      buildMul(builder, loc, scale, splat(kLossScaleGrowth, scalar, loc)),
      scale);
  Value counted =
      buildSelect(builder, loc, grow, splat(0.0, scalar, loc), goodPlusOne);
  Value backedOff =
      buildMul(builder, loc, scale, splat(kLossScaleBackoff, scalar, loc));
  nextState.push_back(named(buildSelect(builder, loc, finite, grown, backedOff),
                            "loss_scale.next"));
  nextState.push_back(
      named(buildSelect(builder, loc, finite, counted, splat(0.0, scalar, loc)),
            "loss_scale.good_steps.next"));
  return success();
}

LogicalResult TrainingStepBuilder::run() {
  if (failed(checkDifferentiable(func)) || failed(checkLoss()) ||
      failed(selectParams()))
    return failure();
  mesh = getOnlyMesh(func->getParentOfType<ModuleOp>());
  // Mixed precision: the forward pass on half working copies of the f32
  // parameters (the master weights), so autodiff's activations and
  // gradients are half floats (MixedPrecision.h).
  Type half =
      shardc::detail::getWorkingType(func.getContext(), config.precision);
  bool scaleLoss = config.precision == shardc::detail::Precision::F16Mixed;
  if (half && failed(shardc::detail::castBodyToHalf(func, half)))
    return failure();

  MLIRContext *ctx = func.getContext();
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  Location loc = ret.getLoc();
  Type lossType = func.getResultTypes()[0];
  bool adam = config.kind == OptimizerKind::Adam;

  // The inputs the step adds: the learning rate, then the state.
  std::vector<std::string> paramNames;
  SmallVector<Attribute> paramShardings, stateShardings;
  for (unsigned p : params) {
    paramNames.push_back(getArgumentName(func, p));
    paramShardings.push_back(
        func.getArgAttr(p, ShardcDialect::getShardingAttrName()));
    FailureOr<Attribute> s = stateSharding(p);
    if (failed(s))
      return failure();
    stateShardings.push_back(*s);
  }
  std::vector<NewSlot> state;
  if (adam) {
    for (auto [k, p] : llvm::enumerate(params))
      for (StringRef moment : {"adam_m", "adam_v"})
        state.push_back({paramNames[k] + "." + moment.str(),
                         func.getArgument(p).getType(), stateShardings[k],
                         0.0});
    for (StringRef power : {"adam.beta1_power", "adam.beta2_power"})
      state.push_back({power.str(), lossType, nullptr, 1.0});
  }
  unsigned scaleSlot = state.size();
  if (scaleLoss) {
    state.push_back({"loss_scale", lossType, nullptr, kInitialLossScale});
    state.push_back({"loss_scale.good_steps", lossType, nullptr, 0.0});
  }
  std::vector<std::string> added = {"learning_rate"};
  for (const std::string &name : paramNames) {
    added.push_back(name + ".grad");
    added.push_back(name + ".next");
  }
  for (const NewSlot &s : state) {
    added.push_back(s.name);
    added.push_back(s.name + ".next");
  }
  if (failed(checkNamesFree(added)))
    return failure();

  unsigned numArgs = func.getNumArguments();
  SmallVector<Type> argTypes = {lossType};
  SmallVector<DictionaryAttr> argAttrs;
  SmallVector<Location> argLocs = {withValueName(loc, "learning_rate")};
  argAttrs.push_back(DictionaryAttr::get(
      ctx, {builder.getNamedAttr(ShardcDialect::getNameAttrName(),
                                 builder.getStringAttr("learning_rate"))}));
  for (const NewSlot &s : state) {
    NamedAttrList attrs;
    attrs.append(ShardcDialect::getNameAttrName(),
                 builder.getStringAttr(s.name));
    attrs.append(
        ShardcDialect::getOptimizerStateAttrName(),
        builder.getFloatAttr(getElementTypeOrSelf(s.type), s.initialValue));
    if (s.sharding)
      attrs.append(ShardcDialect::getShardingAttrName(), s.sharding);
    argTypes.push_back(s.type);
    argAttrs.push_back(attrs.getDictionary(ctx));
    argLocs.push_back(withValueName(loc, s.name));
  }
  SmallVector<unsigned> argIndices(argTypes.size(), numArgs);
  if (failed(func.insertArguments(argIndices, argTypes, argAttrs, argLocs)))
    return func.emitError("the optimizer could not add its inputs");
  Value learningRate = func.getArgument(numArgs);
  auto stateArg = [&](unsigned i) { return func.getArgument(numArgs + 1 + i); };

  // Gradients of the loss.
  builder.setInsertionPoint(ret);
  SmallVector<Value> seeds(func.getNumResults(), Value());
  // f16: the loss is scaled up so that small gradients survive in f16, and
  // the gradients are scaled back down in f32.
  Value lossScale = scaleLoss ? stateArg(scaleSlot) : Value();
  seeds[0] = scaleLoss ? lossScale : splat(1.0, lossType, loc);
  FailureOr<SmallVector<Value>> gradients = buildGradients(func, params, seeds);
  if (failed(gradients))
    return failure();
  builder.setInsertionPoint(ret);
  // With mixed precision, the gradient a step returns (and the partitioner
  // reduces) is the half one, the working copy's; autodiff converted it to
  // f32 for the master weight, which the update does below.
  SmallVector<Value> updateGradients(*gradients);
  for (unsigned k = 0; half && k < params.size(); ++k) {
    Operation *toF32 = (*gradients)[k].getDefiningOp();
    Value halfGradient = getConvertedOperand(toF32);
    if (!halfGradient || getElementTypeOrSelf(halfGradient.getType()) != half)
      continue;
    (*gradients)[k] = named(halfGradient, paramNames[k] + ".grad");
    toF32->setLoc(withValueName(loc, paramNames[k] + ".grad.f32"));
  }
  for (unsigned k = 0; k < params.size(); ++k) {
    if (!stateShardings[k] || stateShardings[k] == paramShardings[k])
      continue;
    // Both carry the name: the gradient as computed (what the partitioner's
    // reduce-scatter moves) and in the update's layout (the result).
    (*gradients)[k] =
        named(buildShardingConstraint(builder, loc, (*gradients)[k],
                                      cast<ShardingAttr>(stateShardings[k])),
              paramNames[k] + ".grad");
    updateGradients[k] = (*gradients)[k];
  }
  for (unsigned k = 0; k < params.size(); ++k) {
    Value &g = updateGradients[k];
    if (getElementTypeOrSelf(g.getType()) != getElementTypeOrSelf(lossType))
      g = named(buildConvert(builder, loc, g, getElementTypeOrSelf(lossType)),
                paramNames[k] + ".grad.f32");
    if (scaleLoss)
      g = buildDiv(builder, loc, g, broadcast(lossScale, g.getType(), loc));
  }
  for (Value g : *gradients)
    if (Operation *dead = g.getDefiningOp();
        getConvertedOperand(dead) && dead->use_empty())
      dead->erase();

  // The update.
  // The update. One statement per op: the order ops are created in is the
  // order they print in, and C++ leaves the order of call arguments open.
  SmallVector<Value> nextParams, nextState;
  if (!adam) {
    for (auto [k, p] : llvm::enumerate(params)) {
      Value w = func.getArgument(p);
      Value rate = broadcast(learningRate, w.getType(), loc);
      // Named, as the ops reading a gradient are below: `shardc explain`
      // names the consumer of a gradient's reduction by them.
      Value step = named(buildMul(builder, loc, rate, updateGradients[k]),
                         paramNames[k] + ".sgd_step");
      nextParams.push_back(
          named(buildSub(builder, loc, w, step), paramNames[k] + ".next"));
    }
  } else {
    double b1 = config.beta1, b2 = config.beta2;
    unsigned firstPower = state.size() - 2;
    Value beta1 = splat(b1, lossType, loc);
    Value beta1Power =
        named(buildMul(builder, loc, stateArg(firstPower), beta1),
              "adam.beta1_power.next");
    Value beta2 = splat(b2, lossType, loc);
    Value beta2Power =
        named(buildMul(builder, loc, stateArg(firstPower + 1), beta2),
              "adam.beta2_power.next");
    // lr / (1 - b1^t) and sqrt(1 - b2^t), once per step.
    Value one = splat(1.0, lossType, loc);
    Value correction1 = buildSub(builder, loc, one, beta1Power);
    Value stepSize = buildDiv(builder, loc, learningRate, correction1);
    Value correction2 = buildSub(builder, loc, one, beta2Power);
    Value rootCorrection2 = buildSqrt(builder, loc, correction2);
    for (auto [k, p] : llvm::enumerate(params)) {
      Value w = func.getArgument(p), g = updateGradients[k];
      Type t = w.getType();
      Value m = stateArg(2 * k), v = stateArg(2 * k + 1);
      // m = b1 m + (1 - b1) g
      Value decayedM = buildMul(builder, loc, splat(b1, t, loc), m);
      Value newPartM = named(buildMul(builder, loc, splat(1.0 - b1, t, loc), g),
                             state[2 * k].name + ".from_grad");
      Value m2 = named(buildAdd(builder, loc, decayedM, newPartM),
                       state[2 * k].name + ".next");
      // v = b2 v + (1 - b2) g^2
      Value decayedV = buildMul(builder, loc, splat(b2, t, loc), v);
      Value g2 =
          named(buildMul(builder, loc, g, g), paramNames[k] + ".grad_sq");
      Value newPartV = buildMul(builder, loc, splat(1.0 - b2, t, loc), g2);
      Value v2 = named(buildAdd(builder, loc, decayedV, newPartV),
                       state[2 * k + 1].name + ".next");
      // p - lr_t * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
      Value rootV = buildSqrt(builder, loc, v2);
      Value corrected =
          buildDiv(builder, loc, rootV, broadcast(rootCorrection2, t, loc));
      Value denominator =
          buildAdd(builder, loc, corrected, splat(config.epsilon, t, loc));
      Value direction = buildDiv(builder, loc, m2, denominator);
      Value step =
          buildMul(builder, loc, broadcast(stepSize, t, loc), direction);
      nextParams.push_back(
          named(buildSub(builder, loc, w, step), paramNames[k] + ".next"));
      nextState.push_back(m2);
      nextState.push_back(v2);
    }
    nextState.push_back(beta1Power);
    nextState.push_back(beta2Power);
  }
  if (scaleLoss && failed(skipNonFiniteSteps(updateGradients, lossScale,
                                             stateArg(scaleSlot + 1), params,
                                             nextParams, nextState, loc)))
    return failure();

  // Results: gradients, next parameters, next state.
  SmallVector<Value> results(ret.getOperands());
  SmallVector<Type> resultTypes;
  SmallVector<DictionaryAttr> resultAttrs;
  auto addResult = [&](Value v, StringRef role, StringRef of,
                       Attribute sharding) {
    results.push_back(v);
    resultTypes.push_back(v.getType());
    NamedAttrList attrs;
    attrs.append(role, builder.getStringAttr(of));
    if (sharding)
      attrs.append(ShardcDialect::getShardingAttrName(), sharding);
    resultAttrs.push_back(attrs.getDictionary(ctx));
  };
  for (auto [k, g] : llvm::enumerate(*gradients))
    addResult(g, ShardcDialect::getGradientOfAttrName(), paramNames[k],
              stateShardings[k]);
  for (auto [k, w] : llvm::enumerate(nextParams))
    addResult(w, ShardcDialect::getNextAttrName(), paramNames[k],
              paramShardings[k]);
  for (auto [s, v] : llvm::zip(state, nextState))
    addResult(v, ShardcDialect::getNextAttrName(), s.name, s.sharding);
  unsigned numResults = func.getNumResults();
  ret->setOperands(results);
  SmallVector<unsigned> resultIndices(resultTypes.size(), numResults);
  if (failed(func.insertResults(resultIndices, resultTypes, resultAttrs)))
    return func.emitError("the optimizer could not add its results");
  return success();
}

struct OptimizerPass
    : public shardc::impl::ShardcTrainingStepBase<OptimizerPass> {
  using ShardcTrainingStepBase::ShardcTrainingStepBase;

  void runOnOperation() override {
    OptimizerConfig config;
    if (optimizer == "sgd")
      config.kind = OptimizerKind::Sgd;
    else if (optimizer == "adam")
      config.kind = OptimizerKind::Adam;
    else {
      emitError(getOperation().getLoc())
          << "unknown optimizer '" << optimizer << "' (expected sgd or adam)";
      return signalPassFailure();
    }
    config.beta1 = beta1;
    config.beta2 = beta2;
    config.epsilon = epsilon;
    config.params.assign(params.begin(), params.end());
    config.zeroAxes.assign(zeroAxes.begin(), zeroAxes.end());
    std::optional<shardc::detail::Precision> parsed =
        shardc::detail::parsePrecision(precision);
    if (!parsed) {
      emitError(getOperation().getLoc())
          << "unknown precision '" << precision
          << "' (expected f32, bf16-mixed or f16-mixed)";
      return signalPassFailure();
    }
    config.precision = *parsed;
    // Recompute is --shardc-recompute's, run by the train pipeline after
    // sharding; a bad name is caught here, before any work.
    if (recompute != "none" && recompute != "selective" &&
        recompute != "full") {
      emitError(getOperation().getLoc())
          << "unknown recompute '" << recompute
          << "' (expected none, selective or full)";
      return signalPassFailure();
    }
    for (auto func : llvm::to_vector(getOperation().getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      if (failed(TrainingStepBuilder(func, config).run()))
        return signalPassFailure();
    }
  }
};

} // namespace

//===- Interpreter.cpp - the reference interpreter ------------------------===//
//
// Runs a function's single block op by op. Everything that can be checked
// without computing is checked first (input shapes, supported ops and
// dtypes, every value against the byte budget), so a bad run fails in
// milliseconds instead of after hours of work or an out-of-memory kill.
// Each intermediate is freed right after its last use, so the peak is the
// largest live set rather than the sum of all values.
//
//===----------------------------------------------------------------------===//

#include "shardc/Interpreter/Interpreter.h"

#include "ElementwiseFusion.h"
#include "FunctionPlan.h"
#include "KernelImpl.h"

#include "shardc/Dialect/ShardingRule.h"
#include "shardc/Dialect/ShardingVerifier.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Interpreter/Kernels.h"
#include "shardc/Interpreter/PointToPoint.h"
#include "shardc/Support/NumericCheck.h"
#include "shardc/Support/RandomTensor.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace shardc;
using llvm::SmallVector;

/// Checks `args` against `func`'s signature, before anything is computed
/// (the body is checked by getFunctionPlan).
static LogicalResult checkArguments(func::FuncOp func, Block &body,
                                    llvm::ArrayRef<Tensor> args) {
  if (body.getNumArguments() != args.size())
    return func.emitError()
           << "@" << func.getSymName() << " takes " << body.getNumArguments()
           << " inputs but " << args.size() << " were given";
  for (auto [arg, tensor] : llvm::zip(body.getArguments(), args)) {
    if (failed(shardc::detail::checkExecutableValue(
            arg, func, std::numeric_limits<uint64_t>::max())))
      return failure();
    auto type = cast<RankedTensorType>(arg.getType());
    if (tensor.shape() != type.getShape() ||
        executableDType(type.getElementType()) != tensor.dtype())
      return func.emitError()
             << describeValue(arg) << " of @" << func.getSymName()
             << " expects " << type << " but was given " << tensor.describe();
  }
  return success();
}

namespace {
/// Values computed so far, each owned until its last use.
class Environment {
public:
  /// `lastUse` is the function plan's: where each value is last read.
  Environment(Block &body, llvm::ArrayRef<Tensor> args,
              const llvm::DenseMap<Value, size_t> &lastUse)
      : lastUse(lastUse) {
    for (auto [arg, tensor] : llvm::zip(body.getArguments(), args))
      inputs[arg] = &tensor;
  }

  const Tensor *lookup(Value value) const {
    if (auto it = owned.find(value); it != owned.end())
      return &it->second;
    return inputs.lookup(value);
  }
  bool isOwned(Value value) const { return owned.count(value); }
  bool diesAt(Value value, size_t index) const {
    return lastUse.lookup(value) == index;
  }
  void define(Value value, Tensor tensor) {
    owned.insert_or_assign(value, std::move(tensor));
  }
  Tensor take(Value value) {
    auto it = owned.find(value);
    Tensor out = std::move(it->second);
    owned.erase(it);
    return out;
  }
  /// Frees the operands and results of op `index` that are not used later.
  void release(Operation &op, size_t index) {
    for (Value v : llvm::concat<Value>(op.getOperands(), op.getResults()))
      if (diesAt(v, index))
        owned.erase(v);
  }
  /// Frees the tensors a fused group rooted at op `index` read, and its
  /// result, that are not used later.
  void release(const shardc::detail::FusedGroup &group, Value result,
               size_t index) {
    for (const shardc::detail::FusedGroup::Leaf &leaf : group.leaves)
      if (diesAt(leaf.value, index))
        owned.erase(leaf.value);
    for (const shardc::detail::FusedGroup::Node &node : group.nodes)
      if (node.stored && diesAt(node.op->getResult(0), index))
        owned.erase(node.op->getResult(0));
    if (diesAt(result, index))
      owned.erase(result);
  }

private:
  llvm::DenseMap<Value, const Tensor *> inputs;
  llvm::DenseMap<Value, Tensor> owned;
  const llvm::DenseMap<Value, size_t> &lastUse;
};
} // namespace

namespace {
/// Where each non-finite value's NaNs and infinities first appeared
/// (InterpreterOptions::nonFiniteSources).
class NonFiniteTracker {
public:
  void addArgument(BlockArgument arg, const Tensor &tensor) {
    if (countNonFinite(tensor))
      sources[arg] = {arg, arg.getArgNumber()};
  }
  /// Op `index` (after the arguments) computed `result` from `operands`.
  void addResult(Value result, Operation &op, size_t index,
                 const Tensor &tensor) {
    if (!countNonFinite(tensor))
      return;
    Source first{result, numArguments(op) + index};
    for (Value operand : op.getOperands())
      if (auto it = sources.find(operand);
          it != sources.end() && it->second.order < first.order)
        first = it->second;
    sources[result] = first;
  }
  Value sourceOf(Value value) const { return sources.lookup(value).value; }

private:
  static size_t numArguments(Operation &op) {
    return op.getBlock()->getNumArguments();
  }
  struct Source {
    Value value;
    /// Program order: arguments first, then ops.
    size_t order = 0;
  };
  llvm::DenseMap<Value, Source> sources;
};
} // namespace

/// Ops whose kernel only relabels data (reshape, sharding_constraint): when
/// the operand dies here, its buffer is reused instead of copied.
/// Whether `op` adds up terms a sharded program may add in another order:
/// its sharding rule has a reduction factor over more than one element.
static bool sumsOverAFactor(Operation *op) {
  auto ruleOp = dyn_cast<ShardingRuleOpInterface>(op);
  if (!ruleOp)
    return false;
  return llvm::any_of(
      ruleOp.getShardingRule().getFactors(), [](const Factor &factor) {
        return factor.kind == FactorKind::Reduction && factor.size > 1;
      });
}

static std::optional<Tensor> tryForward(Operation &op, size_t index,
                                        Environment &env) {
  KernelOpInterface kernel = getKernel(&op);
  if (!kernel || op.getNumOperands() != 1 || op.getNumResults() != 1)
    return std::nullopt;
  Value operand = op.getOperand(0);
  const Tensor *input = env.lookup(operand);
  if (!env.isOwned(operand) || !env.diesAt(operand, index) || !input ||
      !kernel.canRelabelOperand(*input))
    return std::nullopt; // the kernel copies (or reports the mismatch)
  auto type = cast<RankedTensorType>(op.getResult(0).getType());
  Tensor tensor = env.take(operand);
  llvm::cantFail(tensor.reshape(type.getShape()));
  return tensor;
}

/// Runs the fused group rooted at `op` and defines its stored nodes'
/// results and the root's.
static LogicalResult runGroup(Operation &op,
                              const shardc::detail::FusedGroup &group,
                              Environment &env, uint64_t maxTensorBytes) {
  SmallVector<const Tensor *> leaves;
  for (const shardc::detail::FusedGroup::Leaf &leaf : group.leaves) {
    const Tensor *tensor = env.lookup(leaf.value);
    if (!tensor)
      return op.emitError() << "operand " << describeValue(leaf.value)
                            << " is not defined before its use";
    leaves.push_back(tensor);
  }
  SmallVector<Value> values;
  for (const shardc::detail::FusedGroup::Node &node : group.nodes)
    if (node.stored)
      values.push_back(node.op->getResult(0));
  values.push_back(op.getResult(0));
  SmallVector<Tensor> outputs;
  for (Value value : values) {
    auto type = cast<RankedTensorType>(value.getType());
    llvm::Expected<Tensor> result = Tensor::allocateUninitialized(
        type.getShape(), *executableDType(type.getElementType()),
        maxTensorBytes);
    if (!result)
      return value.getDefiningOp()->emitError()
             << "result of '" << value.getDefiningOp()->getName()
             << "': " << llvm::toString(result.takeError());
    outputs.push_back(std::move(*result));
  }
  SmallVector<Tensor *> pointers;
  for (Tensor &t : outputs)
    pointers.push_back(&t);
  shardc::detail::runFusedGroup(group, leaves, pointers);
  for (auto [value, tensor] : llvm::zip(values, outputs))
    env.define(value, std::move(tensor));
  return success();
}

FailureOr<SmallVector<Tensor>>
shardc::interpretFunction(func::FuncOp func, llvm::ArrayRef<Tensor> args,
                          const InterpreterOptions &options) {
  if (!func)
    return failure();
  if (func.isExternal())
    return func.emitError()
           << "@" << func.getSymName() << " has no body to interpret";
  if (!func.getBody().hasOneBlock())
    return func.emitError() << "@" << func.getSymName()
                            << " must have a single block to be interpreted";
  Block &body = func.getBody().front();
  if (failed(checkArguments(func, body, args)))
    return failure();
  // Chains of elementwise ops run as single passes (ElementwiseFusion.h),
  // with the bits of running them op by op; tracking non-finite values
  // needs every value materialized, so it runs them op by op. The checks
  // of the body and the plans are made once per function (FunctionPlan.h).
  FailureOr<std::shared_ptr<const shardc::detail::FunctionPlan>> plan =
      shardc::detail::getFunctionPlan(func, options.maxTensorBytes,
                                      /*fuse=*/!options.nonFiniteSources);
  if (failed(plan))
    return failure();
  const std::optional<shardc::detail::FusionPlan> &fusion = (*plan)->fusion;
  Environment env(body, args, (*plan)->lastUse);
  shardc::detail::MeshTopologyCache meshes;
  std::optional<NonFiniteTracker> nonFinite;
  if (options.nonFiniteSources) {
    options.nonFiniteSources->clear();
    nonFinite.emplace();
    for (auto [arg, tensor] : llvm::zip(body.getArguments(), args))
      nonFinite->addArgument(arg, tensor);
  }
  // Reductions started and not yet waited for, by result: each completes
  // where its result is first needed, so a gradient's all_reduce travels
  // while the backward pass goes on (Communicator::startAllReduce).
  llvm::MapVector<Value, std::unique_ptr<PendingCollective>> inFlight;
  auto finish = [&](ValueRange values) -> LogicalResult {
    for (Value value : values) {
      auto it = inFlight.find(value);
      if (it == inFlight.end())
        continue;
      std::unique_ptr<PendingCollective> pending = std::move(it->second);
      inFlight.erase(it);
      FailureOr<Tensor> result = shardc::detail::finishCollective(
          value.getDefiningOp(), options.communicator->deviceId(), *pending);
      if (failed(result))
        return failure();
      env.define(value, std::move(*result));
    }
    return success();
  };
  // Reductions started where their operand was computed (the plan's
  // reductionStarts), skipped where the program has them.
  llvm::DenseSet<Operation *> startedEarly;
  auto startReductionsAfter = [&](size_t index) -> LogicalResult {
    if (nonFinite || !options.communicator)
      return success();
    auto it = (*plan)->reductionStarts.find(index);
    if (it == (*plan)->reductionStarts.end())
      return success();
    for (Operation *collective : it->second) {
      Value operand = collective->getOperand(0);
      if (!env.isOwned(operand))
        continue; // started (or run) where the program has it
      FailureOr<std::unique_ptr<PendingCollective>> pending =
          shardc::detail::startCollective(collective, env.take(operand),
                                          options.communicator, meshes);
      if (failed(pending))
        return failure();
      inFlight.insert({collective->getResult(0), std::move(*pending)});
      startedEarly.insert(collective);
    }
    return success();
  };
  for (auto [index, op] : llvm::enumerate(body)) {
    for (auto &entry : inFlight)
      entry.second->progress();
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      if (failed(finish(ret.getOperands())))
        return failure();
      SmallVector<Tensor> results;
      for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
        const Tensor *tensor = env.lookup(value);
        if (!tensor)
          return ret.emitError() << "returned value #" << i
                                 << " is not defined in the function";
        // Move out on the value's last occurrence; earlier ones (the same
        // value returned twice) and inputs are copied.
        bool lastOccurrence =
            !llvm::is_contained(ret.getOperands().drop_front(i + 1), value);
        if (env.isOwned(value) && lastOccurrence)
          results.push_back(env.take(value));
        else
          results.push_back(tensor->clone());
        if (nonFinite)
          options.nonFiniteSources->push_back(nonFinite->sourceOf(value));
      }
      return results;
    }

    if (startedEarly.contains(&op))
      continue; // in flight since its operand was computed
    if (fusion && fusion->isFused(&op))
      continue; // computed inside the groups of its users
    if (const shardc::detail::FusedGroup *group =
            fusion ? fusion->groupRootedAt(&op) : nullptr) {
      SmallVector<Value> leaves;
      for (const shardc::detail::FusedGroup::Leaf &leaf : group->leaves)
        leaves.push_back(leaf.value);
      if (failed(finish(leaves)))
        return failure();
      if (failed(runGroup(op, *group, env, options.maxTensorBytes)))
        return failure();
      env.release(*group, op.getResult(0), index);
      if (failed(startReductionsAfter(index)))
        return failure();
      continue;
    }

    if (failed(finish(op.getOperands())))
      return failure();
    if (!nonFinite && options.communicator &&
        shardc::detail::canStartCollective(&op)) {
      // Started only when this op consumes its operand (a gradient is
      // reduced once) and something later reads the result.
      Value operand = op.getOperand(0), result = op.getResult(0);
      if (env.isOwned(operand) && env.diesAt(operand, index) &&
          !env.diesAt(result, index)) {
        FailureOr<std::unique_ptr<PendingCollective>> pending =
            shardc::detail::startCollective(&op, env.take(operand),
                                            options.communicator, meshes);
        if (failed(pending))
          return failure();
        inFlight.insert({result, std::move(*pending)});
        continue;
      }
    }
    SmallVector<const Tensor *> operands;
    for (Value operand : op.getOperands()) {
      const Tensor *tensor = env.lookup(operand);
      if (!tensor)
        return op.emitError() << "operand " << describeValue(operand)
                              << " is not defined before its use";
      operands.push_back(tensor);
    }
    // An operand the kernel updates in place, dying here, is handed over
    // as the result's buffer (scatter_add into a table of zeros: no copy).
    Tensor inPlace;
    bool updatesInPlace = false;
    if (KernelOpInterface kernel = getKernel(&op)) {
      int64_t k = kernel.updatesOperandInPlace();
      if (k >= 0 && k < static_cast<int64_t>(operands.size())) {
        Value operand = op.getOperand(k);
        if (env.isOwned(operand) && env.diesAt(operand, index) &&
            llvm::count(op.getOperands(), operand) == 1) {
          inPlace = env.take(operand);
          operands[k] = &inPlace;
          updatesInPlace = true;
        }
      }
    }
    FailureOr<Tensor> result = failure();
    if (std::optional<Tensor> forwarded = tryForward(op, index, env))
      result = std::move(*forwarded);
    else if (isa<CollectiveOpInterface>(op))
      result = shardc::detail::evaluateCollective(&op, *operands.front(),
                                                  options.communicator, meshes);
    else if (pointToPointSide(&op))
      result = evaluatePointToPoint(&op, operands, options.communicator);
    else if (isDeviceDependent(&op))
      result = options.communicator
                   ? evaluateOnDevice(&op, options.communicator->deviceId())
                   : FailureOr<Tensor>(op.emitError(
                         "axis_index needs a device mesh; run the "
                         "partitioned program with `shardc simulate` or "
                         "`shardc exec`"));
    else
      result = evaluateTensorOp(&op, operands, options.maxTensorBytes,
                                /*verifyOp=*/false, // the plan verified
                                updatesInPlace ? &inPlace : nullptr);
    if (failed(result))
      return failure();
    if (options.sumRoundingProbe && sumsOverAFactor(&op))
      *result = perturbByOneUlp(
          *result, std::nullopt,
          uint32_t(splitmix64Mix(options.sumRoundingProbe) ^ index) | 1u);
    if (nonFinite)
      nonFinite->addResult(op.getResult(0), op, index, *result);
    env.define(op.getResult(0), std::move(*result));
    env.release(op, index);
    if (failed(startReductionsAfter(index)))
      return failure();
  }
  return func.emitError("the function body must end with func.return");
}

std::optional<DType> shardc::executableDType(Type elementType) {
  if (elementType.isF32())
    return DType::F32;
  if (elementType.isBF16())
    return DType::BF16;
  if (elementType.isF16())
    return DType::F16;
  if (elementType.isSignlessInteger(1))
    return DType::I1;
  if (elementType.isSignlessInteger(32))
    return DType::I32;
  if (elementType.isSignlessInteger(64))
    return DType::I64;
  return std::nullopt;
}

llvm::Expected<std::optional<Tensor>>
shardc::initialOptimizerState(func::FuncOp func, unsigned i) {
  auto init = func.getArgAttrOfType<FloatAttr>(
      i, ShardcDialect::getOptimizerStateAttrName());
  if (!init)
    return std::nullopt;
  auto type = cast<RankedTensorType>(func.getArgumentTypes()[i]);
  llvm::Expected<Tensor> t = Tensor::allocate(type.getShape());
  if (!t)
    return t.takeError();
  float value = float(init.getValueAsDouble());
  for (float &v : t->values())
    v = value;
  return std::optional<Tensor>(std::move(*t));
}

//===- FunctionPlan.cpp - a function's checks and plans, kept -------------===//
//
// The fingerprint hashes what the plan was made from: every op of the
// function (its address, name, attributes and properties, operands, result
// types, location) and its blocks' arguments, and the ops around the
// function in its module (the meshes the verifier resolves sharding
// symbols against). Attributes and types are uniqued, so their addresses
// stand for their contents; hashing addresses makes the fingerprint a walk
// over the IR, far cheaper than the verifier it saves.
//
//===----------------------------------------------------------------------===//

#include "FunctionPlan.h"
#include "KernelImpl.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Interpreter/Interpreter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/Hashing.h"

#include <list>
#include <mutex>

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;

LogicalResult shardc::detail::checkExecutableValue(Value value,
                                                   Operation *anchor,
                                                   uint64_t maxBytes) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return anchor->emitError()
           << describeValue(value) << " has type " << value.getType()
           << "; only statically shaped tensors can be "
              "executed";
  std::optional<DType> dtype = executableDType(type.getElementType());
  if (!dtype)
    return anchor->emitError()
           << describeValue(value) << " has type " << type
           << "; only f32, bf16, f16, i1, i32 and i64 are executed ("
           << type.getElementType() << " is not supported yet)";
  if (llvm::Error err = checkTensorFits(type.getShape(), maxBytes, *dtype))
    return anchor->emitError()
           << describeValue(value) << ": " << llvm::toString(std::move(err));
  return success();
}

/// The ops the interpreter can run.
static bool isSupportedOp(Operation *op) {
  return isa_and_nonnull<ShardcDialect>(op->getDialect()) && !isa<MeshOp>(op) &&
         op->getNumResults() == 1 && op->getNumRegions() == 0;
}

/// Checks every op and value of `body` against the options, then verifies
/// `func`: what the kernels rely on, before anything is computed.
static LogicalResult checkBody(func::FuncOp func, Block &body,
                               uint64_t maxTensorBytes) {
  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      if (&op != body.getTerminator() ||
          ret.getNumOperands() != func.getNumResults())
        return op.emitError("the function must end with a return of its "
                            "results");
      continue;
    }
    if (!isSupportedOp(&op))
      return op.emitError() << "'" << op.getName()
                            << "' cannot be executed by the interpreter";
    for (Value result : op.getResults())
      if (failed(checkExecutableValue(result, &op, maxTensorBytes)))
        return failure();
  }
  if (!isa<func::ReturnOp>(body.back()))
    return func.emitError("the function body must end with func.return");
  // Last, so that the messages above (about sizes and dtypes) win; the
  // kernels rely on the verified invariants.
  return mlir::verify(func);
}

static llvm::hash_code hashOp(Operation *op, llvm::hash_code hash) {
  hash = llvm::hash_combine(hash, op, op->getName().getAsOpaquePointer(),
                            op->getRawDictionaryAttrs().getAsOpaquePointer(),
                            op->hashProperties(),
                            op->getLoc().getAsOpaquePointer());
  for (Value operand : op->getOperands())
    hash = llvm::hash_combine(hash, operand.getAsOpaquePointer());
  for (Type type : op->getResultTypes())
    hash = llvm::hash_combine(hash, type.getAsOpaquePointer());
  for (Region &region : op->getRegions())
    for (Block &block : region) {
      hash = llvm::hash_combine(hash, &block);
      for (BlockArgument arg : block.getArguments())
        hash = llvm::hash_combine(hash, arg.getAsOpaquePointer(),
                                  arg.getType().getAsOpaquePointer());
    }
  return hash;
}

/// A hash of `func`'s IR and of the other top-level ops of its module.
static llvm::hash_code fingerprint(func::FuncOp func) {
  llvm::hash_code hash = llvm::hash_value(0);
  func->walk([&](Operation *op) { hash = hashOp(op, hash); });
  if (auto module = dyn_cast_or_null<ModuleOp>(func->getParentOp()))
    for (Operation &op : *module.getBody())
      if (&op != func.getOperation() && !isa<func::FuncOp>(op))
        op.walk([&](Operation *nested) { hash = hashOp(nested, hash); });
  return hash;
}

namespace {
struct CachedPlan {
  Operation *func;
  uint64_t maxTensorBytes;
  bool fuse;
  llvm::hash_code fingerprint;
  std::shared_ptr<const FunctionPlan> plan;
};

/// The plans of the functions run last, most recent first. A process runs
/// one training step, or a pipeline's stage programs (one per stage, run
/// at once), over and over: a few dozen cover them.
class PlanCache {
public:
  FailureOr<std::shared_ptr<const FunctionPlan>>
  get(func::FuncOp func, uint64_t maxTensorBytes, bool fuse) {
    llvm::hash_code hash = fingerprint(func);
    // Held while planning, so that the devices of one run plan once.
    std::lock_guard<std::mutex> lock(mutex);
    for (auto it = plans.begin(); it != plans.end(); ++it)
      if (it->func == func.getOperation() &&
          it->maxTensorBytes == maxTensorBytes && it->fuse == fuse &&
          it->fingerprint == hash) {
        plans.splice(plans.begin(), plans, it);
        return plans.front().plan;
      }
    Block &body = func.getBody().front();
    if (failed(checkBody(func, body, maxTensorBytes)))
      return failure();
    auto plan = std::make_shared<FunctionPlan>();
    if (fuse)
      plan->fusion.emplace(body);
    // Where each op's result is computed (its own position, or that of the
    // group it is fused into).
    llvm::DenseMap<Operation *, size_t> computedAt;
    for (auto [index, op] : llvm::enumerate(body)) {
      size_t at = plan->fusion ? plan->fusion->position(&op) : index;
      computedAt[&op] = at;
      for (Value result : op.getResults())
        plan->lastUse[result] = at; // unused values die where they are born
      for (Value operand : op.getOperands())
        plan->lastUse[operand] = std::max(plan->lastUse.lookup(operand), at);
    }
    for (auto [index, op] : llvm::enumerate(body)) {
      if (!canStartCollective(&op) || op.getNumOperands() != 1)
        continue;
      Value operand = op.getOperand(0);
      Operation *producer = operand.getDefiningOp();
      if (!producer || !operand.hasOneUse() ||
          plan->lastUse.lookup(op.getResult(0)) == index)
        continue;
      size_t computed = computedAt.lookup(producer);
      if (computed + 1 < index)
        plan->reductionStarts[computed].push_back(&op);
    }
    plans.push_front({func.getOperation(), maxTensorBytes, fuse, hash, plan});
    if (plans.size() > kCapacity)
      plans.pop_back();
    return std::shared_ptr<const FunctionPlan>(std::move(plan));
  }

private:
  static constexpr size_t kCapacity = 32;
  std::mutex mutex;
  std::list<CachedPlan> plans;
};
} // namespace

FailureOr<std::shared_ptr<const FunctionPlan>>
shardc::detail::getFunctionPlan(func::FuncOp func, uint64_t maxTensorBytes,
                                bool fuse) {
  static PlanCache cache;
  return cache.get(func, maxTensorBytes, fuse);
}

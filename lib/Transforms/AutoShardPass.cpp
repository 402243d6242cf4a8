//===- AutoShardPass.cpp - the plan, written back -------------------------===//
//
// `--shardc-auto-shard`: plans each function (AutoShard.cpp) and writes the
// plan into it as annotations, with a `sharding_constraint` wherever a
// consumer needs another layout (docs/auto-sharding.md, "The plan, written
// back").
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/MeshLookup.h"
#include "shardc/Dialect/TensorOpBuilders.h"
#include "shardc/Support/ByteSize.h"
#include "shardc/Transforms/AutoShard.h"
#include "shardc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace shardc {
#define GEN_PASS_DEF_SHARDCAUTOSHARD
#include "shardc/Transforms/Passes.h.inc"
} // namespace shardc

using namespace mlir;
using namespace shardc;

void shardc::applyAutoShardPlan(func::FuncOp func, const AutoShardPlan &plan) {
  const AutoShardPlan::Assignment &a = plan.assignment;
  StringRef name = ShardcDialect::getShardingAttrName();
  for (auto [i, s] : llvm::enumerate(a.arguments))
    if (s)
      func.setArgAttr(i, name, s);
  for (auto [i, s] : llvm::enumerate(a.functionResults))
    if (s)
      func.setResultAttr(i, name, s);
  for (auto [op, s] : a.results)
    op->setAttr(name, s);
  // One constraint per (value, layout), before its first consumer (moves
  // are in program order), shared by the later ones: the partitioner
  // reshards it once.
  llvm::DenseMap<std::pair<Value, Attribute>, Value> made;
  OpBuilder builder(func.getContext());
  for (auto [op, operand, s] : a.moves) {
    Value v = op->getOperand(operand);
    Value &moved = made[{v, s}];
    if (!moved) {
      builder.setInsertionPoint(op);
      moved = buildShardingConstraint(builder, v.getLoc(), v, s);
    }
    op->setOperand(operand, moved);
  }
}

bool shardc::isMemoryBudgetSpelling(StringRef text) {
  return text.empty() || text == kNoMemoryBudget ||
         parseByteSize(text).has_value();
}

FailureOr<AutoShardOptions>
shardc::resolveAutoShardOptions(const ShardcAutoShardOptions &flags,
                                Operation *diagnosticsAt) {
  AutoShardOptions options;
  options.timeLimitSeconds = flags.timeLimit;
  llvm::Expected<MachineModel> machineModel = resolveMachineModel(
      flags.machine, flags.linkLatency, flags.linkBandwidth, flags.flopRate);
  if (!machineModel) {
    diagnosticsAt->emitError() << llvm::toString(machineModel.takeError());
    return failure();
  }
  options.machine = std::move(*machineModel);
  if (flags.memoryBudget == kNoMemoryBudget)
    return options;
  if (flags.memoryBudget.empty()) {
    // A device holds what its memory holds: a plan the machine cannot run
    // is no plan (docs/auto-sharding.md, "Memory").
    if (options.machine.memoryBytes > 0) {
      options.memoryBudgetBytes = options.machine.memoryBytes;
      options.memoryBudgetFromMachine = true;
    }
    return options;
  }
  std::optional<int64_t> bytes = parseByteSize(flags.memoryBudget);
  if (!bytes) {
    diagnosticsAt->emitError()
        << "bad memory budget '" << flags.memoryBudget
        << "': expected bytes, with an optional K, M or G, or 'none'";
    return failure();
  }
  options.memoryBudgetBytes = *bytes;
  return options;
}

namespace {
struct AutoShardPass : public shardc::impl::ShardcAutoShardBase<AutoShardPass> {
  using ShardcAutoShardBase::ShardcAutoShardBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<AutoShardOptions> resolved =
        resolveAutoShardOptions({memoryBudget, timeLimit, machine, linkLatency,
                                 linkBandwidth, flopRate},
                                module);
    if (failed(resolved))
      return signalPassFailure();
    const AutoShardOptions &options = *resolved;
    for (func::FuncOp func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || func->hasAttr(ShardcDialect::getSpmdAttrName()))
        continue;
      FailureOr<MeshOp> mesh = getFunctionMesh(func);
      if (failed(mesh))
        return signalPassFailure();
      FailureOr<AutoShardPlan> plan = planAutoSharding(func, *mesh, options);
      if (failed(plan))
        return signalPassFailure();
      applyAutoShardPlan(func, *plan);
    }
  }
};
} // namespace

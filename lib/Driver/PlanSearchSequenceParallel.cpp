//===- PlanSearchSequenceParallel.cpp - the residual stream split ---------===//
//
// Sequence parallelism (Korthikanti et al. 2022) in the whole-plan search:
// the residual stream's values split over the data axis along dim 0 and
// over the model axis along dim 1, the sequence, as plan rules applied as
// any plan is; propagation and the partitioner then split the LayerNorms
// and the residual adds along the sequence (docs/whole-plan.md).
//
//===----------------------------------------------------------------------===//

#include "shardc/Driver/PlanSearch.h"

#include "shardc/Dialect/FunctionInterface.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Import/ShardingPlan.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace shardc;

FailureOr<std::vector<std::pair<std::string, llvm::json::Value>>>
shardc::applySequenceParallelism(
    ModuleOp module, const GraphVariant &graph,
    const PlanSearchRequest &request,
    const std::vector<std::pair<std::string, int64_t>> &axes) {
  func::FuncOp func = getEntryFunction(module);
  if (!func)
    return failure();
  llvm::StringSet<> residual;
  for (const std::string &name : graph.residualStream())
    residual.insert(name);
  ShardingPlan plan;
  for (const auto &[name, size] : axes)
    plan.axes.emplace_back(name, size);
  std::vector<std::pair<std::string, llvm::json::Value>> rules;
  func.walk([&](Operation *op) {
    if (op->getNumResults() != 1)
      return;
    Value v = op->getResult(0);
    StringRef name = getSourceName(v);
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!residual.contains(name) || !type || type.getRank() < 2)
      return;
    ShardingPlan::Rule rule{name.str(), {}};
    llvm::json::Array spec;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      const std::string *axis = d == 0   ? &request.dataAxis
                                : d == 1 ? &request.modelAxis
                                         : nullptr;
      rule.dims.emplace_back();
      if (axis)
        rule.dims.back().push_back(*axis);
      spec.push_back(axis ? llvm::json::Value(*axis) : nullptr);
    }
    plan.rules.push_back(std::move(rule));
    rules.emplace_back(name.str(), std::move(spec));
  });
  if (llvm::Error e = applyShardingPlan(module, plan, "<sequence parallel>")) {
    emitError(module.getLoc()) << llvm::toString(std::move(e));
    return failure();
  }
  return rules;
}

//===- PlanSearchTensorShardings.cpp - each mesh's tensor shardings -------===//
//
// A model without tensor-parallel annotations (an import, an export from
// PyTorch, a graph written by hand) gets its tensor shardings from the
// tensor auto-sharder (docs/auto-sharding.md) for each mesh the whole-plan
// search tries: the training step of its first layer alone, on the mesh
// [data=d, model=t] at the micro-batch's batch, is planned by cost as
// `train --auto-shard` plans a step, and the layouts the plan gives the
// inputs become every layer's annotations (PlanSearch.h). The first layer
// is the whole problem of a stack of identical layers, so the solve does
// not grow with the depth; the pipeline axis splits no tensor, so it is
// left out.
//
//===----------------------------------------------------------------------===//

#include "shardc/Driver/PlanSearch.h"

#include "shardc/Dialect/FunctionInterface.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Import/JsonImporter.h"
#include "shardc/Transforms/AutoShard.h"

using namespace mlir;
using namespace shardc;
namespace json = llvm::json;

/// `sharding` as a JSON PartitionSpec: per dim null, an axis, or a list of
/// axes, major first.
static json::Value specOf(ShardingAttr sharding) {
  json::Array spec;
  for (size_t d = 0; d < sharding.getRank(); ++d) {
    llvm::SmallVector<llvm::StringRef> axes = sharding.getDimAxes(d);
    if (axes.empty())
      spec.push_back(nullptr);
    else if (axes.size() == 1)
      spec.push_back(axes.front());
    else
      spec.push_back(json::Array(axes));
  }
  return spec;
}

FailureOr<GraphVariant::InputShardings>
shardc::solveTensorShardings(const GraphVariant &graph, MLIRContext *ctx,
                             const PlanSearchRequest &request, int64_t data,
                             int64_t model, int64_t batch) {
  std::vector<std::pair<std::string, int64_t>> axes = {
      {request.dataAxis, data}, {request.modelAxis, model}};
  // No annotation at all: the auto-sharder chooses every one.
  GraphVariant::InputShardings none;
  std::string text =
      graph.variant(batch, std::min<int64_t>(graph.layers(), 1), axes, &none);
  OwningOpRef<ModuleOp> module =
      importJsonGraph(text, "<whole-plan tensor shardings>", ctx);
  if (!module)
    return failure();
  // The step the estimate prices (its optimizer; recompute and ZeRO, which
  // the search chooses afterwards, left out).
  ShardcTrainingStepOptions step;
  step.optimizer = request.base.optimizer;
  step.layerInputs = request.base.options.layerInputs;
  ShardcAutoShardOptions autoShard;
  autoShard.machine = request.base.machinePath;
  if (failed(pinAutoShardPlan(*module, &step, autoShard)))
    return failure();
  func::FuncOp func = getEntryFunction(*module);
  if (!func)
    return failure();
  GraphVariant::InputShardings out;
  StringRef key = ShardcDialect::getShardingAttrName();
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto sharding = func.getArgAttrOfType<ShardingAttr>(i, key))
      // A pending sum is not a layout an input can be given.
      if (!sharding.isPartial())
        out.insert_or_assign(getArgumentName(func, i), specOf(sharding));
  return out;
}

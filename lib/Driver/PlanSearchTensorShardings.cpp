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
// left out. A layout solved on one mesh is given to another of the same
// model-axis size when it splits every input evenly there
// (shardingsDivide).
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

bool shardc::shardingsDivide(const GraphVariant &graph,
                             const GraphVariant::InputShardings &shardings,
                             const PlanSearchRequest &request, int64_t model,
                             int64_t data, int64_t batch) {
  std::vector<std::pair<std::string, int64_t>> axes = {
      {request.dataAxis, data}, {request.modelAxis, model}};
  // The variant gives each input its layout (or its first layer's peer's):
  // checked on the graph the mesh's candidates are priced on.
  llvm::Expected<json::Value> parsed = json::parse(graph.variant(
      batch, std::min<int64_t>(graph.layers(), 1), axes, &shardings));
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return false;
  }
  llvm::StringMap<int64_t> sizeOf;
  for (const auto &[name, size] : axes)
    sizeOf[name] = size;
  auto axisSize = [&](const json::Value &axis) -> int64_t {
    std::optional<llvm::StringRef> name = axis.getAsString();
    return name && sizeOf.count(*name) ? sizeOf.lookup(*name) : 0;
  };
  const json::Object *root = parsed->getAsObject();
  const json::Array *inputs = root ? root->getArray("inputs") : nullptr;
  if (!inputs)
    return false;
  for (const json::Value &input : *inputs) {
    const json::Object *o = input.getAsObject();
    const json::Array *shape = o ? o->getArray("shape") : nullptr;
    const json::Array *spec = o ? o->getArray("sharding") : nullptr;
    if (!spec)
      continue;
    if (!shape || shape->size() < spec->size())
      return false;
    for (size_t d = 0; d < spec->size(); ++d) {
      const json::Value &entry = (*spec)[d];
      int64_t devices = 1;
      if (entry.getAsString()) {
        devices = axisSize(entry);
      } else if (const json::Array *list = entry.getAsArray()) {
        for (const json::Value &axis : *list)
          devices *= axisSize(axis);
      }
      std::optional<int64_t> extent = (*shape)[d].getAsInteger();
      if (devices <= 0 || !extent || *extent % devices != 0)
        return false;
    }
  }
  return true;
}

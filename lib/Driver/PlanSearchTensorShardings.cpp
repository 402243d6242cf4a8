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
// (shardingsDivide). The search's side of it — which meshes are solved,
// which borrow, the refinement rounds, each mesh keeping the layout whose
// best plan is fastest — is the Searcher's (PlanSearcher.h), here too.
//
//===----------------------------------------------------------------------===//

#include "shardc/Driver/PlanSearch.h"

#include "PlanSearcher.h"

#include "shardc/Dialect/FunctionInterface.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Import/JsonImporter.h"
#include "shardc/Transforms/AutoShard.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;
namespace json = llvm::json;

/// A PartitionSpec's entry for a dim split over `axes`, major first: null
/// for none, the axis for one, the list for several.
static json::Value specDim(json::Array axes) {
  if (axes.empty())
    return nullptr;
  if (axes.size() == 1)
    return std::move(axes.front());
  return std::move(axes);
}

/// `sharding` as a JSON PartitionSpec: per dim null, an axis, or a list of
/// axes, major first.
static json::Value specOf(ShardingAttr sharding) {
  json::Array spec;
  for (size_t d = 0; d < sharding.getRank(); ++d)
    spec.push_back(specDim(json::Array(sharding.getDimAxes(d))));
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
  // The solve's diagnostics (a work limit reached, say) name its mesh.
  std::string source = "<the first layer's step on " + request.dataAxis + "=" +
                       std::to_string(data) + " " + request.modelAxis + "=" +
                       std::to_string(model) + ">";
  OwningOpRef<ModuleOp> module = importJsonGraph(text, source, ctx);
  if (!module)
    return failure();
  // The step the estimate prices (its optimizer; recompute and ZeRO, which
  // the search chooses afterwards, left out).
  ShardcTrainingStepOptions step;
  step.optimizer = request.base.optimizer;
  step.layerInputs = request.base.options.layerInputs;
  ShardcAutoShardOptions autoShard;
  autoShard.machine = request.base.machinePath;
  // Unbudgeted: this step is one layer at one micro-batch, without the
  // pipeline's in-flight activations, ZeRO or recompute, so the device's
  // memory would bound the wrong quantity; the search prices each whole
  // plan's memory against it instead.
  autoShard.memoryBudget = kNoMemoryBudget.str();
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

GraphVariant::InputShardings
shardc::withWeightsWholeOverData(const GraphVariant &graph,
                                 const GraphVariant::InputShardings &layout,
                                 StringRef dataAxis) {
  auto isData = [&](const json::Value &axis) {
    return axis.getAsString() == std::optional<StringRef>(dataAxis);
  };
  GraphVariant::InputShardings out;
  for (const auto &entry : layout) {
    const json::Array *spec = entry.getValue().getAsArray();
    if (!spec || graph.carriesBatch(entry.getKey())) {
      out.insert_or_assign(entry.getKey(), entry.getValue());
      continue;
    }
    json::Array whole;
    for (const json::Value &dim : *spec) {
      if (const json::Array *axes = dim.getAsArray()) {
        json::Array kept;
        for (const json::Value &axis : *axes)
          if (!isData(axis))
            kept.push_back(axis);
        whole.push_back(specDim(std::move(kept)));
      } else {
        whole.push_back(isData(dim) ? json::Value(nullptr) : dim);
      }
    }
    out.insert_or_assign(entry.getKey(), std::move(whole));
  }
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

LogicalResult
Searcher::solveMeshes(const std::vector<std::pair<int64_t, int64_t>> &meshes,
                      std::vector<GraphVariant::InputShardings> &solved) {
  solved.assign(meshes.size(), {});
  int64_t micro = result.tensorShardingBatch;
  ParallelDiagnosticHandler diagnostics(ctx);
  auto solve = [&](size_t i) -> LogicalResult {
    auto [t, d] = meshes[i];
    FailureOr<GraphVariant::InputShardings> s =
        solveTensorShardings(graph, ctx, request, d, t, micro * d);
    if (failed(s))
      return failure();
    solved[i] = std::move(*s);
    return success();
  };
  // The first alone: it loads the dialects the passes need.
  if (!meshes.empty() && failed(solve(0)))
    return failure();
  if (failed(failableParallelForEachN(ctx, std::min<size_t>(1, meshes.size()),
                                      meshes.size(), [&](size_t i) {
                                        diagnostics.setOrderIDForThread(i);
                                        LogicalResult r = solve(i);
                                        diagnostics.eraseOrderIDForThread();
                                        return r;
                                      })))
    return failure();
  result.tensorShardingSolves += int64_t(meshes.size());
  return success();
}

LogicalResult Searcher::solveTensorShardingsPerMesh(
    const std::vector<PlanCandidate> &survivors) {
  std::map<int64_t, std::vector<int64_t>> dataSizes; // by model-axis size
  for (const PlanCandidate &c : survivors)
    dataSizes[c.model].push_back(c.data);
  // Solved at the smallest micro-batch tried: a layout's compute and its
  // activations' collectives grow alike with the batch, so the smallest
  // problem stands for each (the weights' gradient reductions, which do
  // not grow, then weigh the most).
  int64_t micro = *llvm::min_element(request.microBatchSizes);
  result.tensorShardingBatch = micro;
  // One representative mesh per model-axis size: the widest data axis.
  // The meshes of one t differ only in how wide the data axis is; the
  // widest prices the data axis's collectives (the weights' gradient
  // reductions, a gathered weight) where they weigh the most, and a layout
  // that splits the inputs evenly there does so on every data size
  // dividing it. The refinement then solves the best plan's mesh.
  std::vector<std::pair<int64_t, int64_t>> representatives;
  for (auto &[t, ds] : dataSizes) {
    llvm::sort(ds);
    ds.erase(std::unique(ds.begin(), ds.end()), ds.end());
    if (request.representativeSolves)
      representatives.emplace_back(t, ds.back());
    else
      for (int64_t d : ds)
        representatives.emplace_back(t, d);
  }
  std::vector<GraphVariant::InputShardings> solved;
  if (failed(solveMeshes(representatives, solved)))
    return failure();
  // Every other mesh borrows its representative's layout when the layout
  // splits its inputs evenly there; the rest are solved on their own.
  std::vector<std::pair<int64_t, int64_t>> own;
  for (auto [i, rep] : llvm::enumerate(representatives)) {
    auto [t, repData] = rep;
    result.tensorShardings[rep] = solved[i];
    result.tensorShardingsSolvedAt[rep] = repData;
    for (int64_t d : dataSizes[t]) {
      if (d == repData || !request.representativeSolves)
        continue;
      if (!shardingsDivide(graph, solved[i], request, t, d, micro * d)) {
        own.emplace_back(t, d);
        continue;
      }
      result.tensorShardings[{t, d}] = solved[i];
      result.tensorShardingsSolvedAt[{t, d}] = repData;
    }
  }
  if (failed(solveMeshes(own, solved)))
    return failure();
  for (auto [i, mesh] : llvm::enumerate(own)) {
    result.tensorShardings[mesh] = std::move(solved[i]);
    result.tensorShardingsSolvedAt[mesh] = mesh.second;
  }
  return success();
}

LogicalResult Searcher::tryLayout(const GraphVariant::InputShardings &layout,
                                  int64_t model, int64_t solvedAt,
                                  const std::vector<PlanCandidate> &survivors) {
  using Mesh = std::pair<int64_t, int64_t>;
  // The meshes of `model` the layout splits evenly. A mesh that already
  // has the same layout (its own; the solver often finds the
  // representative's again) would price the same programs to the same
  // plans, a tie it keeps its own layout on: it is not priced again.
  std::vector<Mesh> meshes;
  for (const auto &[mesh, at] : result.tensorShardingsSolvedAt)
    if (mesh.first == model && result.tensorShardings.at(mesh) != layout &&
        (mesh.second == solvedAt ||
         shardingsDivide(graph, layout, request, model, mesh.second,
                         result.tensorShardingBatch * mesh.second)))
      meshes.push_back(mesh);
  if (meshes.empty())
    return success();
  std::map<ProgramKey, std::vector<PlanCandidate>> byKey;
  for (const PlanCandidate &c : survivors)
    if (llvm::is_contained(meshes, Mesh{c.model, c.data}))
      byKey[keyOf(c)].push_back(c);
  std::vector<std::vector<PlanCandidate>> groups;
  for (auto &[key, group] : byKey)
    groups.push_back(std::move(group));
  std::vector<PlanCandidate> current = std::move(result.candidates);
  result.candidates.clear();
  trialLayout = &layout;
  trialModel = model;
  LogicalResult priced = priceGroups(std::move(groups));
  trialLayout = nullptr;
  std::vector<PlanCandidate> trial = std::move(result.candidates);
  result.candidates = std::move(current);
  if (failed(priced))
    return failure();
  // Each mesh keeps the layout whose best plan is faster (the one it had
  // on a tie).
  auto bestOf = [&](const std::vector<PlanCandidate> &from, const Mesh &mesh) {
    const PlanCandidate *best = nullptr;
    for (const PlanCandidate &c : from)
      if (Mesh{c.model, c.data} == mesh && (!best || faster(c, *best)))
        best = &c;
    return best;
  };
  std::vector<Mesh> improved;
  for (const Mesh &mesh : meshes) {
    const PlanCandidate *now = bestOf(result.candidates, mesh);
    const PlanCandidate *then = bestOf(trial, mesh);
    if (then && (!now || faster(*then, *now)))
      improved.push_back(mesh);
  }
  if (improved.empty())
    return success();
  auto isImproved = [&](const PlanCandidate &c) {
    return llvm::is_contained(improved, Mesh{c.model, c.data});
  };
  llvm::erase_if(result.candidates, isImproved);
  for (PlanCandidate &c : trial)
    if (isImproved(c))
      result.candidates.push_back(std::move(c));
  for (const Mesh &mesh : improved) {
    result.tensorShardings[mesh] = layout;
    result.tensorShardingsSolvedAt[mesh] = solvedAt;
  }
  std::stable_sort(result.candidates.begin(), result.candidates.end(), faster);
  return success();
}

LogicalResult
Searcher::tryWholeWeights(const GraphVariant::InputShardings &solved,
                          std::pair<int64_t, int64_t> mesh,
                          const std::vector<PlanCandidate> &survivors) {
  GraphVariant::InputShardings whole =
      withWeightsWholeOverData(graph, solved, request.dataAxis);
  return whole == solved ? success()
                         : tryLayout(whole, mesh.first, mesh.second, survivors);
}

LogicalResult
Searcher::refineTensorShardings(const std::vector<PlanCandidate> &survivors) {
  using Mesh = std::pair<int64_t, int64_t>;
  for (const auto &[mesh, at] : result.tensorShardingsSolvedAt)
    if (at == mesh.second)
      solvedOwn.insert(mesh);
  std::vector<std::pair<Mesh, GraphVariant::InputShardings>> solvedLayouts;
  for (const Mesh &mesh : solvedOwn)
    solvedLayouts.emplace_back(mesh, result.tensorShardings.at(mesh));
  for (const auto &[mesh, layout] : solvedLayouts)
    if (failed(tryWholeWeights(layout, mesh, survivors)))
      return failure();
  // Until the meshes of the best `refinedMeshes` plans have each been
  // solved on their own: each round solves those that have not, and
  // offers each new layout to every mesh of its model-axis size.
  while (true) {
    std::vector<Mesh> best, refined;
    for (const PlanCandidate &c : result.candidates) {
      Mesh mesh{c.model, c.data};
      if (!c.fits || llvm::is_contained(best, mesh))
        continue;
      best.push_back(mesh);
      if (!solvedOwn.count(mesh))
        refined.push_back(mesh);
      if (int64_t(best.size()) >= request.refinedMeshes)
        break;
    }
    if (refined.empty())
      return success();
    std::vector<GraphVariant::InputShardings> solved;
    if (failed(solveMeshes(refined, solved)))
      return failure();
    for (auto [i, mesh] : llvm::enumerate(refined)) {
      solvedOwn.insert(mesh);
      if (failed(tryLayout(solved[i], mesh.first, mesh.second, survivors)) ||
          failed(tryWholeWeights(solved[i], mesh, survivors)))
        return failure();
    }
  }
}

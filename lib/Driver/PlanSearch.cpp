//===- PlanSearch.cpp - the whole parallel plan, chosen by estimate -------===//
//
// Enumerates the plans the device count allows, prunes what cannot work
// without building anything, prices the rest on the representative problem
// and the best few on the whole model (PlanSearch.h).
//
//===----------------------------------------------------------------------===//

#include "shardc/Driver/PlanSearch.h"

#include "shardc/Driver/ImportedVariants.h"

#include "shardc/Dialect/FunctionInterface.h"
#include "shardc/Dialect/MeshLookup.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Import/JsonImporter.h"
#include "shardc/Import/ShardingPlan.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Threading.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

using namespace mlir;
using namespace shardc;

namespace {

/// What makes two candidates the same partitioned program: the pipeline
/// size follows from the other two sizes, and recompute and the schedule
/// are options of the estimate.
using ProgramKey = std::tuple<int64_t, int64_t, int64_t, bool, bool>;

ProgramKey keyOf(const PlanCandidate &c) {
  return {c.model, c.data, c.microBatch, c.zero, c.sequenceParallel};
}

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t i = 1; i <= n; ++i)
    if (n % i == 0)
      out.push_back(i);
  return out;
}

/// The interleaved schedule's chunk counts v a stage of `stageLayers` layers
/// allows with `microbatches` micro-batches on `stages` stages: v divides
/// the stage's layers, the micro-batches come in rounds of the stages, and
/// v is at most 8 (each chunk adds two sends per micro-batch; past that
/// the bubble they save is small).
std::vector<int64_t> interleavings(int64_t stageLayers, int64_t microbatches,
                                   int64_t stages) {
  std::vector<int64_t> out;
  if (microbatches % stages != 0)
    return out;
  for (int64_t v : divisors(stageLayers))
    if (v >= 2 && v <= 8)
      out.push_back(v);
  return out;
}

class Searcher {
public:
  Searcher(const GraphVariant &graph, MLIRContext *ctx,
           const PlanSearchRequest &request)
      : graph(graph), ctx(ctx), request(request) {}

  FailureOr<PlanSearchResult> run(std::string &error);

private:
  /// The estimate options of `c` (its pipeline, micro-batches, recompute,
  /// schedule and ZeRO accounting).
  EstimateOptions optionsOf(const PlanCandidate &c) const {
    EstimateOptions o = request.base.options;
    o.pipelineAxis = c.pipe > 1 ? request.pipeAxis : "";
    o.microbatches = c.microbatches;
    o.recompute = c.recompute;
    o.schedule = c.schedule;
    o.virtualStages = c.virtualStages;
    o.zeroStage = c.zero ? 2 : 0;
    return o;
  }

  /// A candidate's program, partitioned without recompute, and the walk of
  /// each recompute policy's copy of it, made as candidates ask.
  struct Program {
    OwningOpRef<ModuleOp> module;
    double parameters = 0;
    std::map<Recompute, StepProfile> profiles;
  };

  /// Builds and partitions the program of `c`'s key at `keptLayers`.
  FailureOr<Program> partition(const PlanCandidate &c, int64_t keptLayers);

  /// The walk of `program` for `member`'s recompute policy (made once per
  /// policy and kept in the program).
  FailureOr<const StepProfile *> profileOf(Program &program,
                                           const PlanCandidate &member);

  /// The estimate of `member` (of the program's key) on `program`.
  FailureOr<StepEstimate> estimate(Program &program,
                                   const PlanCandidate &member);

  /// Builds the program of `group`'s key at `keptLayers` layers and walks
  /// it for each candidate of the group.
  FailureOr<std::vector<StepProfile>>
  profile(const std::vector<PlanCandidate> &group, int64_t keptLayers);

  /// Prices the group on the representative problem (or the whole model,
  /// when it has at most two layers).
  LogicalResult priceGroup(std::vector<PlanCandidate> &group);

  /// Prices every group (the candidates of one program each) on the
  /// context's threads and collects them in `result`.
  LogicalResult priceGroups(std::vector<std::vector<PlanCandidate>> groups);

  /// The tensor auto-sharder's shardings for every mesh (model, data) of
  /// `survivors`, solved on the context's threads into `result`.
  LogicalResult
  solveTensorShardingsPerMesh(const std::vector<PlanCandidate> &survivors);

  /// The tensor auto-sharder's shardings for each of `meshes` (model,
  /// data), solved on the context's threads.
  LogicalResult
  solveMeshes(const std::vector<std::pair<int64_t, int64_t>> &meshes,
              std::vector<GraphVariant::InputShardings> &solved);
  /// Solves the meshes of the best `refinedMeshes` plans that borrowed
  /// their layout, prices their candidates again on it, and keeps, per
  /// mesh, the layout whose best plan is faster.
  LogicalResult
  refineTensorShardings(const std::vector<PlanCandidate> &survivors);

  /// Prices `survivors`' candidates on each other mesh of model-axis size
  /// `model` (with data size `solvedAt`, the layout's own) with `layout`,
  /// solved at data `solvedAt`, where it splits evenly, and gives it to
  /// the meshes whose best plan it makes faster.
  LogicalResult tryLayout(const GraphVariant::InputShardings &layout,
                          int64_t model, int64_t solvedAt,
                          const std::vector<PlanCandidate> &survivors);
  /// The meshes (model, data) solved on their own (their layout is also
  /// tried on the others of their model-axis size as it is solved).
  std::set<std::pair<int64_t, int64_t>> solvedOwn;
  /// While tryLayout prices: the layout of the model-axis size's meshes.
  const GraphVariant::InputShardings *trialLayout = nullptr;
  int64_t trialModel = 0;

  /// Fitting plans first, each group by step time (unfitting by peak).
  static bool faster(const PlanCandidate &a, const PlanCandidate &b) {
    if (a.fits != b.fits)
      return a.fits;
    if (!a.fits)
      return a.estimate.peakBytes() < b.estimate.peakBytes();
    return a.estimate.stepSeconds() < b.estimate.stepSeconds();
  }

  LogicalResult
  splitSequence(ModuleOp module,
                const std::vector<std::pair<std::string, int64_t>> &axes);

  /// Every plan the devices, the batch and the model allow whose model
  /// states fit, counting what is pruned; `error` says why there is none.
  FailureOr<std::vector<PlanCandidate>> enumerate(std::string &error);

  /// The candidates of model axis `t`, data axis `d`, `p` stages and
  /// micro-batch size `b`: with and without ZeRO (when their model states
  /// fit), each recompute policy, each schedule.
  void addCandidates(int64_t t, int64_t d, int64_t p, int64_t b,
                     std::vector<PlanCandidate> &survivors);
  /// `c` with recompute `r` under each schedule its pipeline allows.
  void addSchedules(PlanCandidate c, Recompute r,
                    std::vector<PlanCandidate> &survivors);

  /// Prices the fastest fitting candidates on the whole model and sorts
  /// them first; `error` says so when none of them fits.
  LogicalResult priceBestOnWholeModel(
      llvm::function_ref<bool(const PlanCandidate &, const PlanCandidate &)>
          faster,
      std::string &error);

  bool fits(const StepEstimate &e) const {
    return request.base.machine.memoryBytes <= 0 ||
           e.peakBytes() <= double(request.base.machine.memoryBytes);
  }

  const GraphVariant &graph;
  MLIRContext *ctx;
  const PlanSearchRequest &request;
  PlanSearchResult result;
  /// The inputs' shardings are the auto-sharder's, per mesh.
  bool solving = false;
  /// Guards `result` while groups are priced in parallel.
  std::mutex resultMutex;
  /// The imported variants of the programs priced in this round
  /// (priceGroups; the layouts do not change meanwhile): ZeRO and sequence
  /// parallelism make up to four programs of each. Empty otherwise, so a
  /// whole model is never kept.
  /// (After `graph` and `ctx`, which it is made of.)
  ImportedVariants imports{graph, ctx};
  bool keepImports = false;
};

} // namespace

LogicalResult Searcher::splitSequence(
    ModuleOp module, const std::vector<std::pair<std::string, int64_t>> &axes) {
  FailureOr<std::vector<std::pair<std::string, llvm::json::Value>>> rules =
      applySequenceParallelism(module, graph, request, axes);
  if (failed(rules))
    return failure();
  // Kept for the plan file: the program with the most residual values.
  std::lock_guard<std::mutex> lock(resultMutex);
  if (rules->size() > result.sequenceParallelRules.size())
    result.sequenceParallelRules = std::move(*rules);
  return success();
}

FailureOr<Searcher::Program> Searcher::partition(const PlanCandidate &c,
                                                 int64_t keptLayers) {
  std::vector<std::pair<std::string, int64_t>> axes;
  if (c.pipe > 1)
    axes.emplace_back(request.pipeAxis, c.pipe);
  axes.emplace_back(request.dataAxis, c.data);
  axes.emplace_back(request.modelAxis, c.model);
  const GraphVariant::InputShardings *shardings = nullptr;
  if (trialLayout && c.model == trialModel)
    shardings = trialLayout;
  else if (solving)
    shardings = &result.tensorShardings.at({c.model, c.data});
  Program program;
  int64_t batch = c.microBatch * c.data;
  program.module =
      keepImports
          ? imports.get(batch, keptLayers, axes, shardings)
          : importJsonGraph(graph.variant(batch, keptLayers, axes, shardings),
                            "<whole-plan candidate>", ctx);
  if (!program.module)
    return failure();
  if (c.sequenceParallel && failed(splitSequence(*program.module, axes)))
    return failure();
  EstimateRequest step = request.base;
  step.zeroAxes.clear();
  if (c.zero)
    step.zeroAxes.push_back(request.dataAxis);
  // Partitioned once without recompute; each recompute policy rewrites a
  // copy (recompute is the program's, not the estimate's).
  step.options = optionsOf(c);
  step.options.recompute = Recompute::None;
  if (failed(partitionTraining(*program.module, step, program.parameters)))
    return failure();
  {
    std::lock_guard<std::mutex> lock(resultMutex);
    ++result.programsPartitioned;
  }
  return program;
}

FailureOr<const StepProfile *>
Searcher::profileOf(Program &program, const PlanCandidate &member) {
  EstimateOptions o = optionsOf(member);
  o.globalParameters = program.parameters;
  // Each recompute policy's program is walked once (profileStep); its
  // schedules and micro-batch counts only combine the walk's sums.
  auto it = program.profiles.find(member.recompute);
  if (it == program.profiles.end()) {
    OwningOpRef<ModuleOp> copy;
    ModuleOp walked = *program.module;
    if (member.recompute != Recompute::None) {
      copy = program.module->clone();
      if (failed(recomputeStep(*copy, o)))
        return failure();
      walked = *copy;
    }
    FailureOr<StepProfile> profile = profileStep(
        getEntryFunction(walked), getOnlyMesh(walked), request.base.machine, o);
    if (failed(profile))
      return failure();
    it = program.profiles.emplace(member.recompute, std::move(*profile)).first;
  }
  return &it->second;
}

FailureOr<StepEstimate> Searcher::estimate(Program &program,
                                           const PlanCandidate &member) {
  FailureOr<const StepProfile *> profile = profileOf(program, member);
  if (failed(profile))
    return failure();
  return scheduleStep(**profile, optionsOf(member));
}

FailureOr<std::vector<StepProfile>>
Searcher::profile(const std::vector<PlanCandidate> &group, int64_t keptLayers) {
  FailureOr<Program> program = partition(group.front(), keptLayers);
  if (failed(program))
    return failure();
  std::vector<StepProfile> out;
  for (const PlanCandidate &member : group) {
    FailureOr<const StepProfile *> p = profileOf(*program, member);
    if (failed(p))
      return failure();
    out.push_back(**p);
  }
  return out;
}

LogicalResult Searcher::priceGroup(std::vector<PlanCandidate> &group) {
  int64_t layers = graph.layers();
  if (layers <= 2) {
    FailureOr<std::vector<StepProfile>> whole = profile(group, layers);
    if (failed(whole))
      return failure();
    for (size_t i = 0; i < group.size(); ++i) {
      group[i].estimate = scheduleStep((*whole)[i], optionsOf(group[i]));
      group[i].wholeModel = true;
    }
  } else {
    FailureOr<std::vector<StepProfile>> one = profile(group, 1);
    if (failed(one))
      return failure();
    FailureOr<std::vector<StepProfile>> two = profile(group, 2);
    if (failed(two))
      return failure();
    for (size_t i = 0; i < group.size(); ++i)
      group[i].estimate =
          scheduleStep(extrapolateInDepth((*one)[i], (*two)[i], layers),
                       optionsOf(group[i]));
  }
  for (PlanCandidate &c : group)
    c.fits = fits(c.estimate);
  return success();
}

void Searcher::addCandidates(int64_t t, int64_t d, int64_t p, int64_t b,
                             std::vector<PlanCandidate> &survivors) {
  // The model states per parameter, for the memory lower bound: every
  // parameter split t·p ways (the layer norms are not, so the bound is
  // low), ZeRO dividing the gradients and the optimizer state by d too.
  RoleBytes bytes = roleBytes(request.base.options.precision);
  double optimizer = request.base.optimizer == "adam"
                         ? 2 * bytes.optimizerState + bytes.masterWeight
                         : bytes.masterWeight;
  double memory = double(request.base.machine.memoryBytes);
  for (bool zero : {false, true}) {
    if (zero && d == 1)
      continue;
    double states =
        graph.parameters() *
        (bytes.parameter + (bytes.gradient + optimizer) / (zero ? d : 1)) /
        double(t * p);
    if (memory > 0 && states > memory) {
      ++result.prunedByMemory;
      continue;
    }
    for (bool sp : {false, true}) {
      if (sp && t == 1)
        continue;
      PlanCandidate c;
      c.model = t, c.pipe = p, c.data = d, c.microBatch = b;
      c.microbatches = request.globalBatch / (b * d);
      c.zero = zero;
      c.sequenceParallel = sp;
      for (Recompute r :
           {Recompute::None, Recompute::Selective, Recompute::Full})
        addSchedules(c, r, survivors);
    }
  }
}

void Searcher::addSchedules(PlanCandidate c, Recompute r,
                            std::vector<PlanCandidate> &survivors) {
  c.recompute = r, c.virtualStages = 1;
  c.schedule = PipelineScheduleKind::OneFOneB;
  survivors.push_back(c);
  if (c.pipe == 1)
    return;
  c.schedule = PipelineScheduleKind::GPipe;
  survivors.push_back(c);
  // Interleaved: each device's layers cut into v equal chunks, the
  // micro-batches in rounds of p.
  c.schedule = PipelineScheduleKind::Interleaved;
  for (int64_t v :
       interleavings(graph.layers() / c.pipe, c.microbatches, c.pipe)) {
    c.virtualStages = v;
    survivors.push_back(c);
  }
}

FailureOr<std::vector<PlanCandidate>> Searcher::enumerate(std::string &error) {
  int64_t n = request.devices, batch = request.globalBatch;
  int64_t layers = graph.layers();
  int64_t maxModel =
      request.maxModelAxis > 0
          ? request.maxModelAxis
          : 2 * std::max<int64_t>(request.base.machine.devicesPerNode, 1);
  std::vector<PlanCandidate> survivors;
  int64_t factorisations = 0;
  for (int64_t t : divisors(n)) {
    if (t > maxModel)
      break;
    // A model that splits nothing over the model axis would compute the
    // same on each of its devices: only t = 1 is a plan. The auto-sharder
    // splits only what each t divides (or pads where every device keeps a
    // real element), so every t is one when it chooses.
    std::vector<int64_t> split = graph.splitByModelAxis(request.modelAxis);
    if (!solving &&
        ((split.empty() && t > 1) ||
         llvm::any_of(split, [&](int64_t size) { return size % t != 0; }))) {
      ++result.prunedByDivisibility;
      continue;
    }
    for (int64_t d : divisors(n / t)) {
      int64_t p = n / (t * d);
      // Stages hold whole layers, the same number each.
      if (p > 1 && (layers < p || layers % p != 0)) {
        ++result.prunedByDivisibility;
        continue;
      }
      for (int64_t b : request.microBatchSizes) {
        if (batch % (b * d) != 0) {
          ++result.prunedByDivisibility;
          continue;
        }
        ++factorisations;
        addCandidates(t, d, p, b, survivors);
      }
    }
  }
  if (factorisations == 0) {
    error = "--devices " + std::to_string(n) + " with --global-batch " +
            std::to_string(batch) +
            " has no factorisation data x pipe x model the model allows "
            "(the model axis must divide every size it splits, the pipeline "
            "the " +
            std::to_string(layers) +
            " layers, and data x micro-batch the global batch)";
    return failure();
  }
  return survivors;
}

LogicalResult Searcher::priceBestOnWholeModel(
    llvm::function_ref<bool(const PlanCandidate &, const PlanCandidate &)>
        faster,
    std::string &error) {
  int whole = 0;
  // Candidates of one program (a schedule or recompute apart) share its
  // partition on the whole model.
  std::map<ProgramKey, Program> programs;
  for (size_t i = 0;
       i < result.candidates.size() && whole < 3 * request.wholeModelPricings;
       ++i) {
    PlanCandidate &c = result.candidates[i];
    if (!c.fits)
      break;
    // Priced on the whole model in an earlier call: counted, not priced.
    if (!c.wholeModel) {
      auto it = programs.find(keyOf(c));
      if (it == programs.end()) {
        FailureOr<Program> program = partition(c, graph.layers());
        if (failed(program))
          return failure();
        it = programs.emplace(keyOf(c), std::move(*program)).first;
      }
      FailureOr<StepEstimate> e = estimate(it->second, c);
      if (failed(e))
        return failure();
      c.estimate = *e;
      c.wholeModel = true;
      c.fits = fits(c.estimate);
    }
    ++whole;
    // Enough: `wholeModelPricings` fitting ones.
    if (llvm::count_if(result.candidates, [](const PlanCandidate &x) {
          return x.wholeModel && x.fits;
        }) >= request.wholeModelPricings)
      break;
  }
  std::stable_sort(result.candidates.begin(), result.candidates.end(),
                   [&](const PlanCandidate &a, const PlanCandidate &b) {
                     // Whole-model figures outrank extrapolated ones.
                     bool ga = a.fits && a.wholeModel;
                     bool gb = b.fits && b.wholeModel;
                     if (ga != gb)
                       return ga;
                     return faster(a, b);
                   });
  if (!result.candidates.front().wholeModel ||
      !result.candidates.front().fits) {
    error = "no plan fits in " +
            std::to_string(request.base.machine.memoryBytes) +
            " bytes per device once priced on the whole model";
    return failure();
  }
  return success();
}

// The programs are independent: they are built and priced on the
// context's threads (none when its multithreading is off), and merged in
// key order, so the result does not depend on which finished first.
LogicalResult
Searcher::priceGroups(std::vector<std::vector<PlanCandidate>> groups) {
  // Imports kept for this round only (tryLayout's change the layouts).
  keepImports = true;
  {
    // Diagnostics of the workers come out in group order.
    ParallelDiagnosticHandler diagnostics(ctx);
    // The first runs alone: it loads every dialect the pipeline needs,
    // which must not happen on several threads at once.
    if (!groups.empty() && failed(priceGroup(groups.front())))
      return failure();
    LogicalResult priced = failableParallelForEachN(
        ctx, std::min<size_t>(1, groups.size()), groups.size(), [&](size_t i) {
          diagnostics.setOrderIDForThread(i);
          LogicalResult r = priceGroup(groups[i]);
          diagnostics.eraseOrderIDForThread();
          return r;
        });
    if (failed(priced))
      return failure();
  }
  keepImports = false;
  imports.clear();
  for (std::vector<PlanCandidate> &group : groups)
    result.candidates.insert(result.candidates.end(), group.begin(),
                             group.end());
  return success();
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
  // The meshes of `model` the layout splits evenly, but its own.
  // A mesh that already has the same layout (the solver often finds the
  // representative's again) would price the same programs to the same
  // plans, a tie it keeps its own layout on: it is not priced again.
  std::vector<Mesh> meshes;
  for (const auto &[mesh, at] : result.tensorShardingsSolvedAt)
    if (mesh.first == model && at != solvedAt &&
        result.tensorShardings.at(mesh) != layout &&
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
Searcher::refineTensorShardings(const std::vector<PlanCandidate> &survivors) {
  using Mesh = std::pair<int64_t, int64_t>;
  for (const auto &[mesh, at] : result.tensorShardingsSolvedAt)
    if (at == mesh.second)
      solvedOwn.insert(mesh);
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
      if (failed(tryLayout(solved[i], mesh.first, mesh.second, survivors)))
        return failure();
    }
  }
}

FailureOr<PlanSearchResult> Searcher::run(std::string &error) {
  result.layers = graph.layers();
  solving = request.tensorShardings == TensorShardingSource::Solve ||
            (request.tensorShardings == TensorShardingSource::Auto &&
             graph.splitByModelAxis(request.modelAxis).empty());
  result.tensorShardingsSolved = solving;
  FailureOr<std::vector<PlanCandidate>> survivors = enumerate(error);
  if (failed(survivors))
    return failure();
  if (solving && failed(solveTensorShardingsPerMesh(*survivors)))
    return failure();

  // One program per key, every option set priced on it.
  std::map<ProgramKey, std::vector<PlanCandidate>> byKey;
  for (const PlanCandidate &c : *survivors)
    byKey[keyOf(c)].push_back(c);
  std::vector<std::vector<PlanCandidate>> groups;
  for (auto &[key, group] : byKey)
    groups.push_back(std::move(group));
  if (failed(priceGroups(std::move(groups))))
    return failure();

  std::stable_sort(result.candidates.begin(), result.candidates.end(), faster);
  if (solving && request.representativeSolves) {
    if (failed(refineTensorShardings(*survivors)))
      return failure();
    std::stable_sort(result.candidates.begin(), result.candidates.end(),
                     faster);
  }
  if (result.candidates.empty() || !result.candidates.front().fits) {
    error = "no plan fits in " +
            std::to_string(request.base.machine.memoryBytes) +
            " bytes per device";
    if (!result.candidates.empty()) {
      const PlanCandidate &c = result.candidates.front();
      error += ": the smallest priced needs " +
               std::to_string(int64_t(c.estimate.peakBytes())) +
               " (model=" + std::to_string(c.model) +
               " pipe=" + std::to_string(c.pipe) +
               " data=" + std::to_string(c.data) + ")";
    } else {
      error += ": the model states alone exceed it on every factorisation";
    }
    return failure();
  }
  // The best few, priced on the whole model; the chosen plan is the
  // fastest of them that still fits.
  if (result.layers > 2 && failed(priceBestOnWholeModel(faster, error)))
    return failure();
  // The whole model may rank another mesh first: until the chosen plan's
  // mesh was solved on its own, it is, and the best priced again.
  while (solving && request.representativeSolves && result.layers > 2) {
    std::pair<int64_t, int64_t> mesh{result.candidates.front().model,
                                     result.candidates.front().data};
    std::vector<GraphVariant::InputShardings> solved;
    if (solvedOwn.count(mesh))
      break;
    if (failed(solveMeshes({mesh}, solved)))
      return failure();
    solvedOwn.insert(mesh);
    if (failed(tryLayout(solved[0], mesh.first, mesh.second, *survivors)) ||
        failed(priceBestOnWholeModel(faster, error)))
      return failure();
  }
  result.chosen = result.candidates.front();
  return result;
}

FailureOr<PlanSearchResult> shardc::searchPlan(const GraphVariant &graph,
                                               MLIRContext *ctx,
                                               const PlanSearchRequest &request,
                                               std::string &error) {
  Searcher searcher(graph, ctx, request);
  return searcher.run(error);
}

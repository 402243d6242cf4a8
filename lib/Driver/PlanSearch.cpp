//===- PlanSearch.cpp - the whole parallel plan, chosen by estimate -------===//
//
// Enumerates the plans the device count allows, prunes what cannot work
// without building anything, prices the rest on the representative problem
// and the best few on the whole model (PlanSearch.h).
//
//===----------------------------------------------------------------------===//

#include "shardc/Driver/PlanSearch.h"

#include "PlanSearcher.h"

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
using namespace shardc::detail;

namespace {
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
        failed(tryWholeWeights(solved[0], mesh, *survivors)) ||
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

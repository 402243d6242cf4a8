//===- PlanSearchReport.cpp - the chosen plan, why, and its file ----------===//
//
// What the whole-plan search (PlanSearch.h) prints, writes in the report
// JSON and saves as a plan file. The explanation compares, choice by
// choice, the chosen plan with the best candidate that chose otherwise.
//
//===----------------------------------------------------------------------===//

#include "shardc/Driver/PlanSearch.h"

#include "llvm/Support/Format.h"

#include <functional>

using namespace shardc;
namespace json = llvm::json;

/// The schedule as the report and `why` name it: interleaved with its
/// chunks per device.
static std::string scheduleName(const PlanCandidate &c) {
  std::string name = stringifyPipelineSchedule(c.schedule).str();
  if (c.schedule == PipelineScheduleKind::Interleaved)
    name += " x" + std::to_string(c.virtualStages);
  return name;
}

static json::Array meshAxes(const PlanCandidate &c,
                            const PlanSearchRequest &request) {
  json::Array axes;
  if (c.pipe > 1)
    axes.push_back(json::Array{request.pipeAxis, c.pipe});
  axes.push_back(json::Array{request.dataAxis, c.data});
  axes.push_back(json::Array{request.modelAxis, c.model});
  return axes;
}

static json::Array zeroAxes(const PlanCandidate &c,
                            const PlanSearchRequest &request) {
  json::Array axes;
  if (c.zero)
    axes.push_back(request.dataAxis);
  return axes;
}

/// The plan's choices, as the report and the plan file write them.
static json::Object planFields(const PlanCandidate &c,
                               const PlanSearchRequest &request) {
  json::Object pipeline{{"stages", c.pipe}};
  pipeline["axis"] = c.pipe > 1 ? json::Value(request.pipeAxis) : nullptr;
  pipeline["schedule"] = stringifyPipelineSchedule(c.schedule);
  if (c.schedule == PipelineScheduleKind::Interleaved)
    pipeline["virtual_stages"] = c.virtualStages;
  return json::Object{{"mesh", json::Object{{"axes", meshAxes(c, request)}}},
                      {"pipeline", std::move(pipeline)},
                      {"micro_batch_size", c.microBatch},
                      {"microbatches", c.microbatches},
                      {"global_batch", request.globalBatch},
                      {"recompute", recomputeName(c.recompute)},
                      {"zero_axes", zeroAxes(c, request)},
                      {"sequence_parallel", c.sequenceParallel}};
}

static json::Object candidateToJson(const PlanCandidate &c,
                                    const PlanSearchRequest &request) {
  json::Object o = planFields(c, request);
  o["step_time_s"] = c.estimate.stepSeconds();
  o["tflops_per_device"] = c.estimate.tflopsPerDevice();
  o["peak_bytes_per_device"] = c.estimate.peakBytes();
  o["fits"] = c.fits;
  o["priced_on"] = c.wholeModel ? "whole model" : "one and two layers";
  return o;
}

namespace {
/// One choice of the plan: its name, and a candidate's value for it.
struct Dimension {
  const char *name;
  std::function<std::string(const PlanCandidate &)> value;
};
} // namespace

static std::vector<Dimension> dimensions() {
  return {
      {"mesh",
       [](const PlanCandidate &c) {
         return "model=" + std::to_string(c.model) +
                " pipe=" + std::to_string(c.pipe) +
                " data=" + std::to_string(c.data);
       }},
      {"micro-batch size",
       [](const PlanCandidate &c) { return std::to_string(c.microBatch); }},
      {"recompute",
       [](const PlanCandidate &c) { return recomputeName(c.recompute).str(); }},
      {"sequence parallel",
       [](const PlanCandidate &c) {
         return std::string(c.sequenceParallel ? "on" : "off");
       }},
      {"ZeRO",
       [](const PlanCandidate &c) {
         return std::string(c.zero ? "data axis" : "none");
       }},
      {"schedule",
       [](const PlanCandidate &c) {
         return c.pipe > 1 ? scheduleName(c) : std::string("no pipeline");
       }},
  };
}

/// For each dimension, each other value's best candidate (candidates are
/// sorted best first, so the first seen is the best).
static std::vector<std::pair<std::string, std::vector<const PlanCandidate *>>>
alternatives(const PlanSearchResult &result) {
  std::vector<std::pair<std::string, std::vector<const PlanCandidate *>>> out;
  for (const Dimension &dim : dimensions()) {
    std::string chosen = dim.value(result.chosen);
    std::vector<std::string> seen{chosen};
    std::vector<const PlanCandidate *> best;
    for (const PlanCandidate &c : result.candidates) {
      std::string v = dim.value(c);
      if (llvm::is_contained(seen, v))
        continue;
      seen.push_back(v);
      best.push_back(&c);
    }
    out.emplace_back(dim.name, std::move(best));
  }
  return out;
}

/// The chosen mesh's solved shardings, split inputs only, in name order
/// (the first layer's standing for every layer's).
static std::vector<std::pair<std::string, const json::Value *>>
splitInputs(const PlanSearchResult &result) {
  std::vector<std::pair<std::string, const json::Value *>> out;
  if (const GraphVariant::InputShardings *s = result.chosenTensorShardings())
    for (const auto &entry : *s) {
      const json::Array *spec = entry.second.getAsArray();
      if (spec && llvm::any_of(*spec, [](const json::Value &v) {
            return v.kind() != json::Value::Null;
          }))
        out.emplace_back(entry.first().str(), &entry.second);
    }
  llvm::sort(out,
             [](const auto &a, const auto &b) { return a.first < b.first; });
  return out;
}

/// The data-axis size the chosen plan's tensor shardings were solved at:
/// its own mesh's, or (representative solves) another of its model size.
static int64_t solvedOn(const PlanSearchResult &result) {
  auto it = result.tensorShardingsSolvedAt.find(
      {result.chosen.model, result.chosen.data});
  return it == result.tensorShardingsSolvedAt.end() ? result.chosen.data
                                                    : it->second;
}

json::Object shardc::planSearchToJson(const PlanSearchResult &result,
                                      const PlanSearchRequest &request) {
  json::Array runnersUp;
  for (size_t i = 1; i < result.candidates.size() && i <= 10; ++i)
    runnersUp.push_back(candidateToJson(result.candidates[i], request));
  json::Array why;
  std::vector<Dimension> dims = dimensions();
  auto alts = alternatives(result);
  for (size_t d = 0; d < dims.size(); ++d)
    for (const PlanCandidate *c : alts[d].second) {
      json::Object o = candidateToJson(*c, request);
      o["choice"] = dims[d].name;
      o["value"] = dims[d].value(*c);
      why.push_back(std::move(o));
    }
  json::Object plan = planFields(result.chosen, request);
  if (result.tensorShardingsSolved) {
    json::Object inputs;
    for (const auto &[name, spec] : splitInputs(result))
      inputs[name] = *spec;
    plan["tensor_shardings"] =
        json::Object{{"source", "auto-shard"},
                     {"solved_meshes", int64_t(result.tensorShardings.size())},
                     {"solves", result.tensorShardingSolves},
                     {"solved_on_data", solvedOn(result)},
                     {"micro_batch_size", result.tensorShardingBatch},
                     {"split_inputs", std::move(inputs)}};
  }
  return json::Object{
      {"plan", std::move(plan)},
      {"runners_up", std::move(runnersUp)},
      {"alternatives", std::move(why)},
      {"search",
       json::Object{{"devices", request.devices},
                    {"layers", result.layers},
                    {"programs_partitioned", result.programsPartitioned},
                    {"candidates_priced", int64_t(result.candidates.size())},
                    {"pruned_by_divisibility", result.prunedByDivisibility},
                    {"pruned_by_memory", result.prunedByMemory}}}};
}

static std::string gigabytes(double bytes) {
  std::string s;
  // Three digits: a small machine's plans differ below 0.1 GB.
  llvm::raw_string_ostream(s) << llvm::format("%.3g GB", bytes / 1e9);
  return s;
}

void shardc::printPlanSearch(const PlanSearchResult &result,
                             const PlanSearchRequest &request,
                             llvm::raw_ostream &os) {
  const PlanCandidate &c = result.chosen;
  os << "plan: mesh [";
  if (c.pipe > 1)
    os << request.pipeAxis << "=" << c.pipe << ", ";
  os << request.dataAxis << "=" << c.data << ", " << request.modelAxis << "="
     << c.model << "], micro-batch " << c.microBatch << " x " << c.microbatches
     << ", recompute " << recomputeName(c.recompute) << ", ZeRO "
     << (c.zero ? "over " + request.dataAxis : "none");
  if (c.sequenceParallel)
    os << ", sequence parallel";
  if (c.pipe > 1)
    os << ", schedule " << scheduleName(c);
  os << "\n";
  EstimateRequest shown = request.base;
  shown.options.recompute = c.recompute;
  shown.options.schedule = c.schedule;
  shown.options.virtualStages = c.virtualStages;
  printEstimate(c.estimate, shown, os);
  os << "search: " << result.programsPartitioned << " programs partitioned, "
     << result.candidates.size() << " plans priced (" << result.layers
     << (result.layers > 2 ? " layers, extrapolated from one and two; the "
                             "best on the whole model); pruned "
                           : " layers, each on the whole model); pruned ")
     << result.prunedByDivisibility << " by divisibility, "
     << result.prunedByMemory << " by the model states' memory\n";
  if (result.tensorShardingsSolved) {
    // The tensor shardings are a choice too: the auto-sharder's, per mesh.
    std::vector<std::pair<std::string, const json::Value *>> split =
        splitInputs(result);
    // Solved on another mesh of the same model-axis size, or its own.
    os << "tensor shardings: the auto-sharder's "
       << (solvedOn(result) != c.data ? "solved on " : "on ")
       << "data=" << solvedOn(result) << " model=" << c.model
       << " (the first layer's step at micro-batch "
       << result.tensorShardingBatch << ", every layer alike; "
       << result.tensorShardings.size() << " meshes solved";
    if (result.tensorShardingSolves != int64_t(result.tensorShardings.size()))
      os << " in " << result.tensorShardingSolves << " solves";
    os << "): ";
    if (split.empty())
      os << "every input replicated";
    for (size_t i = 0; i < split.size(); ++i)
      os << (i ? ", " : "") << split[i].first << " " << *split[i].second;
    os << "\n";
  }
  os << "why (the best plan making each other choice):\n";
  double best = c.estimate.stepSeconds();
  std::vector<Dimension> dims = dimensions();
  auto alts = alternatives(result);
  for (size_t d = 0; d < dims.size(); ++d) {
    os << "  " << dims[d].name << ": " << dims[d].value(c) << " "
       << llvm::format("%.4g s", best) << " (chosen)";
    // The best few other values; the report JSON has them all.
    for (const PlanCandidate *alt :
         llvm::ArrayRef(alts[d].second)
             .take_front(std::min<size_t>(alts[d].second.size(), 4))) {
      os << "; " << dims[d].value(*alt) << " ";
      if (!alt->fits) {
        os << "does not fit (peak " << gigabytes(alt->estimate.peakBytes())
           << ")";
        continue;
      }
      os << (alt->wholeModel ? "" : "~")
         << llvm::format("%.4g s (%+.1f%%)", alt->estimate.stepSeconds(),
                         100 * (alt->estimate.stepSeconds() / best - 1));
    }
    os << "\n";
  }
}

json::Object shardc::planFile(const PlanSearchResult &result,
                              const PlanSearchRequest &request,
                              const GraphVariant &graph) {
  json::Object plan = planFields(result.chosen, request);
  json::Object mesh = std::move(*plan.getObject("mesh"));
  mesh["name"] = "mesh";
  plan["mesh"] = std::move(mesh);
  json::Array rules;
  if (const GraphVariant::InputShardings *solved =
          result.chosenTensorShardings()) {
    // Every input of every layer as its first-layer peer was solved.
    for (const std::string &name : graph.inputNames()) {
      auto it = solved->find(name);
      if (it == solved->end())
        it = solved->find(graph.firstLayerPeer(name));
      if (it != solved->end())
        rules.push_back(json::Array{name, it->second});
    }
  } else {
    for (const auto &[name, spec] : graph.annotations())
      rules.push_back(json::Array{name, spec});
  }
  if (result.chosen.sequenceParallel)
    for (const auto &[name, spec] : result.sequenceParallelRules)
      rules.push_back(json::Array{name, spec});
  plan["rules"] = std::move(rules);
  plan["description"] = "chosen by shardc estimate --auto-shard: estimated " +
                        std::to_string(result.chosen.estimate.stepSeconds()) +
                        " s per step";
  return plan;
}

//===- PlanSearch.h - the whole parallel plan, by estimate ------*- C++ -*-===//
//
// Given a model, a machine, a device count and a global batch — no mesh —
// the whole-plan search chooses the mesh factorisation data × pipe × model,
// the micro-batch size (and so the micro-batch count), ZeRO over the data
// axis, recompute and the pipeline schedule that minimise the estimated
// step time (shardc/Driver/Estimate.h) within the machine's device memory
// (docs/whole-plan.md).
//
// Candidates are pruned analytically before any is priced: sizes that do
// not divide what they split, pipelines whose stages would not hold whole
// layers, and model states that cannot fit even split t·p ways. Each
// surviving (t, d, micro-batch, ZeRO, sequence parallelism) is one
// partitioned program, priced
// on its representative problem — the model cut to one and to two layers
// (GraphVariant.h) — and extrapolated linearly in depth; recompute and the
// schedule are options of the estimate, so they reuse the same program.
// The best few are then priced on the whole model, and the chosen plan's
// figures are those.
//
// The tensor shardings at each model-axis size are the model's own
// annotations, or, for a model without tensor-parallel ones (or when
// asked), the tensor auto-sharder's plan of its first layer
// (solveTensorShardings), shared by every candidate on a mesh
// [data=d, model=t]. It is solved on one representative mesh per t, the
// widest data axis (its layout splits the inputs evenly on every narrower
// one that divides it, and prices the data axis's collectives where they
// weigh the most), and given to the other meshes of that t whose sizes it
// divides; the best plan's mesh, so priced, is then solved on its own,
// the new layout is offered to every mesh of its t, and each mesh keeps
// the layout that prices its best plan fastest, until the best plan's
// mesh (after the whole-model pricing, the chosen plan's) has been solved
// on its own — about one solve per model-axis size rather than one per
// mesh. A mesh whose own layout would have won may be missed:
// `representativeSolves` off solves every mesh on its own.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DRIVER_PLANSEARCH_H
#define SHARDC_DRIVER_PLANSEARCH_H

#include "shardc/Driver/Estimate.h"
#include "shardc/Driver/GraphVariant.h"

#include "mlir/IR/MLIRContext.h"

#include <map>

namespace shardc {

/// Where the search's tensor shardings come from.
enum class TensorShardingSource {
  /// The auto-sharder's when no input of the model is split over the model
  /// axis, else the model's.
  Auto,
  /// The model's annotations.
  Model,
  /// The auto-sharder's, the model's annotations ignored.
  Solve,
};

struct PlanSearchRequest {
  int64_t devices = 0;
  int64_t globalBatch = 0;
  /// The optimizer, precision, machine and layer-input pattern; the
  /// options' pipeline, micro-batch, recompute and ZeRO fields are what
  /// the search chooses.
  EstimateRequest base;
  /// The model's axis names: its batch is split over `dataAxis`, its
  /// tensor parallelism over `modelAxis`; the search adds `pipeAxis`.
  std::string dataAxis = "data", modelAxis = "model", pipeAxis = "pipe";
  /// Micro-batch sizes per data-parallel rank tried.
  std::vector<int64_t> microBatchSizes = {1, 2, 4, 8};
  /// The largest tensor-parallel size tried (0: two nodes' devices).
  int64_t maxModelAxis = 0;
  /// How many of the best candidates are priced on the whole model.
  int wholeModelPricings = 3;
  /// With solved tensor shardings: one solve per model-axis size, given
  /// to its other meshes, then the meshes of the best `refinedMeshes`
  /// plans solved on their own (rounds, until those meshes all were);
  /// else every mesh is solved on its own. The chosen plan's mesh is
  /// always solved on its own too; each more costs a solve of a runner-up's
  /// mesh (two or three seconds on GPT-3's layer) and the pricing of its
  /// layout on every mesh of its model-axis size; on GPT-3 175B, solving
  /// the three best plans' meshes chose the same plan as the best's alone.
  bool representativeSolves = true;
  int refinedMeshes = 1;
  TensorShardingSource tensorShardings = TensorShardingSource::Auto;
};

struct PlanCandidate {
  int64_t model = 1, pipe = 1, data = 1;
  int64_t microBatch = 1, microbatches = 1;
  bool zero = false;
  /// The residual stream split along the sequence over the model axis
  /// (Korthikanti et al.'s sequence parallelism; t > 1 only).
  bool sequenceParallel = false;
  Recompute recompute = Recompute::None;
  PipelineScheduleKind schedule = PipelineScheduleKind::OneFOneB;
  /// The interleaved schedule's chunks per device; 1 otherwise.
  int64_t virtualStages = 1;
  /// Extrapolated from the representative problem, or (wholeModel) the
  /// estimate of the whole model.
  StepEstimate estimate;
  bool wholeModel = false;
  bool fits = false;
};

struct PlanSearchResult {
  PlanCandidate chosen;
  /// Every priced candidate, fitting ones first, each group by step time.
  std::vector<PlanCandidate> candidates;
  int64_t programsPartitioned = 0;
  int64_t prunedByDivisibility = 0, prunedByMemory = 0;
  int64_t layers = 0;
  /// The plan rules sequence parallelism adds (name, spec): each residual
  /// value split over the data axis along dim 0 and the model axis along
  /// dim 1, the sequence.
  std::vector<std::pair<std::string, llvm::json::Value>> sequenceParallelRules;
  /// The tensor auto-sharder chose the inputs' shardings, per mesh (model,
  /// data): by input name, the first layer's standing for every layer's.
  bool tensorShardingsSolved = false;
  int64_t tensorShardingBatch = 0;
  std::map<std::pair<int64_t, int64_t>, GraphVariant::InputShardings>
      tensorShardings;
  /// Per mesh (model, data), the data-axis size its shardings were solved
  /// at: its own, or its model-axis size's representative mesh's.
  std::map<std::pair<int64_t, int64_t>, int64_t> tensorShardingsSolvedAt;
  /// Tensor auto-sharder solves run (representatives, meshes their layout
  /// does not divide, and the best plans' meshes refined).
  int64_t tensorShardingSolves = 0;
  /// The chosen plan's tensor shardings, when solved (else null).
  const GraphVariant::InputShardings *chosenTensorShardings() const {
    auto it = tensorShardings.find({chosen.model, chosen.data});
    return it == tensorShardings.end() ? nullptr : &it->second;
  }
};

/// The tensor auto-sharder's plan of the training step of `graph`'s first
/// layer (all of it when it has no layers) at batch `batch` on the mesh
/// [data=`data`, model=`model`], the model's annotations ignored: every
/// input's sharding by name. Fails after a diagnostic.
mlir::FailureOr<GraphVariant::InputShardings>
solveTensorShardings(const GraphVariant &graph, mlir::MLIRContext *ctx,
                     const PlanSearchRequest &request, int64_t data,
                     int64_t model, int64_t batch);

/// `layout` with the data axis taken out of the sharding of every input
/// but those carrying the batch: the same tensor parallelism with the
/// weights whole over `data`. A solve prices one step of one
/// micro-batch, where weights split over `data` (gathered for their use,
/// their gradients reduce-scattered) cost what replicated ones do and hold
/// fewer bytes; a plan of several micro-batches gathers them again for
/// each, so the search prices both.
GraphVariant::InputShardings
withWeightsWholeOverData(const GraphVariant &graph,
                         const GraphVariant::InputShardings &layout,
                         llvm::StringRef dataAxis);

/// Whether every input's sharding in `shardings` splits its dims (in
/// `graph`'s first layer at batch `batch`, on the mesh [data=`data`,
/// model=`model`]) into equal blocks: a layout solved on one mesh may then
/// be given to another.
bool shardingsDivide(const GraphVariant &graph,
                     const GraphVariant::InputShardings &shardings,
                     const PlanSearchRequest &request, int64_t model,
                     int64_t data, int64_t batch);

/// Sequence parallelism on `module` (`graph` imported on the mesh `axes`):
/// each value of the residual stream split over the data axis along dim 0
/// and the model axis along dim 1, as plan rules; returns the rules (name,
/// spec) for the plan file. Fails after a diagnostic.
mlir::FailureOr<std::vector<std::pair<std::string, llvm::json::Value>>>
applySequenceParallelism(
    mlir::ModuleOp module, const GraphVariant &graph,
    const PlanSearchRequest &request,
    const std::vector<std::pair<std::string, int64_t>> &axes);

/// Runs the search on the JSON graph `graph`. Fails after a diagnostic
/// (emitted on `ctx`, or an error message in `error`) when the device count
/// has no usable factorisation or no plan fits in memory.
mlir::FailureOr<PlanSearchResult> searchPlan(const GraphVariant &graph,
                                             mlir::MLIRContext *ctx,
                                             const PlanSearchRequest &request,
                                             std::string &error);

/// The report's "plan", "runners_up" and "search" keys.
llvm::json::Object planSearchToJson(const PlanSearchResult &result,
                                    const PlanSearchRequest &request);

/// The chosen plan, its estimate, and why each choice beats the runners-up.
void printPlanSearch(const PlanSearchResult &result,
                     const PlanSearchRequest &request, llvm::raw_ostream &os);

/// A plan file (docs/plans.md): the chosen mesh, the model's annotations
/// as rules, and the pipeline, micro-batch, recompute and ZeRO fields.
llvm::json::Object planFile(const PlanSearchResult &result,
                            const PlanSearchRequest &request,
                            const GraphVariant &graph);

} // namespace shardc

#endif // SHARDC_DRIVER_PLANSEARCH_H

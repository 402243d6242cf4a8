//===- PlanSearcher.h - the whole-plan search's state -----------*- C++ -*-===//
//
// The search of PlanSearch.h as a class shared by the files that make it
// up: PlanSearch.cpp enumerates, prices and chooses;
// PlanSearchTensorShardings.cpp gives each mesh its solved tensor layout.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_DRIVER_PLANSEARCHER_H
#define SHARDC_LIB_DRIVER_PLANSEARCHER_H

#include "shardc/Driver/ImportedVariants.h"
#include "shardc/Driver/PlanSearch.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <mutex>
#include <set>
#include <tuple>

namespace shardc::detail {

using mlir::FailureOr;
using mlir::LogicalResult;
using mlir::MLIRContext;
using mlir::ModuleOp;
using mlir::OwningOpRef;

/// What makes two candidates the same partitioned program: the pipeline
/// size follows from the other two sizes, and recompute and the schedule
/// are options of the estimate.
using ProgramKey = std::tuple<int64_t, int64_t, int64_t, bool, bool>;

inline ProgramKey keyOf(const PlanCandidate &c) {
  return {c.model, c.data, c.microBatch, c.zero, c.sequenceParallel};
}

/// One run of the whole-plan search (searchPlan): the candidates, their
/// programs and prices, and each mesh's tensor layout when solved.
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
  /// tryLayout of the layout solved on `mesh`, withWeightsWholeOverData.
  LogicalResult tryWholeWeights(const GraphVariant::InputShardings &solved,
                                std::pair<int64_t, int64_t> mesh,
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

} // namespace shardc::detail

#endif // SHARDC_LIB_DRIVER_PLANSEARCHER_H

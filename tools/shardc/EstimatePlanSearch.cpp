//===- EstimatePlanSearch.cpp - `shardc estimate --auto-shard` ------------===//
//
// The whole-plan search's options, parsed into a PlanSearchRequest for
// the Driver's searchPlan (shardc/Driver/PlanSearch.h); its report, plan
// file and explanation printed. Nothing here computes.
//
//===----------------------------------------------------------------------===//

#include "EstimatePlanSearch.h"
#include "SharedOptions.h"
#include "ToolCommon.h"

#include "shardc/Driver/PlanSearch.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace shardc;
namespace cl = llvm::cl;

static cl::opt<bool> autoShard(
    "auto-shard",
    cl::desc("Choose the whole plan: mesh data x pipe x model, micro-batch, "
             "ZeRO, recompute and schedule (docs/whole-plan.md); needs "
             "--devices and --global-batch"),
    cl::init(false), cl::sub(shardc::estimateCommand));
static cl::opt<int64_t> devices("devices",
                                cl::desc("With --auto-shard: the devices the "
                                         "plan uses"),
                                cl::init(0), cl::sub(shardc::estimateCommand));
static cl::opt<int64_t>
    globalBatch("global-batch",
                cl::desc("With --auto-shard: sequences per step, over all "
                         "data-parallel ranks and micro-batches"),
                cl::init(0), cl::sub(shardc::estimateCommand));
static cl::list<int64_t> microBatchSizes(
    "micro-batch-sizes",
    cl::desc("With --auto-shard: the micro-batch sizes per data-parallel "
             "rank tried (default 1,2,4,8)"),
    cl::CommaSeparated, cl::sub(shardc::estimateCommand));
static cl::opt<std::string>
    savePlan("save-plan",
             cl::desc("With --auto-shard: write the chosen plan here "
                      "(docs/plans.md)"),
             cl::value_desc("path"), cl::init(""),
             cl::sub(shardc::estimateCommand));

static cl::opt<TensorShardingSource> tensorShardings(
    "tensor-shardings",
    cl::desc("With --auto-shard: where each mesh's tensor shardings come "
             "from"),
    cl::values(clEnumValN(TensorShardingSource::Auto, "auto",
                          "the tensor auto-sharder's when no input is split "
                          "over the model axis, else the model's (default)"),
               clEnumValN(TensorShardingSource::Model, "model",
                          "the model's annotations"),
               clEnumValN(TensorShardingSource::Solve, "solve",
                          "the tensor auto-sharder's, solved per mesh")),
    cl::init(TensorShardingSource::Auto), cl::sub(shardc::estimateCommand));

static cl::opt<bool> solveEveryMesh(
    "solve-every-mesh",
    cl::desc("With --auto-shard and solved tensor shardings: solve each "
             "mesh's on its own (by default one mesh per model-axis size "
             "is solved, its layout given to that size's other meshes, and "
             "the best plan's mesh is then solved on its own)"),
    cl::init(false), cl::sub(shardc::estimateCommand));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "shardc: error: " << message << "\n";
  return 1;
}

bool shardc::estimateAutoShard() { return autoShard; }

int shardc::checkPlanSearchOptionsUnused() {
  if (devices.getNumOccurrences() || globalBatch.getNumOccurrences() ||
      microBatchSizes.getNumOccurrences() || savePlan.getNumOccurrences() ||
      tensorShardings.getNumOccurrences() || solveEveryMesh.getNumOccurrences())
    return fail("--devices, --global-batch, --micro-batch-sizes, "
                "--tensor-shardings, --solve-every-mesh and "
                "--save-plan need --auto-shard");
  return 0;
}

int shardc::runEstimatePlanSearch(const EstimateRequest &request,
                                  llvm::ArrayRef<llvm::StringRef> chosenGiven,
                                  llvm::StringRef reportJson) {
  if (!getPlanPath().empty())
    return fail("--auto-shard chooses the plan; leave --plan out");
  if (!chosenGiven.empty())
    return fail("--auto-shard chooses --" + chosenGiven.front() +
                "; leave it out");
  if (devices < 1)
    return fail("--auto-shard needs --devices N (at least 1)");
  if (globalBatch < 1)
    return fail("--auto-shard needs --global-batch B (at least 1)");
  PlanSearchRequest search;
  search.devices = devices;
  search.globalBatch = globalBatch;
  search.base = request;
  search.tensorShardings = tensorShardings;
  search.representativeSolves = !solveEveryMesh;
  if (!microBatchSizes.empty()) {
    search.microBatchSizes.assign(microBatchSizes.begin(),
                                  microBatchSizes.end());
    if (llvm::any_of(search.microBatchSizes, [](int64_t b) { return b < 1; }))
      return fail("--micro-batch-sizes must be at least 1");
  }
  const std::string &path = getInputPath();
  if (!llvm::StringRef(path).ends_with(".json"))
    return fail("--auto-shard reads a JSON graph (docs/json-format.md); '" +
                path + "' is not one");
  auto text = llvm::MemoryBuffer::getFile(path);
  if (!text)
    return fail("cannot read '" + path + "': " + text.getError().message());
  llvm::Expected<GraphVariant> graph = GraphVariant::parse(
      (*text)->getBuffer(), search.dataAxis, request.options.layerInputs);
  if (!graph)
    return fail(path + ": " + llvm::toString(graph.takeError()));

  ToolSession session;
  std::string error;
  FailureOr<PlanSearchResult> result =
      searchPlan(*graph, &session.getContext(), search, error);
  if (failed(result))
    return error.empty() ? 1 : fail(path + ": " + error);
  printPlanSearch(*result, search, llvm::outs());
  if (!savePlan.empty() && failed(writeText(savePlan, [&](raw_ostream &os) {
        os << llvm::formatv(
                  "{0:2}", llvm::json::Value(planFile(*result, search, *graph)))
           << "\n";
      })))
    return 1;
  if (!reportJson.empty() && failed(writeText(reportJson, [&](raw_ostream &os) {
        EstimateRequest shown = request;
        shown.options.recompute = result->chosen.recompute;
        llvm::json::Object report =
            estimateToJson(result->chosen.estimate, shown);
        for (auto &[key, value] : planSearchToJson(*result, search))
          report[key] = std::move(value);
        os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report)))
           << "\n";
      })))
    return 1;
  return 0;
}

//===- EstimateCommand.cpp - `shardc estimate` ----------------------------===//
//
// Parses the options into an EstimateRequest and hands the model to the
// Driver's estimateTraining (docs/estimate.md); nothing here computes.
//
//===----------------------------------------------------------------------===//

#include "EstimatePlanSearch.h"
#include "SharedOptions.h"
#include "ToolCommon.h"

#include "shardc/Driver/Estimate.h"
#include "shardc/Import/ShardingPlan.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string>
    machinePath("machine",
                cl::desc("The machine description file (docs/machines.md), "
                         "e.g. machines/dgx-a100-80gb.json"),
                cl::value_desc("path"), cl::init(""),
                cl::sub(shardc::estimateCommand));
static cl::opt<std::string> trainStep("train-step",
                                      cl::desc("The optimizer step priced"),
                                      cl::value_desc("sgd|adam"),
                                      cl::init("adam"),
                                      cl::sub(shardc::estimateCommand));
static cl::opt<std::string>
    precision("precision",
              cl::desc("How the step stores and computes (an accounting "
                       "policy over the f32 program, docs/estimate.md)"),
              cl::value_desc("f32|bf16-mixed|f16-mixed"), cl::init("f32"),
              cl::sub(shardc::estimateCommand));
static cl::opt<std::string>
    recompute("recompute",
              cl::desc("Which activations the backward pass recomputes"),
              cl::value_desc("none|selective|full"), cl::init("none"),
              cl::sub(shardc::estimateCommand));
static cl::opt<std::string> layerInputs(
    "layer-inputs",
    cl::desc("Regex naming the values full recompute keeps (each layer's "
             "input)"),
    cl::init(shardc::kDefaultLayerInputs.str()),
    cl::sub(shardc::estimateCommand));
static cl::list<std::string>
    zeroAxes("zero-axes",
             cl::desc("Split the optimizer state (and the gradients) over "
                      "these mesh axes too (ZeRO)"),
             cl::CommaSeparated, cl::value_desc("axis,..."),
             cl::sub(shardc::estimateCommand));
static cl::opt<int>
    zeroStage("zero-stage",
              cl::desc("With --zero-axes: 1 counts the gradients whole "
                       "(ZeRO-1), 2 split (ZeRO-2, the default)"),
              cl::init(2), cl::sub(shardc::estimateCommand));
static cl::opt<std::string>
    pipelineAxis("pipeline-axis",
                 cl::desc("Mesh axis the layers are pipelined over"),
                 cl::init(""), cl::sub(shardc::estimateCommand));
static cl::opt<int64_t>
    microbatches("microbatches",
                 cl::desc("Micro-batches per step, the model's batch being "
                          "one (gradient accumulation; with --pipeline-axis, "
                          "the pipeline's)"),
                 cl::init(1), cl::sub(shardc::estimateCommand));
static cl::opt<std::string> schedule(
    "schedule",
    cl::desc("Pipeline schedule (interleaved: Megatron-LM's interleaved 1F1B, "
             "estimated only)"),
    cl::value_desc("gpipe|1f1b|interleaved"), cl::init("1f1b"),
    cl::sub(shardc::estimateCommand));
static cl::opt<int64_t> virtualStages(
    "virtual-stages",
    cl::desc("With --schedule interleaved: model chunks per device (default "
             "2)"),
    cl::init(0), cl::sub(shardc::estimateCommand));
static cl::opt<std::string> reportJson("report-json",
                                       cl::desc("Write the report here"),
                                       cl::value_desc("path"), cl::init(""),
                                       cl::sub(shardc::estimateCommand));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "shardc: error: " << message << "\n";
  return 1;
}

/// A plan that says how it runs (docs/plans.md: what `--save-plan` writes)
/// gives the defaults of the options the command line leaves out.
static int applyPlanExecution(shardc::EstimateRequest &request) {
  using namespace shardc;
  llvm::Expected<ShardingPlan> plan = readShardingPlan(getPlanPath());
  if (!plan) // loadInputModel reports it.
    return llvm::consumeError(plan.takeError()), 0;
  const ShardingPlan::Execution &run = plan->execution;
  EstimateOptions &o = request.options;
  if (run.pipelineAxis && !pipelineAxis.getNumOccurrences())
    o.pipelineAxis = *run.pipelineAxis;
  if (run.microbatches && !microbatches.getNumOccurrences())
    o.microbatches = *run.microbatches;
  if (run.schedule && !schedule.getNumOccurrences()) {
    std::optional<PipelineScheduleKind> kind =
        parsePipelineSchedule(*run.schedule);
    if (!kind)
      return fail(getPlanPath() + ": pipeline.schedule '" + *run.schedule +
                  "' (expected gpipe, 1f1b or interleaved)");
    o.schedule = *kind;
    o.virtualStages = run.virtualStages.value_or(
        *kind == PipelineScheduleKind::Interleaved ? 2 : 1);
  }
  if (run.recompute && !recompute.getNumOccurrences()) {
    std::optional<Recompute> r = parseRecompute(*run.recompute);
    if (!r)
      return fail(getPlanPath() + ": recompute '" + *run.recompute +
                  "' (expected none, selective or full)");
    o.recompute = *r;
  }
  if (!run.zeroAxes.empty() && zeroAxes.empty()) {
    request.zeroAxes = run.zeroAxes;
    o.zeroStage = 2;
  }
  return 0;
}

/// --pipeline-axis, --microbatches, --schedule and --virtual-stages.
static int readPipelineOptions(shardc::EstimateOptions &o) {
  using namespace shardc;
  if (pipelineAxis.empty() && schedule.getNumOccurrences())
    return fail("--schedule needs --pipeline-axis");
  if (microbatches < 1)
    return fail("--microbatches must be at least 1");
  std::optional<PipelineScheduleKind> kind = parsePipelineSchedule(schedule);
  if (!kind)
    return fail("unknown --schedule '" + schedule +
                "' (expected gpipe, 1f1b or interleaved)");
  bool interleaved = *kind == PipelineScheduleKind::Interleaved;
  if (virtualStages.getNumOccurrences() && (!interleaved || virtualStages < 2))
    return fail("--virtual-stages takes 2 or more, with --schedule "
                "interleaved");
  o.pipelineAxis = pipelineAxis;
  o.microbatches = microbatches;
  o.schedule = *kind;
  o.virtualStages = virtualStages.getNumOccurrences() ? int64_t(virtualStages)
                                                      : (interleaved ? 2 : 1);
  return 0;
}

int shardc::runEstimateCommand() {
  EstimateRequest request;
  if (machinePath.empty())
    return fail("estimate needs --machine FILE (machines/ has presets)");
  llvm::Expected<MachineModel> machine = loadMachineModel(machinePath);
  if (!machine)
    return fail(llvm::toString(machine.takeError()));
  request.machine = std::move(*machine);
  request.machinePath = machinePath;
  if (trainStep != "sgd" && trainStep != "adam")
    return fail("unknown --train-step '" + trainStep +
                "' (expected sgd or adam)");
  request.optimizer = trainStep;
  std::optional<Precision> p = parsePrecision(precision);
  if (!p)
    return fail("unknown --precision '" + precision +
                "' (expected f32, bf16-mixed or f16-mixed)");
  request.options.precision = *p;
  std::optional<Recompute> r = parseRecompute(recompute);
  if (!r)
    return fail("unknown --recompute '" + recompute +
                "' (expected none, selective or full)");
  request.options.recompute = *r;
  request.options.layerInputs = layerInputs;
  request.zeroAxes.assign(zeroAxes.begin(), zeroAxes.end());
  if (zeroStage != 1 && zeroStage != 2)
    return fail("--zero-stage must be 1 or 2 (stage 3 is a plan that "
                "splits the parameters, docs/estimate.md)");
  if (zeroStage.getNumOccurrences() && zeroAxes.empty())
    return fail("--zero-stage needs --zero-axes");
  request.options.zeroStage = zeroAxes.empty() ? 0 : int(zeroStage);
  if (readPipelineOptions(request.options) != 0)
    return 1;
  if (!estimateAutoShard() && !getPlanPath().empty() &&
      applyPlanExecution(request) != 0)
    return 1;

  if (estimateAutoShard()) {
    llvm::SmallVector<llvm::StringRef> chosen;
    // std::addressof: a cl::list's & is its storage's.
    cl::Option *chosenHere[] = {
        &pipelineAxis, &microbatches, &recompute,    std::addressof(zeroAxes),
        &zeroStage,    &schedule,     &virtualStages};
    for (cl::Option *o : chosenHere)
      if (o->getNumOccurrences())
        chosen.push_back(o->ArgStr);
    return runEstimatePlanSearch(request, chosen, reportJson);
  }
  if (checkPlanSearchOptionsUnused())
    return 1;

  ToolSession session;
  OwningOpRef<ModuleOp> module = session.loadInputModel();
  if (!module)
    return 1;
  FailureOr<StepEstimate> estimate = estimateTraining(*module, request);
  if (failed(estimate))
    return 1;
  printEstimate(*estimate, request, llvm::outs());
  if (!reportJson.empty() && failed(writeText(reportJson, [&](raw_ostream &os) {
        os << llvm::formatv("{0:2}", llvm::json::Value(
                                         estimateToJson(*estimate, request)))
           << "\n";
      })))
    return 1;
  return 0;
}

//===- PipelineSplit.cpp - --shardc-pipeline-split ------------------------===//
//
// The pipeline split (shardc/Transforms/PipelineParallel.h) as a pass, so
// that `shardc-opt` and pass pipelines reach the same transformation
// `shardc pipeline` runs: the pass reads its options, names the entry
// function and calls the builder, which owns every check.
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/FunctionInterface.h"
#include "shardc/Transforms/Passes.h"
#include "shardc/Transforms/PipelineParallel.h"

namespace shardc {
#define GEN_PASS_DEF_SHARDCPIPELINESPLIT
#include "shardc/Transforms/Passes.h.inc"
} // namespace shardc

using namespace mlir;
using namespace shardc;

namespace {

struct PipelineSplitPass
    : shardc::impl::ShardcPipelineSplitBase<PipelineSplitPass> {
  using ShardcPipelineSplitBase::ShardcPipelineSplitBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp func = getEntryFunction(module);
    if (!func) {
      module.emitError("--shardc-pipeline-split: the module has no entry "
                       "function to pipeline");
      return signalPassFailure();
    }
    std::optional<PipelineScheduleKind> kind = parsePipelineSchedule(schedule);
    if (!kind) {
      func.emitError() << "unknown pipeline schedule '" << schedule
                       << "' (expected gpipe or 1f1b)";
      return signalPassFailure();
    }
    PipelineOptions options;
    options.axis = axis;
    options.microbatches = microbatches;
    options.schedule = *kind;
    options.optimizer.optimizer = optimizer;
    if (failed(buildPipelineProgram(func, options)))
      signalPassFailure();
  }
};

} // namespace

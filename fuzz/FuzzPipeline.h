//===- FuzzPipeline.h - the checked compile pipeline ------------*- C++ -*-===//

#ifndef SHARDC_FUZZ_FUZZPIPELINE_H
#define SHARDC_FUZZ_FUZZPIPELINE_H

#include "mlir/IR/BuiltinOps.h"

namespace shardc::fuzz {

/// Runs on a verified model what `shardc compile --partition` runs
/// (propagate, partition, cleanup). A pass may reject the model with a
/// diagnostic; a pipeline that succeeds and leaves invalid IR aborts, which
/// libFuzzer reports as a finding.
void runShardingPipelineChecked(mlir::ModuleOp module);

} // namespace shardc::fuzz

#endif // SHARDC_FUZZ_FUZZPIPELINE_H

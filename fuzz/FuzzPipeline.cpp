//===- FuzzPipeline.cpp - the checked compile pipeline --------------------===//

#include "FuzzPipeline.h"

#include "shardc/Transforms/Pipelines.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;

void shardc::fuzz::runShardingPipelineChecked(ModuleOp module) {
  // The named shardc-partition-pipeline, as `shardc compile --partition`
  // runs it, verifying once at the end.
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  shardc::buildPartitionPipeline(pm, /*explain=*/false);
  pm.enableVerifier(false);
  if (failed(pm.run(module)))
    return;
  if (failed(verify(module))) {
    llvm::errs() << "the sharding pipeline succeeded but left invalid IR\n";
    abort();
  }
}

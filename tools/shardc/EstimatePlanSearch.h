//===- EstimatePlanSearch.h - `shardc estimate --auto-shard` ----*- C++ -*-===//
//
// The whole-plan search's part of `shardc estimate` (docs/whole-plan.md):
// its options, and the run.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_TOOLS_ESTIMATEPLANSEARCH_H
#define SHARDC_TOOLS_ESTIMATEPLANSEARCH_H

#include "shardc/Driver/Estimate.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace shardc {

/// `estimate --auto-shard` was given.
bool estimateAutoShard();

/// 1 after a diagnostic when an option of the search is given without
/// --auto-shard, else 0.
int checkPlanSearchOptionsUnused();

/// Runs the search on the model named on the command line: `request` holds
/// the machine, optimizer, precision and layer inputs; `chosenGiven` the
/// options the command line gave that the search chooses (an error);
/// `reportJson` where the report goes (""). Returns the exit code.
int runEstimatePlanSearch(const EstimateRequest &request,
                          llvm::ArrayRef<llvm::StringRef> chosenGiven,
                          llvm::StringRef reportJson);

} // namespace shardc

#endif // SHARDC_TOOLS_ESTIMATEPLANSEARCH_H

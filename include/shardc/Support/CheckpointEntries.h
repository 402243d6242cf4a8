//===- CheckpointEntries.h - state_dict entries no input takes --*- C++ -*-===//
//
// A torch state_dict holds more than a model's parameters: its integer and
// boolean buffers (a causal `tril` mask, BERT's `position_ids`), which an
// exported model holds as constants or folds away, and the second name of
// a tied weight (`lm_head.weight`, the same tensor as the embedding's),
// which torch.onnx.export writes once. Every checkpoint loader (the CLI's
// --checkpoint, ShardedEngine::loadCheckpoint and so the Python module)
// skips those entries by the same rule, so a state_dict loads as torch
// saves it.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_SUPPORT_CHECKPOINTENTRIES_H
#define SHARDC_SUPPORT_CHECKPOINTENTRIES_H

#include "shardc/Support/Tensor.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <map>
#include <string>

namespace shardc {

/// The entries of `entries` that name no input of the model (`takes` says
/// false) and that a loader skips, each with why: an integer or boolean
/// entry (torch's parameters are floating point, so it is a buffer), or a
/// float entry holding the same elements, in the same shape, as an entry
/// the model takes (a tied weight's other name). Any other entry naming no
/// input stays the loader's error.
std::map<std::string, std::string>
skippedCheckpointEntries(const std::map<std::string, Tensor> &entries,
                         llvm::function_ref<bool(llvm::StringRef)> takes);

} // namespace shardc

#endif // SHARDC_SUPPORT_CHECKPOINTENTRIES_H

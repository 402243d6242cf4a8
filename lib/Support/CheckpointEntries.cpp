//===- CheckpointEntries.cpp - state_dict entries no input takes ----------===//

#include "shardc/Support/CheckpointEntries.h"

#include <cstring>

using namespace shardc;

static bool sameElements(const Tensor &a, const Tensor &b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.rawData(), b.rawData(), a.byteSize()) == 0;
}

std::map<std::string, std::string> shardc::skippedCheckpointEntries(
    const std::map<std::string, Tensor> &entries,
    llvm::function_ref<bool(llvm::StringRef)> takes) {
  std::map<std::string, std::string> skipped;
  for (const auto &[name, t] : entries) {
    if (takes(name))
      continue;
    if (isIntegerDType(t.dtype())) {
      skipped[name] = "an integer or boolean buffer";
      continue;
    }
    // A tied weight: torch's state_dict names one tensor twice.
    for (const auto &[other, u] : entries)
      if (other != name && takes(other) && sameElements(t, u)) {
        skipped[name] = "tied to '" + other + "'";
        break;
      }
  }
  return skipped;
}

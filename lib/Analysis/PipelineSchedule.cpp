//===- PipelineSchedule.cpp - the order each pipeline stage works in ------===//

#include "shardc/Analysis/PipelineSchedule.h"

#include <algorithm>

using namespace shardc;

llvm::StringRef shardc::stringifyPipelineSchedule(PipelineScheduleKind kind) {
  switch (kind) {
  case PipelineScheduleKind::GPipe:
    return "gpipe";
  case PipelineScheduleKind::OneFOneB:
    return "1f1b";
  case PipelineScheduleKind::Interleaved:
    return "interleaved";
  }
  return "1f1b";
}

bool shardc::isRunnableSchedule(PipelineScheduleKind kind) {
  return kind != PipelineScheduleKind::Interleaved;
}

std::optional<PipelineScheduleKind>
shardc::parsePipelineSchedule(llvm::StringRef name) {
  if (name == "gpipe")
    return PipelineScheduleKind::GPipe;
  if (name == "1f1b")
    return PipelineScheduleKind::OneFOneB;
  if (name == "interleaved")
    return PipelineScheduleKind::Interleaved;
  return std::nullopt;
}

std::string PipelineAction::str() const {
  return (phase == Forward ? "F" : "B") + std::to_string(microbatch);
}

std::vector<std::vector<PipelineAction>>
shardc::buildPipelineSchedule(PipelineScheduleKind kind, int64_t numStages,
                              int64_t numMicrobatches) {
  std::vector<std::vector<PipelineAction>> schedule(numStages);
  int64_t m = numMicrobatches;
  for (int64_t s = 0; s < numStages; ++s) {
    std::vector<PipelineAction> &actions = schedule[s];
    auto forward = [&](int64_t j) {
      actions.push_back({PipelineAction::Forward, j});
    };
    auto backward = [&](int64_t j) {
      actions.push_back({PipelineAction::Backward, j});
    };
    if (kind == PipelineScheduleKind::GPipe) {
      for (int64_t j = 0; j < m; ++j)
        forward(j);
      for (int64_t j = 0; j < m; ++j)
        backward(j);
      continue;
    }
    // 1F1B: the warm-up fills the pipe below this stage; from then on each
    // forward is followed by the oldest backward, so no more than
    // warmup + 1 micro-batches wait for their backward here.
    int64_t warmup = std::min(numStages - 1 - s, m);
    for (int64_t j = 0; j < warmup; ++j)
      forward(j);
    for (int64_t j = 0; j < m - warmup; ++j) {
      forward(warmup + j);
      backward(j);
    }
    for (int64_t j = m - warmup; j < m; ++j)
      backward(j);
  }
  return schedule;
}

double shardc::idealBubbleFraction(int64_t numStages, int64_t numMicrobatches) {
  return double(numStages - 1) / double(numMicrobatches + numStages - 1);
}

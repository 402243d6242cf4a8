//===- PipelineSchedule.h - when each pipeline stage works ------*- C++ -*-===//
//
// A pipeline schedule lists, for every stage, the forward (F) and backward
// (B) passes of the micro-batches in the order the stage runs them. The
// pipeline builder (lib/Transforms/PipelineProgram.cpp) unrolls each
// stage's list into that stage's program; the backends then only run
// programs. docs/pipeline.md draws both schedules.
//
//   gpipe  every forward, then every backward (Huang et al., GPipe): m
//          micro-batches' activations held at the turn.
//   1f1b   stage s runs min(p-1-s, m) forwards, then alternates one
//          forward and one backward, then finishes the backwards
//          (PipeDream-Flush, Megatron-LM): at most p-s micro-batches'
//          activations held, the same bubble.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_ANALYSIS_PIPELINESCHEDULE_H
#define SHARDC_ANALYSIS_PIPELINESCHEDULE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardc {

enum class PipelineScheduleKind { GPipe, OneFOneB };

/// "gpipe" or "1f1b".
llvm::StringRef stringifyPipelineSchedule(PipelineScheduleKind kind);
std::optional<PipelineScheduleKind> parsePipelineSchedule(llvm::StringRef name);

struct PipelineAction {
  enum Phase : uint8_t { Forward, Backward };
  Phase phase;
  int64_t microbatch;
  /// "F3" or "B3".
  std::string str() const;
};

/// The actions of each of `numStages` stages over `numMicrobatches`
/// micro-batches, in order: result[stage]. Both counts are at least 1.
std::vector<std::vector<PipelineAction>>
buildPipelineSchedule(PipelineScheduleKind kind, int64_t numStages,
                      int64_t numMicrobatches);

/// The bubble fraction of either schedule with uniform stages and free
/// communication: (p - 1) / (m + p - 1).
double idealBubbleFraction(int64_t numStages, int64_t numMicrobatches);

} // namespace shardc

#endif // SHARDC_ANALYSIS_PIPELINESCHEDULE_H

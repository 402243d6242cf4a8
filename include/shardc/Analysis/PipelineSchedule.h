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
//   interleaved
//          each device holds v model chunks (virtual stages) instead of
//          one contiguous stage, and 1F1B runs over the p·v chunks
//          (Narayanan et al., Megatron-LM's interleaved schedule): the
//          bubble shrinks v-fold for v-fold pipeline sends and a little
//          more memory. Only `shardc estimate` prices it; the pipeline
//          builder runs gpipe and 1f1b.
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

enum class PipelineScheduleKind { GPipe, OneFOneB, Interleaved };

/// "gpipe", "1f1b" or "interleaved".
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
/// micro-batches, in order: result[stage]. Both counts are at least 1;
/// `kind` is gpipe or 1f1b (isRunnableSchedule).
std::vector<std::vector<PipelineAction>>
buildPipelineSchedule(PipelineScheduleKind kind, int64_t numStages,
                      int64_t numMicrobatches);

/// Whether the pipeline builder can run `kind` (gpipe, 1f1b), not only
/// price it.
bool isRunnableSchedule(PipelineScheduleKind kind);

/// The bubble fraction of either schedule with uniform stages and free
/// communication: (p - 1) / (m + p - 1).
double idealBubbleFraction(int64_t numStages, int64_t numMicrobatches);

} // namespace shardc

#endif // SHARDC_ANALYSIS_PIPELINESCHEDULE_H

//===- TrainingAccounting.h - bytes per role, recompute's modes -*- C++ -*-===//
//
// `shardc estimate` prices real training runs — bf16 parameters, f32 master
// weights — from the f32 program shardc compiles. This header is the one
// place that says how many bytes each role takes per element under a
// precision policy (docs/estimate.md, "Precision (an accounting policy)
// and recompute (the program)"). Recomputation is no policy here:
// `--shardc-recompute` transforms the program the estimate reads
// (docs/recompute.md); this header only names its modes.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_ANALYSIS_TRAININGACCOUNTING_H
#define SHARDC_ANALYSIS_TRAININGACCOUNTING_H

#include "shardc/Analysis/CostModel.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace shardc {

enum class Precision { F32, BF16Mixed, F16Mixed };
enum class Recompute { None, Selective, Full };

std::optional<Precision> parsePrecision(llvm::StringRef name);
std::optional<Recompute> parseRecompute(llvm::StringRef name);
llvm::StringRef precisionName(Precision p);
llvm::StringRef recomputeName(Recompute r);

/// Bytes per element of each role under a precision policy, for an f32
/// element of the program (integer values keep their own width).
struct RoleBytes {
  /// Parameters, gradients and activations (every value of the forward
  /// and backward passes, and what their collectives move).
  double parameter, gradient, activation;
  /// Optimizer state: per element of an optimizer-state input (Adam's
  /// moments), and the master copy of each parameter element (f32 under
  /// mixed precision; none when the parameters are f32 already).
  double optimizerState, masterWeight;
  /// The element type matrix multiplies run in.
  ComputeType compute;
};

/// ZeRO's accounting (Rajbhandari et al. 2020): mixed precision keeps
/// 2-byte parameters and gradients, and 4-byte master weights and Adam
/// moments (2 + 2 + 12 bytes per parameter); f32 keeps 4 + 4 + 8.
RoleBytes roleBytes(Precision p);

/// The default names of the layer inputs full recompute keeps: those
/// examples/gpt/gpt_graph.py gives the residual stream entering each block
/// (`x0`, then each block's output `h<l>_res2`); --shardc-recompute's
/// `layer-inputs` default.
inline constexpr llvm::StringLiteral kDefaultLayerInputs = "^x0$|_res2$";

} // namespace shardc

#endif // SHARDC_ANALYSIS_TRAININGACCOUNTING_H

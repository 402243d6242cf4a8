//===- SeededParameters.h - how --seed draws a parameter --------*- C++ -*-===//
//
// A model run with `--seed` gets its inputs from a deterministic stream of
// uniform values in [-1, 1) (shardc/Support/RandomTensor.h). Data inputs
// take them as they are; a trainable parameter (`shardc.param`) is drawn
// the way real models are initialised, so that activations keep their scale
// through depth instead of exploding or saturating after a few layers:
//
//   - a weight contracted with another tensor (matmul, dot_general, ...):
//     u / sqrt(fan_in), fan_in being the elements its first contraction sums
//     over (the sizes of its reduction factors) — PyTorch's nn.Linear draws
//     U(+-1/sqrt(fan_in)) the same way;
//   - a normalization's gain (layer_norm's or rms_norm's gamma, or a
//     parameter first multiplied elementwise): 1 + u / 10, near the ones a
//     real model starts from, but not all equal, so that a wrong slice of
//     it still changes the result;
//   - a normalization's bias (layer_norm's beta): u / 10;
//   - a parameter first added to a contraction's result (a bias):
//     u / sqrt(fan_in) of that contraction;
//   - anything else (an embedding table, a parameter used otherwise): u.
//
// Each value is `offset + scale * u` in float32, with `scale` rounded to
// float32 first, so a NumPy script reproduces it bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_ANALYSIS_SEEDEDPARAMETERS_H
#define SHARDC_ANALYSIS_SEEDEDPARAMETERS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace shardc {

/// How a seeded input's uniform draws u in [-1, 1) become its values:
/// `offset + scale * u`.
struct SeededInputScale {
  float scale = 1;
  float offset = 0;
  /// Why, for messages and docs: "data", "fan-in 64", "gain", ...
  std::string reason = "data";
};

/// The scale of argument `index` of `func` under the rules above. Arguments
/// without `shardc.param`, or not of a float type, are data.
SeededInputScale getSeededInputScale(mlir::func::FuncOp func, unsigned index);

} // namespace shardc

#endif // SHARDC_ANALYSIS_SEEDEDPARAMETERS_H

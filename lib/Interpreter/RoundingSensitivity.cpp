//===- RoundingSensitivity.cpp - how far a program amplifies rounding -----===//

#include "shardc/Interpreter/RoundingSensitivity.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Support/HalfFloat.h"
#include "shardc/Support/NumericCheck.h"

#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace shardc;

bool shardc::hasAdaptiveOptimizerState(func::FuncOp func) {
  // Adam's state (its moments and beta powers) is named after it; a
  // mixed-precision SGD step's loss scale is state too, but divides
  // nothing by a gradient's magnitude.
  return llvm::any_of(llvm::seq(func.getNumArguments()), [&](unsigned i) {
    auto name = func.getArgAttrOfType<StringAttr>(
        i, ShardcDialect::getNameAttrName());
    return func.getArgAttr(i, ShardcDialect::getOptimizerStateAttrName()) &&
           name && name.getValue().contains("adam");
  });
}

FailureOr<SmallVector<double>>
shardc::roundingTolerances(func::FuncOp reference, ArrayRef<Tensor> inputs,
                           ArrayRef<Tensor> expected, ArrayRef<Tensor> got,
                           double familyScale, double tolerance) {
  SmallVector<double> tolerances(expected.size(), tolerance);
  // A tolerance of 0 (the same bits) or below (every result fails: a
  // test's way to see the report) is meant as given.
  if (!(tolerance > 0))
    return tolerances;
  // bf16 and f16 results are judged by their type's rounding
  // (NumericCheck.h): one ulp of every input moves an attention output by
  // far more than the few roundings a plan changes, too loose a bound to
  // catch a wrong plan.
  std::optional<DType> working = workingHalfType(reference);
  bool beyond = false;
  for (auto [i, g, want] : llvm::enumerate(got, expected)) {
    if (std::optional<DType> half = judgedHalfType(want.dtype(), working))
      tolerances[i] = std::max(tolerance, halfTolerance(*half));
    beyond |= !(compareToReference(g, want, nullptr, familyScale).first <=
                tolerances[i]);
  }
  // Only an adaptive optimizer (Adam, the one with optimizer state) turns
  // a gradient that is zero in exact arithmetic into a full step: a
  // forward, backward or SGD program keeps its rounding small and gets no
  // further allowance, so a wrong plan cannot hide behind one.
  if (!beyond || !hasAdaptiveOptimizerState(reference))
    return tolerances;
  // Two kinds of probe, each run kSensitivityProbes times with other
  // signs: the inputs moved by one ulp, and every sum rounded one ulp
  // otherwise. The second is what a plan does; the first reaches a
  // gradient that is rounding noise only where the noise depends on the
  // inputs, not where it comes from a sum of constants and saturated values
  // (a softmax whose row is one-hot to float32).
  SmallVector<std::vector<double>> movement;
  for (const Tensor &want : expected)
    movement.emplace_back(want.numElements(), 0.0);
  for (unsigned probe = 0; probe < 2 * kSensitivityProbes; ++probe) {
    bool inputProbe = probe < kSensitivityProbes;
    SmallVector<Tensor> perturbed;
    for (const Tensor &t : inputs)
      perturbed.push_back(inputProbe ? perturbByOneUlp(t, working, probe)
                                     : t.clone());
    InterpreterOptions options;
    if (!inputProbe)
      options.sumRoundingProbe = probe;
    FailureOr<SmallVector<Tensor>> moved =
        interpretFunction(reference, perturbed, options);
    if (failed(moved))
      return failure();
    for (auto [i, want] : llvm::enumerate(expected))
      noteElementMovement((*moved)[i], want, movement[i]);
  }
  // Each element is excused only as far as it moves itself: one Adam
  // parameter whose gradient is noise may move by the learning rate, and
  // the rest of its tensor is still held to the tolerance.
  for (auto [i, g, want] : llvm::enumerate(got, expected))
    tolerances[i] =
        excusedTolerance(g, want, movement[i], familyScale, tolerances[i]);
  return tolerances;
}

std::optional<DType> shardc::workingHalfType(func::FuncOp func) {
  bool bf16 = false, f16 = false;
  auto note = [&](Type type) {
    Type element = getElementTypeOrSelf(type);
    bf16 |= element.isBF16();
    f16 |= element.isF16();
  };
  for (Type t : func.getArgumentTypes())
    note(t);
  func.walk([&](Operation *op) {
    for (Type t : op->getResultTypes())
      note(t);
  });
  if (bf16)
    return DType::BF16;
  if (f16)
    return DType::F16;
  return std::nullopt;
}

std::optional<DType> shardc::judgedHalfType(DType dtype,
                                            std::optional<DType> working) {
  if (isHalfDType(dtype))
    return dtype;
  if (dtype == DType::F32 || dtype == DType::F64)
    return working;
  return std::nullopt;
}

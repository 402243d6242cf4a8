//===- RoundingSensitivity.cpp - how far a program amplifies rounding -----===//

#include "shardc/Interpreter/RoundingSensitivity.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Support/NumericCheck.h"

#include <cmath>

using namespace mlir;
using namespace shardc;

bool shardc::hasAdaptiveOptimizerState(func::FuncOp func) {
  return llvm::any_of(llvm::seq(func.getNumArguments()), [&](unsigned i) {
    return func.getArgAttr(i, ShardcDialect::getOptimizerStateAttrName());
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
  // Only an adaptive optimizer (Adam, the one with optimizer state) turns
  // a gradient that is zero in exact arithmetic into a full step: a
  // forward, backward or SGD program keeps its rounding small and gets no
  // allowance, so a wrong plan cannot hide behind one.
  if (!hasAdaptiveOptimizerState(reference))
    return tolerances;
  bool beyond = false;
  for (auto [g, want] : llvm::zip(got, expected))
    beyond |= !(compareToReference(g, want, nullptr, familyScale).first <=
                tolerance);
  if (!beyond)
    return tolerances;
  SmallVector<Tensor> perturbed;
  for (const Tensor &t : inputs)
    perturbed.push_back(perturbByOneUlp(t));
  FailureOr<SmallVector<Tensor>> moved =
      interpretFunction(reference, perturbed);
  if (failed(moved))
    return failure();
  for (auto [i, want] : llvm::enumerate(expected)) {
    double sensitivity =
        compareToReference((*moved)[i], want, nullptr, familyScale).first;
    if (std::isfinite(sensitivity))
      tolerances[i] = std::max(tolerance, kSensitivityMargin * sensitivity);
  }
  return tolerances;
}


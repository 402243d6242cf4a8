//===- ValueDomainOpInterface.h - where an op is defined --------*- C++ -*-===//
//
// The values an elementwise op is defined and well conditioned on, declared
// on the op (ElementwiseOps.td) and asked by registered op name: a random
// program generator feeds each op operands it is meant for without a list
// of ops of its own.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_VALUEDOMAINOPINTERFACE_H
#define SHARDC_DIALECT_VALUEDOMAINOPINTERFACE_H

#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OperationSupport.h"

#include <limits>

namespace shardc {

/// The values one operand of an op must hold.
struct OperandDomain {
  enum class Sign {
    Any,      ///< any sign, 0 included
    Positive, ///< bounded away from 0 above it (log, sqrt, pow's base)
    NonZero,  ///< bounded away from 0 on one side (a divisor)
  };
  Sign sign = Sign::Any;
  /// Elements of larger magnitude make the op saturate, overflow, or turn
  /// last-bit differences of its argument into large ones of its result
  /// (exp, tanh, sin); infinity: any finite value.
  double maxMagnitude = std::numeric_limits<double>::infinity();

  static constexpr OperandDomain positive() { return {Sign::Positive}; }
  static constexpr OperandDomain nonZero() { return {Sign::NonZero}; }
  static constexpr OperandDomain bounded(double magnitude) {
    return {Sign::Any, magnitude};
  }
  bool operator==(const OperandDomain &o) const {
    return sign == o.sign && maxMagnitude == o.maxMagnitude;
  }
};

/// Where an op or its derivative jumps.
enum class Continuity {
  Continuous,
  /// The derivative jumps (relu, abs at 0; max, min where the operands tie):
  /// a gradient's mask flips on a rounding difference.
  DerivativeJumps,
  /// The value jumps (step at 0): the result flips on a rounding difference.
  ValueJumps,
};

/// Asked of registered op names; an op without the interface gets its
/// defaults (any finite value, not correctly rounded, continuous).
OperandDomain getOperandDomain(mlir::OperationName name, unsigned operand);
bool isCorrectlyRounded(mlir::OperationName name);
Continuity getContinuity(mlir::OperationName name);

} // namespace shardc

#include "shardc/Dialect/ValueDomainOpInterface.h.inc"

#endif // SHARDC_DIALECT_VALUEDOMAINOPINTERFACE_H

//===- TensorOpTraits.h - what kind of tensor op an op is -------*- C++ -*-===//
//
// Marker traits set in ShardcOps.td. `TensorOp` marks every op that computes
// on tensors (not the mesh, not the collectives): each must have a sharding
// rule, a gradient rule, a cost and a kernel, which the dialect promises and
// unittests/Dialect/OpCompletenessTest.cpp checks. The elementwise traits
// let the interpreter attach one kernel to every elementwise op from the
// formula the op's ODS definition carries; `Reduction` lets a generator
// of random programs draw every reduction the dialect registers.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_TENSOROPTRAITS_H
#define SHARDC_DIALECT_TENSOROPTRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace shardc::OpTrait {

template <typename ConcreteType>
class TensorOp : public mlir::OpTrait::TraitBase<ConcreteType, TensorOp> {};

/// One operand, one result of the same type, computed element by element by
/// the op's static `computeElements(x)`.
template <typename ConcreteType>
class UnaryElementwise
    : public mlir::OpTrait::TraitBase<ConcreteType, UnaryElementwise> {};

/// Two operands and a result of one type, computed by `computeElements(a, b)`.
template <typename ConcreteType>
class BinaryElementwise
    : public mlir::OpTrait::TraitBase<ConcreteType, BinaryElementwise> {};

/// One operand and a `dims` attribute: the result drops those dims, each
/// of its elements combining the operand's elements along them (sum, max).
/// buildReduction (TensorOpBuilders.h) builds any such op by name.
template <typename ConcreteType>
class Reduction : public mlir::OpTrait::TraitBase<ConcreteType, Reduction> {};

/// The result holds the operand's elements moved (transpose, reshape),
/// repeated (broadcast_in_dim), converted (convert) or as they are
/// (sharding_constraint): what a value is for is decided past such ops.
template <typename ConcreteType>
class MovesElements
    : public mlir::OpTrait::TraitBase<ConcreteType, MovesElements> {};

} // namespace shardc::OpTrait

#endif // SHARDC_DIALECT_TENSOROPTRAITS_H

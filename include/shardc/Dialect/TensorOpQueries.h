//===- TensorOpQueries.h - what passes ask of ops, by property --*- C++ -*-===//
//
// A pass that rewrites ops it did not build asks here what it needs to know
// of them (or asks an op interface or trait), never by the op's class, so
// that an op's class appears only in its ODS definition, its family file and
// its kernel file (TensorOpBuilders.h builds them). Each query names a
// property of the op's result, not an op: it answers for every op that has
// the property and is defined in the family file of the ops that do
// (lib/Dialect/*Ops.cpp). unittests/Dialect/TensorOpQueriesTest.cpp runs
// the kernel of every op of every-op.mlir and checks each answer against
// the values it computes.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_TENSOROPQUERIES_H
#define SHARDC_DIALECT_TENSOROPQUERIES_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"

#include <optional>

namespace shardc {

/// When `op`'s result is its operand converted element by element to
/// another element type, of the same shape (`shardc.convert`): that
/// operand. Null for any other op.
mlir::Value getConvertedOperand(mlir::Operation *op);

/// When each element of `op`'s result is its own index along one dim and
/// depends on nothing else (`shardc.iota`, counting along `dimension`):
/// that dim. The result then varies along that dim alone.
std::optional<int64_t> getCountedDim(mlir::Operation *op);

/// When `op`'s result repeats its single operand, whose dim i is result
/// dim `dims[i]` (an operand dim of size 1 read at index 0 along it) and
/// whose other result dims are new (`shardc.broadcast_in_dim`): `dims`,
/// valid while `op` is. The result then varies along no dim outside
/// `dims`. Keep the answer in a variable before looping over it: a
/// range-for over `*getBroadcastDims(op)` reads a destroyed temporary.
std::optional<llvm::ArrayRef<int64_t>> getBroadcastDims(mlir::Operation *op);

} // namespace shardc

#endif // SHARDC_DIALECT_TENSOROPQUERIES_H

//===- DifferentiableOpInterface.h - per-op gradient rules ------*- C++ -*-===//
//
// Every tensor op implements `DifferentiableOpInterface`: from the cotangent
// of its result it builds the cotangents of its operands (reverse mode).
// The rules live with each op: in ShardcOps.td for the elementwise ops, in
// the op family's file (lib/Dialect/*Ops.cpp) otherwise; --shardc-autodiff
// (lib/Transforms/Autodiff.cpp) chains them over a function.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_DIFFERENTIABLEOPINTERFACE_H
#define SHARDC_DIALECT_DIFFERENTIABLEOPINTERFACE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include "shardc/Dialect/DifferentiableOpInterface.h.inc"

#endif // SHARDC_DIALECT_DIFFERENTIABLEOPINTERFACE_H

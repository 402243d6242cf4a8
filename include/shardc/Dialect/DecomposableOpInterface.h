//===- DecomposableOpInterface.h - composites expand ------------*- C++ -*-===//
//
// Composite ops (softmax, log_softmax, layer_norm, rms_norm, mean,
// cross_entropy) implement `DecomposableOpInterface`: each builds its own
// expression over primitive ops. --shardc-decompose
// (lib/Transforms/Decompose.cpp) applies it to every composite, first in
// every pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_DECOMPOSABLEOPINTERFACE_H
#define SHARDC_DIALECT_DECOMPOSABLEOPINTERFACE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include "shardc/Dialect/DecomposableOpInterface.h.inc"

#endif // SHARDC_DIALECT_DECOMPOSABLEOPINTERFACE_H

//===- KernelOpInterface.h - per-op interpreter kernels ---------*- C++ -*-===//
//
// Declared here, implemented by external models from lib/Interpreter (see
// KernelOpInterface.td): the dialect names `Tensor` but never its storage.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_KERNELOPINTERFACE_H
#define SHARDC_DIALECT_KERNELOPINTERFACE_H

#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/ArrayRef.h"

namespace shardc {
class Tensor;
} // namespace shardc

#include "shardc/Dialect/KernelOpInterface.h.inc"

#endif // SHARDC_DIALECT_KERNELOPINTERFACE_H

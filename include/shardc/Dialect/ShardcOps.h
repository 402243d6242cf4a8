//===- ShardcOps.h - shardc operations --------------------------*- C++ -*-===//

#ifndef SHARDC_DIALECT_SHARDCOPS_H
#define SHARDC_DIALECT_SHARDCOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "shardc/Dialect/ShardcAttrs.h"

#define GET_OP_CLASSES
#include "shardc/Dialect/ShardcOps.h.inc"

#endif // SHARDC_DIALECT_SHARDCOPS_H

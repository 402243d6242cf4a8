//===- ShardcDialect.h - the shardc dialect ---------------------*- C++ -*-===//
//
// Include this header to use the dialect, its attributes and its operations.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_SHARDCDIALECT_H
#define SHARDC_DIALECT_SHARDCDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "shardc/Dialect/ShardcDialect.h.inc"

#include "shardc/Dialect/ShardcAttrs.h"
#include "shardc/Dialect/ShardcOps.h"

#endif // SHARDC_DIALECT_SHARDCDIALECT_H

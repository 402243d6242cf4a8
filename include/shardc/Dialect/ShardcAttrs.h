//===- ShardcAttrs.h - shardc attributes ------------------------*- C++ -*-===//

#ifndef SHARDC_DIALECT_SHARDCATTRS_H
#define SHARDC_DIALECT_SHARDCATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "shardc/Dialect/ShardingRule.h"

#include "shardc/Dialect/ShardcEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "shardc/Dialect/ShardcAttrs.h.inc"

#endif // SHARDC_DIALECT_SHARDCATTRS_H

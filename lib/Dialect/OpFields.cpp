//===- OpFields.cpp - the op-fields interface -----------------------------===//
//
// The interface's methods are generated per op (Shardc_Op in
// ShardcDialect.td); only the interface's own definitions live here.
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/OpFields.h"

#include "shardc/Dialect/OpFieldsInterface.cpp.inc"

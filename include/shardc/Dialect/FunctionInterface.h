//===- FunctionInterface.h - a program's entry and its I/O ------*- C++ -*-===//
//
// How the tools and the engine find a model's entry function; its inputs
// and outputs are named by ValueNames.h.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_FUNCTIONINTERFACE_H
#define SHARDC_DIALECT_FUNCTIONINTERFACE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "shardc/Dialect/ValueNames.h"

#include <string>
#include <vector>

namespace shardc {

/// @main, else the only function; emits an error at the module and returns
/// null when there is neither.
mlir::func::FuncOp getEntryFunction(mlir::ModuleOp module);

} // namespace shardc

#endif // SHARDC_DIALECT_FUNCTIONINTERFACE_H

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

/// Puts the sharding annotations of `from`'s arguments and results on the
/// same positions of `to`, a function of the same signature (a copy of it,
/// laid out or propagated otherwise). Positions `from` leaves unannotated
/// keep what `to` has.
void copyInterfaceShardings(mlir::func::FuncOp from, mlir::func::FuncOp to);

} // namespace shardc

#endif // SHARDC_DIALECT_FUNCTIONINTERFACE_H

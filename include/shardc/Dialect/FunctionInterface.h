//===- FunctionInterface.h - a program's entry, inputs and outputs -*- C++
//-*-===//
//
// How the tools and the engine find a model's entry function and name its
// inputs and outputs: an input by its `shardc.name` (else its location's
// name), an output by the name of the value it returns, made unique.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_FUNCTIONINTERFACE_H
#define SHARDC_DIALECT_FUNCTIONINTERFACE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace shardc {

/// @main, else the only function; emits an error at the module and returns
/// null when there is neither.
mlir::func::FuncOp getEntryFunction(mlir::ModuleOp module);

/// The name of argument `i`: its shardc.name, else its NameLoc, else "arg<i>".
std::string getInputName(mlir::func::FuncOp func, unsigned i);

/// One unique name per result: the returned value's name (an argument's
/// input name, an op's NameLoc), else "output<i>"; repeats get "_<k>".
std::vector<std::string> getOutputNames(mlir::func::FuncOp func);

} // namespace shardc

#endif // SHARDC_DIALECT_FUNCTIONINTERFACE_H

//===- ValueNames.h - the names users know inputs and outputs by -*- C++
//-*-===//
//
// A function's inputs and outputs are bound and written by name
// (`--inputs x=x.npy`, `--out-dir` writing `z.npy`, the JSON graph's
// "inputs"/"outputs"). The names come from the `shardc.name` argument
// attribute or from NameLocs (ops named after their source value); passes
// that add inputs or outputs (--shardc-autodiff) name them the same way.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_VALUENAMES_H
#define SHARDC_DIALECT_VALUENAMES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <vector>

namespace shardc {

/// The user-facing name of argument `i` of `func`: its `shardc.name`, the
/// name its location carries, or "arg<i>".
std::string getArgumentName(mlir::func::FuncOp func, unsigned i);

/// The names `func`'s results are written under: the name of each returned
/// value (an argument's name, or the NameLoc of its defining op), made
/// unique ("z", "z_1"), or "output<i>" for unnamed values.
std::vector<std::string> getResultNames(mlir::func::FuncOp func);

} // namespace shardc

#endif // SHARDC_DIALECT_VALUENAMES_H

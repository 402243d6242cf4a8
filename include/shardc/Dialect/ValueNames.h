//===- ValueNames.h - the names users know values by ------------*- C++ -*-===//
//
// Users name values in their sources: JSON import gives every value a
// NameLoc and every input a `shardc.name` argument attribute, and passes that
// add values (--shardc-autodiff) name them the same way. Those names bind
// inputs (`--inputs x=x.npy`), name written outputs (`z.npy`), label values
// in diagnostics, SSA names, the simulator's trace and the JSON exporter's
// entries. This file is the one place that reads them.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_VALUENAMES_H
#define SHARDC_DIALECT_VALUENAMES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OpImplementation.h"

#include "llvm/ADT/StringSet.h"

#include <string>
#include <vector>

namespace shardc {

/// The source name a location carries (a NameLoc at its root, or inside a
/// FusedLoc), or "".
llvm::StringRef getNameFromLoc(mlir::Location loc);

/// The name the user gave `value`: a function argument's `shardc.name`, else
/// the name its location carries; "" when it has none.
llvm::StringRef getSourceName(mlir::Value value);

/// Names an op's single result after the name its location carries, if any,
/// and if MLIR accepts it as an SSA name.
void setResultNameFromLoc(mlir::Operation *op,
                          mlir::OpAsmSetValueNameFn setNameFn);

/// How a value is named in diagnostics: `input "x"` for a named argument,
/// `value "h"` for a named value, else its position ("argument #0",
/// "result #1 of 'shardc.matmul'").
std::string describeValue(mlir::Value value);

/// The user-facing name of argument `i` of `func`: its `shardc.name`, the
/// name its location carries, or "arg<i>".
std::string getArgumentName(mlir::func::FuncOp func, unsigned i);

/// The shape a checkpoint stores argument `i` of `func` in: its
/// `shardc.checkpoint_shape`, else its type's shape.
llvm::SmallVector<int64_t> getCheckpointShape(mlir::func::FuncOp func,
                                              unsigned i);

/// The checkpoint entries the model of `op` (its module, or an op in it)
/// has no input for because they are its constants: the buffers its ONNX
/// import recorded in `shardc.buffers`. Loaders skip these entries, which
/// a torch state_dict holds; the list is empty for other models.
std::vector<std::string> getModelBufferNames(mlir::Operation *op);

/// The names `func`'s results are written under: the name of each returned
/// value (an argument's name, or the NameLoc of its defining op), made
/// unique ("z", "z_1"), or "output<i>" for unnamed values.
std::vector<std::string> getResultNames(mlir::func::FuncOp func);

/// Hands out names that are unique among those handed out so far: the first
/// claim of "z" gets "z", later ones "z_1", "z_2", ... (a pass may give two
/// values the same location, and a file needs distinct names).
class UniqueNames {
public:
  std::string claim(llvm::StringRef preferred);

private:
  llvm::StringSet<> used;
};

} // namespace shardc

#endif // SHARDC_DIALECT_VALUENAMES_H

//===- JsonExporter.h - a shardc module as a JSON graph ---------*- C++ -*-===//
//
// The inverse of importJsonGraph (docs/json-format.md): exporting a module and
// importing the result gives a module that prints the same, up to SSA value
// numbering and function name.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_EXPORT_JSONEXPORTER_H
#define SHARDC_EXPORT_JSONEXPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

namespace shardc {

/// Writes the module's mesh and its @main function (or its only function) as
/// a JSON graph. Fails with a diagnostic (at the op's location) on anything
/// the format cannot express.
mlir::LogicalResult exportJsonGraph(mlir::ModuleOp module,
                                    llvm::raw_ostream &os);

} // namespace shardc

#endif // SHARDC_EXPORT_JSONEXPORTER_H

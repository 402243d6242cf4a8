//===- JsonImporter.h - JSON graph to a shardc module -----------*- C++ -*-===//
//
// The JSON graph format (docs/json-format.md) describes one mesh, the named
// inputs of a program, its ops (by IR mnemonic) and its outputs, with
// optional PartitionSpec shardings on any value.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_IMPORT_JSONIMPORTER_H
#define SHARDC_IMPORT_JSONIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace shardc {

/// Parses a JSON graph into a new module holding one shardc.mesh and one
/// func.func @main. Every error is reported through the context's diagnostic
/// engine with a FileLineColLoc in `filename` (line/column of the offending
/// entry) and returns null.
mlir::OwningOpRef<mlir::ModuleOp> importJsonGraph(llvm::StringRef text,
                                                  llvm::StringRef filename,
                                                  mlir::MLIRContext *ctx);

} // namespace shardc

#endif // SHARDC_IMPORT_JSONIMPORTER_H

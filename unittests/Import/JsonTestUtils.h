//===- JsonTestUtils.h - helpers for the JSON graph tests -------*- C++ -*-===//

#ifndef SHARDC_UNITTESTS_IMPORT_JSONTESTUTILS_H
#define SHARDC_UNITTESTS_IMPORT_JSONTESTUTILS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace shardc::test {

/// A diagnostic as the tests look at it.
struct Diag {
  mlir::DiagnosticSeverity severity;
  std::string message;
  /// From the innermost FileLineColLoc of the location; empty if none.
  std::string file;
  unsigned line = 0, column = 0;
  std::vector<std::string> notes;
};

/// Records every diagnostic emitted on `ctx` while it lives.
class DiagCapture {
public:
  explicit DiagCapture(mlir::MLIRContext &ctx);
  std::vector<Diag> diags;
  /// All messages, one per line, for failure output.
  std::string text() const;

private:
  mlir::ScopedDiagnosticHandler handler;
};

struct Imported {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<Diag> diags;
  std::string text() const;
};

/// A context with the shardc and func dialects loaded, single-threaded.
std::unique_ptr<mlir::MLIRContext> makeContext();

Imported importJson(mlir::MLIRContext &ctx, llvm::StringRef json,
                    llvm::StringRef file = "graph.json");
/// The exported text, or "" (with `diags` filled) on failure.
std::string exportJson(mlir::ModuleOp module,
                       std::vector<Diag> *diags = nullptr);
mlir::OwningOpRef<mlir::ModuleOp> parseMlir(mlir::MLIRContext &ctx,
                                            llvm::StringRef text);
/// The module printed with SSA names renumbered in order of appearance, so
/// that modules differing only in value names print the same.
std::string printNormalized(mlir::ModuleOp module);

/// A graph on mesh ["y"=4, "x"=2], one top-level field per line: inputs on
/// line 2, ops on line 3, outputs on line 4.
std::string graph(llvm::StringRef inputs, llvm::StringRef ops,
                  llvm::StringRef outputs, llvm::StringRef extra = "");

/// Imports `json` and expects failure with an error containing `substring`,
/// located in graph.json (at `line`/`column` when non-zero).
::testing::AssertionResult importFails(llvm::StringRef json,
                                       llvm::StringRef substring,
                                       unsigned line = 0, unsigned column = 0);

} // namespace shardc::test

#endif // SHARDC_UNITTESTS_IMPORT_JSONTESTUTILS_H

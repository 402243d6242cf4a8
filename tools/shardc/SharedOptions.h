//===- SharedOptions.h - options every shardc subcommand takes --*- C++ -*-===//

#ifndef SHARDC_TOOLS_SHAREDOPTIONS_H
#define SHARDC_TOOLS_SHAREDOPTIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

#include <string>

namespace shardc {

/// The model path given on the command line and --input-format.
const std::string &getInputPath();
const std::string &getInputFormat();
/// --plan: the sharding plan's path ("" when none).
const std::string &getPlanPath();
/// --buffers: the .onnx model's float initializers that are constants.
llvm::ArrayRef<std::string> getBufferNames();

/// A context with the dialects shardc reads, and the source manager its
/// diagnostics quote from; diagnostics print to stderr.
class ToolSession {
public:
  ToolSession();
  ~ToolSession();
  mlir::MLIRContext &getContext() { return context; }
  /// Loads the model named on the command line; null after a diagnostic.
  /// Every model has an entry function (else that is the diagnostic); it
  /// is stored in `entry` when given. With `expandComposites` (the
  /// commands that execute the global program), --shardc-decompose runs
  /// first: the interpreter has no kernels for composite ops. It keeps
  /// the composites with a gradient rule of their own, which the training
  /// pipelines expand after differentiating and applyAutodiff expands
  /// when there is nothing to differentiate.
  mlir::OwningOpRef<mlir::ModuleOp>
  loadInputModel(mlir::func::FuncOp *entry = nullptr,
                 bool expandComposites = false);

private:
  mlir::MLIRContext context;
  llvm::SourceMgr sourceMgr;
  struct Handler;
  std::unique_ptr<Handler> handler;
};

} // namespace shardc

#endif // SHARDC_TOOLS_SHAREDOPTIONS_H

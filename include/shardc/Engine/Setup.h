//===- Setup.h - one call that makes a context ready for shardc -*- C++ -*-===//
//
// Everything a program needs before it parses, compiles or runs a shardc
// model: the shardc and func dialects loaded, the interpreter's kernels
// attached to the ops, and shardc's passes and pipelines (with canonicalize
// and cse, which --pass-pipeline strings use) registered by name. The CLI
// tools, the Python module and embedders call it instead of repeating the
// list, so a new registration is added in one place.
//
//   mlir::MLIRContext context;
//   shardc::setUpContext(context);
//   auto module = shardc::importJsonGraph(text, "model.json", &context);
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_ENGINE_SETUP_H
#define SHARDC_ENGINE_SETUP_H

namespace mlir {
class DialectRegistry;
class MLIRContext;
} // namespace mlir

namespace shardc {

/// Adds the dialects shardc programs use, with their kernel models, to
/// `registry`.
void registerShardcDialects(mlir::DialectRegistry &registry);

/// Registers shardc's passes and pipelines, canonicalize and cse with the
/// global pass registry; safe to call more than once and from any thread.
void registerShardcPassesAndPipelines();

/// Both of the above, then loads the dialects into `context`; its
/// diagnostics do not print the op they are emitted on (no "see current
/// operation:" note with IR: they are for users, not pass authors).
void setUpContext(mlir::MLIRContext &context);

} // namespace shardc

#endif // SHARDC_ENGINE_SETUP_H

//===- Errors.h - shardc diagnostics as Python exceptions -------*- C++ -*-===//
//
// Every failure of the C++ side was reported as an MLIR diagnostic; while a
// DiagnosticCapture is alive, a context's diagnostics are kept as text (with
// the quoted source line when the model came from a file), and raise()
// turns them into shardc.ShardcError, or shardc.DeviceError carrying the
// failing device's id (both defined in shardc/_errors.py).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_PYTHON_ERRORS_H
#define SHARDC_PYTHON_ERRORS_H

#include "shardc/Import/ModelDiagnostics.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <pybind11/pybind11.h>

#include <optional>
#include <string>

namespace shardc::python {

/// Raises shardc.ShardcError(message), or shardc.DeviceError(message,
/// device) when `device` is given.
[[noreturn]] void raiseError(const std::string &message,
                             std::optional<int64_t> device = std::nullopt);

class DiagnosticCapture {
public:
  /// `serializedSource`, when not empty, names the text the module wrote
  /// itself (a model given as a dict, or a file's graph with mesh= or plan=
  /// applied): its lines and columns are not the user's, so a diagnostic
  /// there prints no position and no excerpt, only the file's name when it
  /// is the user's path (the message names the field or the value).
  DiagnosticCapture(mlir::MLIRContext &context, llvm::SourceMgr &sourceMgr,
                    std::string serializedSource = "");
  ~DiagnosticCapture();
  /// What was reported so far, without the final newline.
  std::string text();
  /// raiseError(`what`, then the diagnostics on the lines below).
  [[noreturn]] void raise(const std::string &what,
                          std::optional<int64_t> device = std::nullopt);

private:
  std::string buffer;
  llvm::raw_string_ostream stream;
  shardc::ModelDiagnosticHandler handler;
  mlir::MLIRContext &context;
  std::string serializedSource;
  mlir::DiagnosticEngine::HandlerID serializedHandler = 0;
};

/// The name compile_json gives a model passed as a dict.
inline constexpr const char *kDictModelName = "<graph>";

} // namespace shardc::python

#endif // SHARDC_PYTHON_ERRORS_H

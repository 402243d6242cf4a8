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
  DiagnosticCapture(mlir::MLIRContext &context, llvm::SourceMgr &sourceMgr);
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
};

} // namespace shardc::python

#endif // SHARDC_PYTHON_ERRORS_H

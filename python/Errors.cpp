//===- Errors.cpp - shardc diagnostics as Python exceptions ---------------===//

#include "Errors.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace py = pybind11;
using namespace shardc::python;

void shardc::python::raiseError(const std::string &message,
                                std::optional<int64_t> device) {
  py::module_ errors = py::module_::import("shardc._errors");
  py::object type = errors.attr(device ? "DeviceError" : "ShardcError");
  py::object error = device ? type(message, *device) : type(message);
  PyErr_SetObject(type.ptr(), error.ptr());
  throw py::error_already_set();
}

/// "error", "warning", "note", "remark".
static llvm::StringRef severityName(mlir::DiagnosticSeverity severity) {
  switch (severity) {
  case mlir::DiagnosticSeverity::Error:
    return "error";
  case mlir::DiagnosticSeverity::Warning:
    return "warning";
  case mlir::DiagnosticSeverity::Note:
    return "note";
  case mlir::DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

DiagnosticCapture::DiagnosticCapture(mlir::MLIRContext &context,
                                     llvm::SourceMgr &sourceMgr,
                                     std::string serializedSource)
    : stream(buffer), handler(sourceMgr, &context, stream), context(context),
      serializedSource(std::move(serializedSource)) {
  if (this->serializedSource.empty())
    return;
  // Registered after `handler`, so asked first; the rest goes on to it.
  serializedHandler = context.getDiagEngine().registerHandler(
      [this](mlir::Diagnostic &diag) -> mlir::LogicalResult {
        auto file = diag.getLocation()->findInstanceOf<mlir::FileLineColLoc>();
        if (!file || file.getFilename() != this->serializedSource)
          return mlir::failure();
        std::string prefix = this->serializedSource == kDictModelName
                                 ? ""
                                 : this->serializedSource + ": ";
        stream << prefix << severityName(diag.getSeverity()) << ": "
               << diag.str() << "\n";
        for (mlir::Diagnostic &note : diag.getNotes())
          stream << prefix << "note: " << note.str() << "\n";
        return mlir::success();
      });
}

DiagnosticCapture::~DiagnosticCapture() {
  if (!serializedSource.empty())
    context.getDiagEngine().eraseHandler(serializedHandler);
}

std::string DiagnosticCapture::text() {
  stream.flush();
  std::string text = buffer;
  while (!text.empty() && text.back() == '\n')
    text.pop_back();
  return text;
}

void DiagnosticCapture::raise(const std::string &what,
                              std::optional<int64_t> device) {
  std::string details = text();
  raiseError(details.empty() ? what : what + ":\n" + details, device);
}

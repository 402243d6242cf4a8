//===- Errors.cpp - shardc diagnostics as Python exceptions ---------------===//

#include "Errors.h"

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

DiagnosticCapture::DiagnosticCapture(mlir::MLIRContext &context,
                                     llvm::SourceMgr &sourceMgr)
    : stream(buffer), handler(sourceMgr, &context, stream) {}

DiagnosticCapture::~DiagnosticCapture() = default;

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

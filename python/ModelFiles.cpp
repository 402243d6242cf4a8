//===- ModelFiles.cpp - checkpoints and the numeric check, for Python -----===//

#include "ModelFiles.h"
#include "Arrays.h"
#include "Errors.h"

#include "shardc/Import/Checkpoint.h"
#include "shardc/Support/NumericCheck.h"

#include <limits>

namespace py = pybind11;
using namespace shardc;
using namespace shardc::python;

void shardc::python::bindModelFiles(py::module_ &m) {
  m.def(
      "read_checkpoint",
      [](const std::string &path) {
        llvm::Expected<std::map<std::string, Tensor>> tensors =
            readCheckpoint(path);
        if (!tensors)
          raiseError("read_checkpoint: " + llvm::toString(tensors.takeError()));
        return toDict(std::move(*tensors));
      },
      py::arg("path"));
  m.def(
      "max_rel_err",
      [](const py::handle &got, const py::handle &want, double familyScale) {
        Tensor g = toTensor(got, "got"), w = toTensor(want, "want");
        return compareToReference(g, w, nullptr, familyScale).first;
      },
      py::arg("got"), py::arg("want"), py::arg("family_scale") = 0.0);
}

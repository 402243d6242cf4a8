//===- ModelFiles.h - checkpoints and numeric checks, Python ----*- C++ -*-===//
//
// What a Python test or script needs besides a compiled model: the tensors
// of a checkpoint file (shardc.read_checkpoint) and the project's measure of
// how far a result is from a reference (shardc.max_rel_err), so that a
// comparison with PyTorch judges as `shardc simulate` does.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_PYTHON_MODELFILES_H
#define SHARDC_PYTHON_MODELFILES_H

#include <pybind11/pybind11.h>

namespace shardc::python {

void bindModelFiles(pybind11::module_ &module);

} // namespace shardc::python

#endif // SHARDC_PYTHON_MODELFILES_H

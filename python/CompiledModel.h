//===- CompiledModel.h - shardc.compile's result ----------------*- C++ -*-===//
//
// A ShardedEngine with its own MLIR context, behind the Python names of the
// ShardedEngine's lifecycle: load_checkpoint, forward, backward, train_step
// (and parameters, spmd_program). Arrays cross as NumPy arrays; the GIL is
// released while the devices compute; a failure raises shardc.ShardcError
// with the diagnostics.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_PYTHON_COMPILEDMODEL_H
#define SHARDC_PYTHON_COMPILEDMODEL_H

#include <pybind11/pybind11.h>

namespace shardc::python {

/// Defines CompiledModel, compile_file and compile_json.
void bindCompiledModel(pybind11::module_ &module);

} // namespace shardc::python

#endif // SHARDC_PYTHON_COMPILEDMODEL_H

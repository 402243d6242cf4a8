//===- ShardcModule.cpp - the _shardc extension module --------------------===//
//
// The C++ half of the `shardc` Python package; shardc/__init__.py builds the
// public API (ShardedEngine, launch, compile) on it.
//
//===----------------------------------------------------------------------===//

#include "CompiledModel.h"
#include "Devices.h"
#include "ModelFiles.h"
#include "PipelineTraining.h"

#include <pybind11/pybind11.h>

PYBIND11_MODULE(_shardc, m) {
  m.doc() = "shardc's engine and runtime (use the shardc package)";
  shardc::python::bindDevices(m);
  shardc::python::bindCompiledModel(m);
  shardc::python::bindModelFiles(m);
  shardc::python::bindPipelineTraining(m);
}

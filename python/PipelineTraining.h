//===- PipelineTraining.h - pipelined training, for Python ------*- C++ -*-===//
//
// `shardc.compile(..., pipeline_axis=)`'s training: the Driver's call
// (shardc/Driver/PipelinedModel.h) on a model file, with NumPy arrays in
// and out.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_PYTHON_PIPELINETRAINING_H
#define SHARDC_PYTHON_PIPELINETRAINING_H

#include <pybind11/pybind11.h>

namespace shardc::python {

/// Defines train_pipelined.
void bindPipelineTraining(pybind11::module_ &module);

} // namespace shardc::python

#endif // SHARDC_PYTHON_PIPELINETRAINING_H

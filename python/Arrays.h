//===- Arrays.h - NumPy arrays to and from shardc tensors -------*- C++ -*-===//
//
// A NumPy array becomes a Tensor by one copy into the tensor's own storage
// (Tensor owns a malloc'd buffer); a Tensor becomes a NumPy array without a
// copy, the array owning the tensor. float32, int32, int64 and bool arrays
// map to f32, i32, i64 and i1; anything else is a TypeError that says how to
// convert, never a silent change of precision.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_PYTHON_ARRAYS_H
#define SHARDC_PYTHON_ARRAYS_H

#include "shardc/Support/Tensor.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <map>
#include <string>

namespace shardc::python {

/// A copy of `array` (anything np.asarray takes) as a Tensor; `what` names
/// the argument in the TypeError or ValueError raised otherwise.
Tensor toTensor(const pybind11::handle &array, const std::string &what);

/// `tensor` as a NumPy array that owns it (no copy).
pybind11::array toArray(Tensor tensor);

/// A dict of name -> array.
pybind11::dict toDict(std::map<std::string, Tensor> tensors);

} // namespace shardc::python

#endif // SHARDC_PYTHON_ARRAYS_H

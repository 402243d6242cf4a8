//===- Arrays.cpp - NumPy arrays to and from shardc tensors ---------------===//

#include "Arrays.h"

#include <cstring>

namespace py = pybind11;
using namespace shardc;

static std::optional<DType> dtypeOf(const py::dtype &dtype) {
  if (dtype.is(py::dtype::of<float>()))
    return DType::F32;
  if (dtype.is(py::dtype::of<int32_t>()))
    return DType::I32;
  if (dtype.is(py::dtype::of<int64_t>()))
    return DType::I64;
  if (dtype.is(py::dtype::of<bool>()))
    return DType::I1;
  return std::nullopt;
}

static py::dtype numpyDType(DType dtype) {
  switch (dtype) {
  case DType::I32:
    return py::dtype::of<int32_t>();
  case DType::I64:
    return py::dtype::of<int64_t>();
  case DType::I1:
    return py::dtype::of<bool>();
  default:
    return py::dtype::of<float>();
  }
}

Tensor python::toTensor(const py::handle &object, const std::string &what) {
  py::module_ numpy = py::module_::import("numpy");
  // C order, so that the bytes are the tensor's row-major elements
  // (ascontiguousarray would turn a 0-d array into a 1-d one).
  py::array array = numpy.attr("asarray")(object, py::arg("order") = "C");
  std::optional<DType> dtype = dtypeOf(array.dtype());
  if (!dtype)
    throw py::type_error(
        what + ": arrays of dtype " +
        py::str(array.dtype()).cast<std::string>() +
        " are not supported (float32, int32, int64 and bool are); convert "
        "it, e.g. with .astype(np.float32)");
  std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
  llvm::Expected<Tensor> tensor = Tensor::allocateUninitialized(shape, *dtype);
  if (!tensor)
    throw py::value_error(what + ": " + llvm::toString(tensor.takeError()));
  if (tensor->byteSize())
    std::memcpy(tensor->rawData(), array.data(), tensor->byteSize());
  return std::move(*tensor);
}

py::array python::toArray(Tensor tensor) {
  auto *owned = new Tensor(std::move(tensor));
  py::capsule owner(owned, [](void *p) { delete static_cast<Tensor *>(p); });
  std::vector<py::ssize_t> shape(owned->shape().begin(), owned->shape().end());
  std::vector<py::ssize_t> strides;
  for (int64_t s : owned->strides())
    strides.push_back(s * owned->elementByteWidth());
  return py::array(numpyDType(owned->dtype()), shape, strides, owned->rawData(),
                   owner);
}

py::dict python::toDict(std::map<std::string, Tensor> tensors) {
  py::dict dict;
  for (auto &[name, tensor] : tensors)
    dict[py::str(name)] = toArray(std::move(tensor));
  return dict;
}

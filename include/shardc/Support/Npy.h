//===- Npy.h - reading and writing NumPy .npy files -------------*- C++ -*-===//
//
// Inputs and outputs of `shardc run/simulate` are .npy files, so models can
// be checked against NumPy/JAX directly.
//
// Reading accepts format versions 1.0, 2.0 and 3.0, dtypes '<f4' and '<f8'
// (the latter converted to f32), C and Fortran order (Fortran data is
// transposed into row-major). Everything else is refused with an llvm::Error
// that names the file and the reason; the file size is checked against the
// header's shape before anything is allocated, so a corrupt header cannot
// make us allocate a huge buffer.
//
// Writing always produces version 1.0 (2.0 if the header would not fit),
// dtype '<f4', C order.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_SUPPORT_NPY_H
#define SHARDC_SUPPORT_NPY_H

#include "shardc/Support/Tensor.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace shardc {

/// Reads the .npy file at `path`.
llvm::Expected<Tensor> readNpy(llvm::StringRef path,
                               uint64_t maxBytes = defaultMaxTensorBytes());

/// Parses the bytes of a .npy file held in memory; `sourceName` names it in
/// errors.
llvm::Expected<Tensor> parseNpy(llvm::StringRef bytes,
                                llvm::StringRef sourceName = "<memory>",
                                uint64_t maxBytes = defaultMaxTensorBytes());

/// Writes `tensor` to `path` as a '<f4' .npy file.
llvm::Error writeNpy(llvm::StringRef path, const Tensor &tensor);

/// Writes the .npy encoding of `tensor` to `os`.
void writeNpy(llvm::raw_ostream &os, const Tensor &tensor);

/// The .npy encoding of `tensor`.
std::string serializeNpy(const Tensor &tensor);

} // namespace shardc

#endif // SHARDC_SUPPORT_NPY_H

//===- CheckpointWriter.h - parameters to the files users read --*- C++ -*-===//
//
// The other half of shardc/Import/Checkpoint.h: named tensors (trained
// parameters) written as NumPy's .npz (np.load reads it) or Hugging Face's
// .safetensors (safetensors.numpy.load_file, transformers), chosen by the
// extension.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_EXPORT_CHECKPOINTWRITER_H
#define SHARDC_EXPORT_CHECKPOINTWRITER_H

#include "shardc/Support/Tensor.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>

namespace shardc {

/// Writes `tensors` (f32) to `path`: `.npz` (a stored zip of `name.npy`
/// members) or `.safetensors`. Fails naming the file.
llvm::Error writeCheckpoint(llvm::StringRef path,
                            const std::map<std::string, Tensor> &tensors);

} // namespace shardc

#endif // SHARDC_EXPORT_CHECKPOINTWRITER_H

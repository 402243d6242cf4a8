//===- Checkpoint.h - parameter values from user files ----------*- C++ -*-===//
//
// A checkpoint is a set of named tensors: the initial values of a model's
// inputs, by name (`blocks.0.fc.weight`). `shardc run/simulate/exec/train
// --checkpoint FILE` and embedders (ShardedEngine::loadCheckpoint) read
// them from an ONNX model's float initializers.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_IMPORT_CHECKPOINT_H
#define SHARDC_IMPORT_CHECKPOINT_H

#include "shardc/Support/Tensor.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>

namespace shardc {

/// The tensors of checkpoint file `path`, by name, chosen by its
/// extension: `.onnx` (the model's float initializers), `.npz` (stored
/// members `name.npy`; a compressed archive is refused) or `.safetensors`
/// (F32, I64, I32 and BOOL tensors). An error message names the file.
llvm::Expected<std::map<std::string, Tensor>>
readCheckpoint(llvm::StringRef path);

} // namespace shardc

#endif // SHARDC_IMPORT_CHECKPOINT_H

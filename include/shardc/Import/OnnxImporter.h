//===- OnnxImporter.h - ONNX model to a shardc module -----------*- C++ -*-===//
//
// Models exported from PyTorch (`torch.onnx.export`, opsets 13 to 17) read
// into the same IR the JSON importer builds: graph inputs become inputs,
// float initializers become `param` inputs named as in the state_dict
// (`blocks.0.fc.weight`) unless they are buffers (constants: see
// OnnxImportOptions), and shape subgraphs fold away for static shapes
// (docs/onnx.md).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_IMPORT_ONNXIMPORTER_H
#define SHARDC_IMPORT_ONNXIMPORTER_H

#include "shardc/Support/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace shardc {

/// What the file does not say and the user does.
struct OnnxImportOptions {
  /// Float initializers that are buffers (torch's `register_buffer`: a
  /// mask, a positional-encoding table), imported as constants, not
  /// trained, not in checkpoints. Those reaching the outputs only where no
  /// gradient flows (a comparison, a Where condition) are buffers without
  /// being named; naming a graph input or no initializer is an error.
  std::vector<std::string> buffers;
};

/// Parses the bytes of an ONNX model into a new module holding a
/// one-device mesh (`@mesh ["data"=1]`, which a sharding plan replaces) and
/// one func.func @main. Every error (a malformed file, an unsupported op,
/// opset or element type, a dynamic shape) is a diagnostic naming the file
/// and, where there is one, the node, and returns null.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxModel(llvm::StringRef bytes, llvm::StringRef filename,
                mlir::MLIRContext *ctx, const OnnxImportOptions &options = {});

/// The float initializers of an ONNX model, by name: the values of the
/// `param` inputs importOnnxModel makes of them (a checkpoint), without
/// the buffers it finds itself or is given in `buffers`.
llvm::Expected<std::map<std::string, Tensor>>
readOnnxInitializers(llvm::StringRef bytes,
                     llvm::ArrayRef<std::string> buffers = {});

} // namespace shardc

#endif // SHARDC_IMPORT_ONNXIMPORTER_H

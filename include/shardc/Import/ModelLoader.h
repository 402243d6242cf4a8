//===- ModelLoader.h - reading .mlir, .json and .onnx models ----*- C++ -*-===//
//
// What the tools and the Python module read models with: the format from
// the extension, the nesting bound checked before MLIR's parser, the names
// users wrote kept as value names.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_IMPORT_MODELLOADER_H
#define SHARDC_IMPORT_MODELLOADER_H

#include "shardc/Import/OnnxImporter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

namespace shardc {

enum class ModelFormat { Mlir, Json, Onnx };

/// The format named by `explicitFormat` ("mlir", "json", "onnx", or "" to decide by
/// the file extension). Fails with a message for stdin without a format.
llvm::Expected<ModelFormat> resolveModelFormat(llvm::StringRef path,
                                               llvm::StringRef explicitFormat);

/// Reads and verifies a model. A .mlir file nested deeper than
/// kMaxMlirNestingDepth is rejected before MLIR's recursive parser sees it
/// (JSON has its own bound). A text file is added to `sourceMgr` so that
/// diagnostics can quote it (an ONNX file is binary). In .mlir files, the SSA names the user wrote
/// (`%h = ...`, `%x: tensor<...>`) become the values' names, as JSON names do.
/// `onnx` applies to .onnx files; buffers named for another format are an
/// error.
mlir::OwningOpRef<mlir::ModuleOp>
loadModel(llvm::StringRef path, ModelFormat format, llvm::SourceMgr &sourceMgr,
          mlir::MLIRContext *ctx, const OnnxImportOptions &onnx = {});

} // namespace shardc

#endif // SHARDC_IMPORT_MODELLOADER_H

//===- ModelDiagnostics.h - diagnostics placed in model files ---*- C++ -*-===//
//
// A text model (.mlir, .json) places a diagnostic at a line and column. An
// .onnx model is a protobuf without lines: its importer places everything
// at file:0:0 inside names (the node, its name and op type; a graph input),
// and the name is the place a user can find. This handler prints those as
// "model.onnx: node 12 "/fc/Gemm" (Gemm): error: ...", and every other
// diagnostic as mlir::SourceMgrDiagnosticHandler does.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_IMPORT_MODELDIAGNOSTICS_H
#define SHARDC_IMPORT_MODELDIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"

#include <optional>
#include <string>

namespace shardc {

/// "model.onnx: node 12 "/fc/Gemm" (Gemm)" for a location naming a place
/// in a file without lines (a NameLoc around file:0:0; the innermost name
/// wins), else nullopt.
std::optional<std::string> placeInFileWithoutLines(mlir::Location loc);

class ModelDiagnosticHandler : public mlir::SourceMgrDiagnosticHandler {
public:
  ModelDiagnosticHandler(llvm::SourceMgr &mgr, mlir::MLIRContext *ctx,
                         llvm::raw_ostream &os);

private:
  void print(mlir::Diagnostic &diag);
  llvm::raw_ostream &out;
};

} // namespace shardc

#endif // SHARDC_IMPORT_MODELDIAGNOSTICS_H

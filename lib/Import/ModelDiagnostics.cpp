//===- ModelDiagnostics.cpp - diagnostics placed in model files -----------===//

#include "shardc/Import/ModelDiagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

std::optional<std::string> shardc::placeInFileWithoutLines(Location loc) {
  while (auto name = dyn_cast<NameLoc>(loc)) {
    if (auto file = dyn_cast<FileLineColLoc>(name.getChildLoc())) {
      if (file.getLine() != 0 || file.getColumn() != 0)
        return std::nullopt;
      return (file.getFilename().getValue() + ": " + name.getName().getValue())
          .str();
    }
    loc = name.getChildLoc();
  }
  return std::nullopt;
}

static llvm::SourceMgr::DiagKind kindOf(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return llvm::SourceMgr::DK_Error;
  case DiagnosticSeverity::Warning:
    return llvm::SourceMgr::DK_Warning;
  case DiagnosticSeverity::Note:
    return llvm::SourceMgr::DK_Note;
  case DiagnosticSeverity::Remark:
    return llvm::SourceMgr::DK_Remark;
  }
  return llvm::SourceMgr::DK_Error;
}

shardc::ModelDiagnosticHandler::ModelDiagnosticHandler(llvm::SourceMgr &mgr,
                                                       MLIRContext *ctx,
                                                       llvm::raw_ostream &os)
    : SourceMgrDiagnosticHandler(mgr, ctx, os), out(os) {
  setHandler([this](Diagnostic &diag) { print(diag); });
}

void shardc::ModelDiagnosticHandler::print(Diagnostic &diag) {
  std::optional<std::string> place =
      placeInFileWithoutLines(diag.getLocation());
  if (!place) {
    emitDiagnostic(diag);
    return;
  }
  llvm::SMDiagnostic(*place, kindOf(diag.getSeverity()), diag.str())
      .print(nullptr, out);
  for (Diagnostic &note : diag.getNotes())
    llvm::SMDiagnostic(
        placeInFileWithoutLines(note.getLocation()).value_or(*place),
        kindOf(note.getSeverity()), note.str())
        .print(nullptr, out);
}

//===- LongLineExcerpts.cpp - diagnostics on very long source lines -------===//

#include "LongLineExcerpts.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

std::string shardc::excerptAround(llvm::StringRef line, unsigned column,
                                  size_t &caretOffset) {
  size_t col = column ? column - 1 : 0;
  if (line.size() <= kMaxExcerptColumns) {
    caretOffset = col;
    return line.str();
  }
  size_t half = kMaxExcerptColumns / 2;
  size_t start = col > half ? col - half : 0;
  if (start + kMaxExcerptColumns > line.size())
    start = line.size() - kMaxExcerptColumns;
  std::string out = start ? "..." : "";
  out += line.substr(start, kMaxExcerptColumns).str();
  if (start + kMaxExcerptColumns < line.size())
    out += "...";
  caretOffset = (start ? 3 : 0) + (col - start);
  return out;
}

shardc::LongLineDiagnosticHandler::LongLineDiagnosticHandler(
    llvm::SourceMgr &sourceMgr, MLIRContext *context,
    SourceMgrDiagnosticHandler &printer, llvm::raw_ostream &os)
    : ScopedDiagnosticHandler(context), sourceMgr(sourceMgr), printer(printer),
      os(os) {
  setHandler([this](Diagnostic &diag) { return handle(diag); });
}

std::optional<llvm::StringRef>
shardc::LongLineDiagnosticHandler::lineOf(FileLineColLoc loc) {
  if (loc.getLine() == 0)
    return std::nullopt;
  for (unsigned i = 1, e = sourceMgr.getNumBuffers(); i <= e; ++i) {
    const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(i);
    if (buffer->getBufferIdentifier() != loc.getFilename().getValue())
      continue;
    llvm::StringRef rest = buffer->getBuffer();
    for (unsigned l = 1; l < loc.getLine() && !rest.empty(); ++l)
      rest = rest.split('\n').second;
    return rest.split('\n').first.rtrim('\r');
  }
  return std::nullopt;
}

LogicalResult shardc::LongLineDiagnosticHandler::handle(Diagnostic &diag) {
  auto fileLoc = diag.getLocation()->findInstanceOf<FileLineColLoc>();
  if (!fileLoc)
    return failure();
  std::optional<llvm::StringRef> line = lineOf(fileLoc);
  if (!line || line->size() <= kMaxExcerptColumns)
    return failure();
  printer.emitDiagnostic(diag.getLocation(), diag.str(), diag.getSeverity(),
                         /*displaySourceLine=*/false);
  size_t caret = 0;
  std::string excerpt = excerptAround(*line, fileLoc.getColumn(), caret);
  os << excerpt << "\n" << std::string(caret, ' ') << "^\n";
  for (Diagnostic &note : diag.getNotes())
    printer.emitDiagnostic(note.getLocation(), note.str(), note.getSeverity(),
                           /*displaySourceLine=*/false);
  return success();
}

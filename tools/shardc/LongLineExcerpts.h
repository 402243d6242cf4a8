//===- LongLineExcerpts.h - diagnostics on long source lines ----*- C++ -*-===//
//
// A diagnostic shows the source line it points into, with a caret under the
// column. A JSON model written on one line (as json.dump writes it) would
// then echo the whole file, kilobytes of it, for one error. Lines longer
// than kMaxExcerptColumns are cut to a window of that many columns around
// the caret, with "..." where text was left out.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_TOOLS_LONGLINEEXCERPTS_H
#define SHARDC_TOOLS_LONGLINEEXCERPTS_H

#include "mlir/IR/Diagnostics.h"

#include <string>

namespace shardc {

inline constexpr size_t kMaxExcerptColumns = 160;

/// The excerpt of `line` shown for 1-based `column`: the line itself when it
/// fits kMaxExcerptColumns, else a window of that width around the column,
/// with "..." on each side cut. `caretOffset` is the caret's 0-based column
/// in the excerpt.
std::string excerptAround(llvm::StringRef line, unsigned column,
                          size_t &caretOffset);

/// Installed after (so before, in MLIR's order) a SourceMgrDiagnosticHandler
/// on the same source manager: emits the diagnostics that point into a line
/// longer than kMaxExcerptColumns through `printer` without its source line,
/// then the cut excerpt; leaves every other diagnostic to `printer`.
class LongLineDiagnosticHandler : public mlir::ScopedDiagnosticHandler {
public:
  LongLineDiagnosticHandler(llvm::SourceMgr &sourceMgr,
                            mlir::MLIRContext *context,
                            mlir::SourceMgrDiagnosticHandler &printer,
                            llvm::raw_ostream &os);

private:
  mlir::LogicalResult handle(mlir::Diagnostic &diag);
  /// The text of the line `loc` points into, if the source manager holds
  /// its file.
  std::optional<llvm::StringRef> lineOf(mlir::FileLineColLoc loc);

  llvm::SourceMgr &sourceMgr;
  mlir::SourceMgrDiagnosticHandler &printer;
  llvm::raw_ostream &os;
};

} // namespace shardc

#endif // SHARDC_TOOLS_LONGLINEEXCERPTS_H

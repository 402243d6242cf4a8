//===- OutputFile.h - the files workflows write -----------------*- C++ -*-===//
//
// Reports, traces and programs a workflow writes where the user asked:
// one place that opens the file and names it when it cannot.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DRIVER_OUTPUTFILE_H
#define SHARDC_DRIVER_OUTPUTFILE_H

#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace shardc {

/// Writes `path` with what `fn` prints; fails after a diagnostic naming the
/// file when it cannot be written.
mlir::LogicalResult writeText(llvm::StringRef path,
                              llvm::function_ref<void(llvm::raw_ostream &)> fn);

} // namespace shardc

#endif // SHARDC_DRIVER_OUTPUTFILE_H

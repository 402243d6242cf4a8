//===- OutputFile.cpp - the files workflows write -------------------------===//

#include "shardc/Driver/OutputFile.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

LogicalResult
shardc::writeText(llvm::StringRef path,
                  llvm::function_ref<void(llvm::raw_ostream &)> fn) {
  std::string error;
  auto out = mlir::openOutputFile(path, &error);
  if (!out) {
    llvm::errs() << "shardc: error: cannot write '" << path << "': " << error
                 << "\n";
    return failure();
  }
  fn(out->os());
  out->keep();
  return success();
}

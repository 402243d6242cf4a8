//===- JsonImportFuzzer.cpp - libFuzzer harness: the JSON importer --------===//
//
// Bytes -> importJsonGraph -> verify. Any crash, sanitizer report, hang or
// huge allocation is a finding; a diagnostic is the expected answer to a
// bad graph.
//
//===----------------------------------------------------------------------===//

#include "FuzzContext.h"

#include "shardc/Import/JsonImporter.h"

#include "mlir/IR/Verifier.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext &ctx = shardc::fuzz::nextFuzzContext();
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      shardc::importJsonGraph(text, "fuzz.json", &ctx);
  if (module)
    (void)mlir::verify(*module);
  return 0;
}

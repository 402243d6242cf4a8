//===- JsonImportFuzzer.cpp - libFuzzer harness: the JSON importer --------===//
//
// Bytes -> importJsonGraph -> verify, then, for a graph that imports, the
// `shardc compile --partition` pipeline (most mutations of the example
// graphs still import, so this reaches propagation and partitioning with
// graphs no .mlir mutation would build). Any crash, sanitizer report, hang
// or huge allocation is a finding; a diagnostic is the expected answer to
// a bad graph.
//
//===----------------------------------------------------------------------===//

#include "FuzzContext.h"
#include "FuzzPipeline.h"

#include "shardc/Import/JsonImporter.h"

#include "mlir/IR/Verifier.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext &ctx = shardc::fuzz::nextFuzzContext();
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      shardc::importJsonGraph(text, "fuzz.json", &ctx);
  if (module && succeeded(mlir::verify(*module)))
    shardc::fuzz::runShardingPipelineChecked(*module);
  return 0;
}

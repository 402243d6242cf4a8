//===- OnnxImportFuzzer.cpp - libFuzzer harness: the ONNX importer --------===//
//
// Bytes -> importOnnxModel -> verify, then, for a model that imports, the
// `shardc compile --partition` pipeline; the same bytes read as a checkpoint
// (readOnnxInitializers). Protobuf parses hostile bytes (truncations,
// nesting past its depth limit, lengths beyond the buffer); what it accepts
// reaches shardc's own reading of shapes, data sizes and attributes. A
// diagnostic is the expected answer to a bad model.
//
//===----------------------------------------------------------------------===//

#include "FuzzContext.h"
#include "FuzzPipeline.h"

#include "shardc/Import/OnnxImporter.h"

#include "mlir/IR/Verifier.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext &ctx = shardc::fuzz::nextFuzzContext();
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      shardc::importOnnxModel(bytes, "fuzz.onnx", &ctx);
  if (module && succeeded(mlir::verify(*module)))
    shardc::fuzz::runShardingPipelineChecked(*module);
  if (auto tensors = shardc::readOnnxInitializers(bytes); !tensors)
    llvm::consumeError(tensors.takeError());
  return 0;
}

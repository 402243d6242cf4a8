//===- MlirPipelineFuzzer.cpp - libFuzzer harness: the .mlir pipeline -----===//
//
// Bytes -> the `shardc compile --partition` path: the tool's own model
// loader (parse, SSA names, verify), then the CLI's sharding pipeline
// (propagate, partition, cleanup), then verify. A diagnostic is the
// expected answer to a bad model; a crash, a sanitizer report, a hang, or a
// pipeline that succeeds on a model and leaves invalid IR is a finding.
//
//===----------------------------------------------------------------------===//

#include "FuzzContext.h"
#include "FuzzPipeline.h"

#include "shardc/Import/ModelLoader.h"

#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <unistd.h>

using namespace mlir;

/// The loader reads a path, as the CLI does: each input is written to one
/// file per process first.
static const std::string &inputPath() {
  static const std::string path =
      "/tmp/shardc-fuzz-mlir-" + std::to_string(getpid()) + ".mlir";
  return path;
}

static bool writeInput(const uint8_t *data, size_t size) {
  std::error_code error;
  llvm::raw_fd_ostream os(inputPath(), error);
  if (error)
    return false;
  os.write(reinterpret_cast<const char *>(data), size);
  return true;
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  atexit([] { unlink(inputPath().c_str()); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!writeInput(data, size)) {
    llvm::errs() << "cannot write " << inputPath() << "\n";
    abort();
  }
  MLIRContext &ctx = shardc::fuzz::nextFuzzContext();
  llvm::SourceMgr sourceMgr;
  OwningOpRef<ModuleOp> module = shardc::loadModel(
      inputPath(), shardc::ModelFormat::Mlir, sourceMgr, &ctx);
  if (!module)
    return 0;
  shardc::fuzz::runShardingPipelineChecked(*module);
  return 0;
}

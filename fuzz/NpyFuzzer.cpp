//===- NpyFuzzer.cpp - libFuzzer harness: the .npy reader -----------------===//
//
// Bytes -> parseNpy, the reader behind `--inputs name=file.npy`. A read
// tensor is touched end to end, so a size the reader got wrong shows up as
// an out-of-bounds access here.
//
//===----------------------------------------------------------------------===//

#include "shardc/Support/Npy.h"

#include "llvm/Support/Error.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  // Well below libFuzzer's malloc limit: a tensor the header promises but
  // the bytes do not hold must be refused before it is allocated.
  constexpr uint64_t maxBytes = 64 << 20;
  llvm::Expected<shardc::Tensor> tensor =
      shardc::parseNpy(bytes, "fuzz.npy", maxBytes);
  if (!tensor) {
    llvm::consumeError(tensor.takeError());
    return 0;
  }
  // Round trip: what we read, we must be able to write and read back.
  std::string again = shardc::serializeNpy(*tensor);
  llvm::Expected<shardc::Tensor> reread =
      shardc::parseNpy(again, "fuzz-again.npy", maxBytes);
  if (!reread) {
    llvm::errs() << "re-reading a written tensor failed: "
                 << llvm::toString(reread.takeError()) << "\n";
    abort();
  }
  // Bytes, not floats: the reader gives every dtype it knows (f32, i32,
  // i64, bool), and values() is the f32 view only.
  if (tensor->shape() != reread->shape() ||
      tensor->dtype() != reread->dtype() ||
      tensor->byteSize() != reread->byteSize() ||
      std::memcmp(tensor->rawData(), reread->rawData(),
                  tensor->byteSize()) != 0) {
    llvm::errs() << "a written tensor reads back different\n";
    abort();
  }
  return 0;
}

//===- Checkpoint.cpp - parameter values from the files users have --------===//

#include "shardc/Import/Checkpoint.h"

#include "shardc/Import/OnnxImporter.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace shardc;

llvm::Expected<std::map<std::string, Tensor>>
shardc::readCheckpoint(llvm::StringRef path) {
  llvm::StringRef ext = llvm::sys::path::extension(path);
  if (ext != ".onnx")
    return llvm::createStringError(
        "cannot tell the format of checkpoint '" + path +
        "' from its extension (expected .onnx)");
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file)
    return llvm::createStringError("cannot read checkpoint '" + path +
                                   "': " + file.getError().message());
  llvm::Expected<std::map<std::string, Tensor>> tensors =
      readOnnxInitializers((*file)->getBuffer());
  if (!tensors)
    return llvm::createStringError("checkpoint '" + path + "': " +
                                   llvm::toString(tensors.takeError()));
  return tensors;
}

//===- Checkpoint.cpp - parameter values from the files users have --------===//
//
// Three formats, by extension: an ONNX model's float initializers; a NumPy
// .npz (a zip archive of .npy files, as np.savez writes it: stored, not
// compressed); a Hugging Face .safetensors file (an 8-byte little-endian
// header length, a JSON header naming each tensor's dtype, shape and byte
// range, then the raw little-endian data). Every length and offset read
// from the file is checked against the file before it is used.
//
//===----------------------------------------------------------------------===//

#include "shardc/Import/Checkpoint.h"

#include "JsonText.h"

#include "shardc/Import/OnnxImporter.h"
#include "shardc/Support/Npy.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <nlohmann/json.hpp>

#include <cstring>

using namespace shardc;
using llvm::StringRef;
namespace endian = llvm::support::endian;

using Tensors = std::map<std::string, Tensor>;

static llvm::Error fail(const std::string &message) {
  return llvm::createStringError(message);
}

/// The members of a zip archive as np.savez writes it: `name.npy` files,
/// stored.
static llvm::Expected<Tensors> readNpz(StringRef bytes) {
  // The end-of-central-directory record: its signature, searched backwards
  // over the longest comment a zip may have.
  constexpr uint32_t kEnd = 0x06054b50, kCentral = 0x02014b50,
                     kLocal = 0x04034b50;
  if (bytes.size() < 22)
    return fail("not a .npz file (too short for a zip archive)");
  size_t end = std::string::npos;
  for (size_t at = bytes.size() - 22;; --at) {
    if (endian::read32le(bytes.data() + at) == kEnd) {
      end = at;
      break;
    }
    if (at == 0 || bytes.size() - at > 22 + 65535)
      break;
  }
  if (end == std::string::npos)
    return fail("not a .npz file (no zip directory)");
  const char *e = bytes.data() + end;
  uint64_t count = endian::read16le(e + 10);
  uint64_t dirSize = endian::read32le(e + 12);
  uint64_t dirOffset = endian::read32le(e + 16);
  if (dirOffset > end || dirSize > end - dirOffset)
    return fail("a damaged .npz file (its directory is outside the file)");
  Tensors out;
  uint64_t at = dirOffset;
  for (uint64_t i = 0; i < count; ++i) {
    if (at + 46 > dirOffset + dirSize ||
        endian::read32le(bytes.data() + at) != kCentral)
      return fail("a damaged .npz file (entry " + std::to_string(i) +
                  " of its directory)");
    const char *c = bytes.data() + at;
    uint16_t method = endian::read16le(c + 10);
    uint64_t size = endian::read32le(c + 20);
    uint64_t stored = endian::read32le(c + 24);
    uint64_t nameLen = endian::read16le(c + 28);
    uint64_t extraLen = endian::read16le(c + 30);
    uint64_t commentLen = endian::read16le(c + 32);
    uint64_t local = endian::read32le(c + 42);
    if (at + 46 + nameLen > bytes.size())
      return fail("a damaged .npz file (a name runs past the end)");
    std::string name(c + 46, nameLen);
    at += 46 + nameLen + extraLen + commentLen;
    if (method != 0)
      return fail("member '" + name +
                  "' is compressed (np.savez_compressed); shardc reads "
                  "np.savez archives");
    if (size != stored || size == 0xffffffffu)
      return fail("member '" + name + "' has a size shardc cannot read");
    if (local + 30 > bytes.size() ||
        endian::read32le(bytes.data() + local) != kLocal)
      return fail("a damaged .npz file (member '" + name + "')");
    uint64_t data = local + 30 + endian::read16le(bytes.data() + local + 26) +
                    endian::read16le(bytes.data() + local + 28);
    if (data > bytes.size() || size > bytes.size() - data)
      return fail("a damaged .npz file (member '" + name +
                  "' runs past the end)");
    StringRef key(name);
    if (!key.consume_back(".npy"))
      return fail("member '" + name + "' is not a .npy array");
    llvm::Expected<Tensor> t = parseNpy(bytes.substr(data, size), name);
    if (!t)
      return t.takeError();
    if (!out.emplace(key.str(), std::move(*t)).second)
      return fail("array '" + key.str() + "' is stored twice");
  }
  return out;
}

static llvm::Expected<Tensors> readSafetensors(StringRef bytes) {
  if (bytes.size() < 8)
    return fail("not a .safetensors file (shorter than its header length)");
  uint64_t headerLen = endian::read64le(bytes.data());
  if (headerLen > bytes.size() - 8)
    return fail("not a .safetensors file (a header of " +
                std::to_string(headerLen) + " bytes in a file of " +
                std::to_string(bytes.size()) + ")");
  StringRef header = bytes.substr(8, headerLen);
  StringRef data = bytes.drop_front(8 + headerLen);
  if (auto deep =
          jsonimport::checkNesting(header, jsonimport::kMaxNestingDepth))
    return fail("its header: " + deep->message);
  nlohmann::json root =
      nlohmann::json::parse(header.begin(), header.end(), nullptr,
                            /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object())
    return fail("its header is not a JSON object");
  Tensors out;
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (it.key() == "__metadata__")
      continue;
    std::string what = "tensor '" + it.key() + "'";
    const nlohmann::json &entry = it.value();
    if (!entry.is_object())
      return fail(what + " is not an object");
    auto dtypeIt = entry.find("dtype");
    auto shapeIt = entry.find("shape");
    auto offsetsIt = entry.find("data_offsets");
    if (dtypeIt == entry.end() || !dtypeIt->is_string() ||
        shapeIt == entry.end() || !shapeIt->is_array() ||
        offsetsIt == entry.end() || !offsetsIt->is_array() ||
        offsetsIt->size() != 2 || !(*offsetsIt)[0].is_number_unsigned() ||
        !(*offsetsIt)[1].is_number_unsigned())
      return fail(what + " needs \"dtype\", \"shape\" and \"data_offsets\"");
    std::string dtypeName = dtypeIt->get<std::string>();
    DType dtype;
    if (dtypeName == "F32")
      dtype = DType::F32;
    else if (dtypeName == "I64")
      dtype = DType::I64;
    else if (dtypeName == "I32")
      dtype = DType::I32;
    else if (dtypeName == "BOOL")
      dtype = DType::I1;
    else
      return fail(what + " has dtype " + dtypeName +
                  " (shardc reads F32, I64, I32 and BOOL)");
    llvm::SmallVector<int64_t> shape;
    for (const nlohmann::json &d : *shapeIt) {
      if (!d.is_number_unsigned())
        return fail(what + " has a shape that is not a list of sizes");
      shape.push_back(static_cast<int64_t>(d.get<uint64_t>()));
    }
    uint64_t begin = (*offsetsIt)[0].get<uint64_t>();
    uint64_t stop = (*offsetsIt)[1].get<uint64_t>();
    if (begin > stop || stop > data.size())
      return fail(what + " has data_offsets outside the file");
    llvm::Expected<Tensor> t = Tensor::allocateUninitialized(shape, dtype);
    if (!t)
      return fail(what + ": " + llvm::toString(t.takeError()));
    if (t->byteSize() != stop - begin)
      return fail(what + " has " + std::to_string(stop - begin) +
                  " bytes of data, but its shape needs " +
                  std::to_string(t->byteSize()));
    std::memcpy(t->rawData(), data.data() + begin, stop - begin);
    out.emplace(it.key(), std::move(*t));
  }
  return out;
}

llvm::Expected<Tensors> shardc::readCheckpoint(StringRef path) {
  StringRef ext = llvm::sys::path::extension(path);
  if (ext != ".onnx" && ext != ".npz" && ext != ".safetensors")
    return fail("cannot tell the format of checkpoint '" + path.str() +
                "' from its extension (expected .onnx, .npz or "
                ".safetensors)");
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file)
    return fail("cannot read checkpoint '" + path.str() +
                "': " + file.getError().message());
  StringRef bytes = (*file)->getBuffer();
  llvm::Expected<Tensors> tensors = ext == ".onnx" ? readOnnxInitializers(bytes)
                                    : ext == ".npz" ? readNpz(bytes)
                                                    : readSafetensors(bytes);
  if (!tensors)
    return fail("checkpoint '" + path.str() +
                "': " + llvm::toString(tensors.takeError()));
  return tensors;
}

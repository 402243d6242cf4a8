//===- CheckpointWriter.cpp - parameters to the files users read ----------===//

#include "shardc/Export/CheckpointWriter.h"

#include "shardc/Support/Npy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CRC.h"
#include "llvm/Support/EndianStream.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

using namespace shardc;
using llvm::StringRef;

namespace {
/// Little-endian fields of a zip header.
struct Fields {
  std::string bytes;
  Fields &u16(uint16_t v) {
    for (int i = 0; i < 2; ++i)
      bytes.push_back(static_cast<char>(v >> (8 * i)));
    return *this;
  }
  Fields &u32(uint32_t v) {
    for (int i = 0; i < 4; ++i)
      bytes.push_back(static_cast<char>(v >> (8 * i)));
    return *this;
  }
  Fields &str(StringRef s) {
    bytes.append(s.begin(), s.end());
    return *this;
  }
};
} // namespace

/// A zip archive of stored (uncompressed) `name.npy` members, as np.savez
/// writes it; members over 4 GiB would need zip64 and are refused.
static llvm::Error writeNpz(llvm::raw_ostream &os,
                            const std::map<std::string, Tensor> &tensors) {
  Fields central;
  uint64_t offset = 0;
  for (const auto &[name, tensor] : tensors) {
    std::string member = name + ".npy";
    std::string data = serializeNpy(tensor);
    if (data.size() >= 0xffffffffu || offset >= 0xffffffffu)
      return llvm::createStringError(
          "'" + name + "' does not fit a zip archive without zip64");
    uint32_t crc = llvm::crc32(llvm::arrayRefFromStringRef(data));
    Fields local;
    local.u32(0x04034b50)
        .u16(20)
        .u16(0)
        .u16(0)
        .u16(0)
        .u16(0x21)
        .u32(crc)
        .u32(data.size())
        .u32(data.size())
        .u16(member.size())
        .u16(0)
        .str(member);
    os << local.bytes << data;
    central.u32(0x02014b50)
        .u16(20)
        .u16(20)
        .u16(0)
        .u16(0)
        .u16(0)
        .u16(0x21)
        .u32(crc)
        .u32(data.size())
        .u32(data.size())
        .u16(member.size())
        .u16(0)
        .u16(0)
        .u16(0)
        .u16(0)
        .u32(0)
        .u32(offset)
        .str(member);
    offset += local.bytes.size() + data.size();
  }
  Fields end;
  end.u32(0x06054b50)
      .u16(0)
      .u16(0)
      .u16(tensors.size())
      .u16(tensors.size())
      .u32(central.bytes.size())
      .u32(offset)
      .u16(0);
  os << central.bytes << end.bytes;
  return llvm::Error::success();
}

static llvm::Error
writeSafetensors(llvm::raw_ostream &os,
                 const std::map<std::string, Tensor> &tensors) {
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  for (const auto &[name, tensor] : tensors) {
    if (tensor.dtype() != DType::F32)
      return llvm::createStringError("'" + name + "' is not f32");
    nlohmann::json entry;
    entry["dtype"] = "F32";
    entry["shape"] = std::vector<int64_t>(tensor.getShape().begin(),
                                          tensor.getShape().end());
    entry["data_offsets"] = {offset, offset + tensor.byteSize()};
    header[name] = entry;
    offset += tensor.byteSize();
  }
  std::string text =
      header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  // The data starts 8-byte aligned, as the format's writers keep it.
  text.append((8 - text.size() % 8) % 8, ' ');
  llvm::support::endian::write<uint64_t>(os, text.size(),
                                         llvm::endianness::little);
  os << text;
  for (const auto &[name, tensor] : tensors)
    os.write(reinterpret_cast<const char *>(tensor.rawData()),
             tensor.byteSize());
  return llvm::Error::success();
}

llvm::Error
shardc::writeCheckpoint(StringRef path,
                        const std::map<std::string, Tensor> &tensors) {
  StringRef ext = llvm::sys::path::extension(path);
  if (ext != ".npz" && ext != ".safetensors")
    return llvm::createStringError(
        "cannot tell the format of '" + path.str() +
        "' from its extension (expected .npz or .safetensors)");
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return llvm::createStringError("cannot write '" + path.str() +
                                   "': " + ec.message());
  llvm::Error e =
      ext == ".npz" ? writeNpz(os, tensors) : writeSafetensors(os, tensors);
  if (e)
    return llvm::createStringError("cannot write '" + path.str() +
                                   "': " + llvm::toString(std::move(e)));
  os.close();
  if (os.has_error())
    return llvm::createStringError("cannot write '" + path.str() +
                                   "': " + os.error().message());
  return llvm::Error::success();
}

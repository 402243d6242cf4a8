//===- Npy.cpp - reading and writing NumPy .npy files ---------------------===//
//
// Format reference: numpy/lib/format.py's documentation. A file is the magic
// "\x93NUMPY", a major and minor version byte, a little-endian header length
// (2 bytes in 1.0, 4 bytes in 2.0/3.0), a Python dict literal with the keys
// 'descr', 'fortran_order' and 'shape', then the raw data.
//
//===----------------------------------------------------------------------===//

#include "shardc/Support/Npy.h"

#include "shardc/Support/HalfFloat.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SwapByteOrder.h"

#include <cstring>
#include <limits>

using namespace shardc;
using llvm::SmallVector;
using llvm::StringRef;

static constexpr StringRef kMagic("\x93NUMPY", 6);

namespace {

/// Header fields we understand.
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  SmallVector<int64_t> shape;
};

/// A recursive-descent parser for the restricted Python literal NumPy writes
/// as a header: a dict of string keys to a string, a bool or a tuple of ints.
/// Anything else is rejected rather than guessed at.
class HeaderParser {
public:
  explicit HeaderParser(StringRef text) : text(text) {}

  /// Parses the whole header into `out`; on failure returns false and sets
  /// `error`.
  bool parse(NpyHeader &out) {
    bool seenDescr = false, seenOrder = false, seenShape = false;
    if (!expect('{'))
      return false;
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      std::string key;
      if (!parseString(key, "a dictionary key") || !expect(':'))
        return false;
      skipSpace();
      if (key == "descr") {
        if (seenDescr)
          return fail("duplicate key 'descr'");
        seenDescr = true;
        if (peek() == '[')
          return fail("structured dtypes (a list 'descr') are not supported");
        if (!parseString(out.descr, "a dtype string for 'descr'"))
          return false;
      } else if (key == "fortran_order") {
        if (seenOrder)
          return fail("duplicate key 'fortran_order'");
        seenOrder = true;
        if (!parseBool(out.fortranOrder))
          return false;
      } else if (key == "shape") {
        if (seenShape)
          return fail("duplicate key 'shape'");
        seenShape = true;
        if (!parseShape(out.shape))
          return false;
      } else {
        return fail("unexpected key '" + key + "'");
      }
      skipSpace();
      if (consume('}'))
        break;
      if (!expect(','))
        return false;
    }
    skipSpace();
    if (pos != text.size())
      return fail("unexpected text after the header dictionary");
    if (!seenDescr || !seenOrder || !seenShape)
      return fail("header lacks one of 'descr', 'fortran_order', 'shape'");
    return true;
  }

  std::string error;

private:
  char peek() const { return pos < text.size() ? text[pos] : '\0'; }
  void skipSpace() {
    while (pos < text.size() && llvm::isSpace(text[pos]))
      ++pos;
  }
  bool consume(char c) {
    if (peek() != c || pos >= text.size())
      return false;
    ++pos;
    return true;
  }
  bool fail(const llvm::Twine &message) {
    error = ("malformed header: " + message + " (at offset " +
             llvm::Twine(pos) + " of the header)")
                .str();
    return false;
  }
  bool expect(char c) {
    skipSpace();
    if (consume(c))
      return true;
    return fail(llvm::Twine("expected '") + llvm::Twine(c) + "'");
  }

  bool parseString(std::string &out, StringRef what) {
    skipSpace();
    char quote = peek();
    if (quote != '\'' && quote != '"')
      return fail("expected " + what);
    ++pos;
    out.clear();
    while (pos < text.size() && text[pos] != quote) {
      // Keys and dtype strings never need escapes; accept the simple ones
      // so that a hand-written header is not refused for style.
      if (text[pos] == '\\' && pos + 1 < text.size())
        ++pos;
      out.push_back(text[pos++]);
    }
    if (!consume(quote))
      return fail("unterminated string");
    return true;
  }

  bool parseBool(bool &out) {
    StringRef rest = text.drop_front(pos);
    if (rest.starts_with("True")) {
      out = true;
      pos += 4;
      return true;
    }
    if (rest.starts_with("False")) {
      out = false;
      pos += 5;
      return true;
    }
    return fail("expected True or False for 'fortran_order'");
  }

  bool parseShape(SmallVector<int64_t> &out) {
    out.clear();
    if (!expect('('))
      return false;
    while (true) {
      skipSpace();
      if (consume(')'))
        return true;
      if (!llvm::isDigit(peek()))
        return fail("expected a non-negative dimension size in 'shape'");
      int64_t value = 0;
      while (llvm::isDigit(peek())) {
        std::optional<int64_t> next = llvm::checkedMulAdd<int64_t>(
            value, 10, static_cast<int64_t>(text[pos] - '0'));
        if (!next)
          return fail("dimension size in 'shape' does not fit in 64 bits");
        value = *next;
        ++pos;
      }
      // Python 2 wrote longs with an 'L' suffix.
      if (peek() == 'L' || peek() == 'l')
        ++pos;
      out.push_back(value);
      skipSpace();
      if (consume(')')) {
        // "(5)" is an int in parentheses, not a tuple; NumPy never writes it.
        if (out.size() == 1)
          return fail("a one-dimensional 'shape' must be written '(n,)'");
        return true;
      }
      if (!expect(','))
        return false;
    }
  }

  StringRef text;
  size_t pos = 0;
};

} // namespace

static llvm::Error npyError(StringRef source, const llvm::Twine &reason) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 source + ": " + reason);
}

/// Reads a little-endian f32 or f64 element at `p` as a float.
template <typename T> static float loadLE(const char *p) {
  using UInt = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  UInt bits = llvm::support::endian::read<UInt, llvm::endianness::little>(p);
  T value;
  std::memcpy(&value, &bits, sizeof(T));
  return static_cast<float>(value);
}

llvm::Expected<Tensor> shardc::parseNpy(StringRef bytes, StringRef sourceName,
                                        uint64_t maxBytes) {
  if (bytes.size() < 10 || !bytes.starts_with(kMagic))
    return npyError(sourceName, "not a .npy file (missing the \\x93NUMPY "
                                "magic)");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  unsigned minor = static_cast<unsigned char>(bytes[7]);
  uint64_t headerLen, prefix;
  if (major == 1) {
    prefix = 10;
    headerLen = llvm::support::endian::read16le(bytes.data() + 8);
  } else if (major == 2 || major == 3) {
    prefix = 12;
    if (bytes.size() < prefix)
      return npyError(sourceName, "truncated file: the header length is "
                                  "incomplete");
    headerLen = llvm::support::endian::read32le(bytes.data() + 8);
  } else {
    return npyError(sourceName, "unsupported .npy format version " +
                                    llvm::Twine(major) + "." +
                                    llvm::Twine(minor) +
                                    " (1.0, 2.0 and 3.0 are supported)");
  }
  if (headerLen > bytes.size() - prefix)
    return npyError(sourceName, "truncated file: the header claims " +
                                    llvm::Twine(headerLen) + " bytes but " +
                                    llvm::Twine(bytes.size() - prefix) +
                                    " follow");

  NpyHeader header;
  HeaderParser parser(bytes.substr(prefix, headerLen));
  if (!parser.parse(header))
    return npyError(sourceName, parser.error);

  // The file's element type and the dtype it is read as: f64 becomes f32
  // (the only float computed), the others keep their type.
  unsigned itemSize;
  DType dtype;
  if (header.descr == "<f4") {
    itemSize = 4;
    dtype = DType::F32;
  } else if (header.descr == "<f8") {
    itemSize = 8;
    dtype = DType::F32;
  } else if (header.descr == "<f2") {
    itemSize = 2;
    dtype = DType::F16;
  } else if (header.descr == "|b1") {
    itemSize = 1;
    dtype = DType::I1;
  } else if (header.descr == "<i4") {
    itemSize = 4;
    dtype = DType::I32;
  } else if (header.descr == "<i8") {
    itemSize = 8;
    dtype = DType::I64;
  } else {
    return npyError(sourceName, "unsupported dtype '" + header.descr +
                                    "' (supported: '<f4', '<f8', '<f2', "
                                    "'|b1', '<i4', '<i8')");
  }

  // Size checks come before allocation: the header is untrusted.
  std::optional<int64_t> count = checkedNumElements(header.shape);
  std::optional<uint64_t> dataBytes =
      count ? llvm::checkedMulUnsigned<uint64_t>(*count, itemSize)
            : std::nullopt;
  if (!dataBytes)
    return npyError(sourceName, "shape " + formatShape(header.shape) +
                                    " is too large: its size overflows");
  uint64_t available = bytes.size() - prefix - headerLen;
  if (available != *dataBytes)
    return npyError(sourceName,
                    "data size mismatch: shape " + formatShape(header.shape) +
                        " of '" + header.descr + "' needs " +
                        llvm::Twine(*dataBytes) + " bytes but the file has " +
                        llvm::Twine(available) +
                        (available < *dataBytes ? " (truncated file)" : ""));
  const char *src = bytes.data() + prefix + headerLen;
  int64_t n = *count;
  // A '|b1' byte other than 0 or 1 is no boolean NumPy writes.
  if (dtype == DType::I1)
    for (int64_t i = 0; i < n; ++i)
      if (static_cast<unsigned char>(src[i]) > 1)
        return npyError(sourceName,
                        "element " + llvm::Twine(i) + " of '|b1' data is " +
                            llvm::Twine(static_cast<unsigned char>(src[i])) +
                            ", not a boolean (0 or 1)");
  llvm::Expected<Tensor> tensor =
      Tensor::allocate(header.shape, dtype, maxBytes);
  if (!tensor)
    return npyError(sourceName, llvm::toString(tensor.takeError()));

  unsigned char *dst = tensor->rawData();
  unsigned width = tensor->elementByteWidth();
  // Element i of the file into element `to` of the tensor.
  auto load = [&](int64_t i, int64_t to) {
    const char *p = src + i * itemSize;
    unsigned char *q = dst + to * width;
    if (header.descr == "<f8") {
      float f = loadLE<double>(p);
      std::memcpy(q, &f, 4);
    } else if (llvm::sys::IsLittleEndianHost) {
      std::memcpy(q, p, itemSize);
    } else {
      for (unsigned k = 0; k < itemSize; ++k)
        q[k] = static_cast<unsigned char>(p[itemSize - 1 - k]);
    }
  };
  if (!header.fortranOrder || tensor->rank() <= 1) {
    if (itemSize == width && llvm::sys::IsLittleEndianHost) {
      if (n > 0)
        std::memcpy(dst, src, *dataBytes);
    } else {
      for (int64_t i = 0; i < n; ++i)
        load(i, i);
    }
    return tensor;
  }

  // Fortran order: the source is read sequentially (dim 0 fastest) and
  // scattered into row-major positions.
  SmallVector<int64_t> strides = tensor->strides();
  SmallVector<int64_t> index(tensor->rank(), 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < n; ++i) {
    load(i, offset);
    for (int64_t d = 0; d < tensor->rank(); ++d) {
      if (++index[d] < tensor->dim(d)) {
        offset += strides[d];
        break;
      }
      offset -= (index[d] - 1) * strides[d];
      index[d] = 0;
    }
  }
  return tensor;
}

llvm::Expected<Tensor> shardc::readNpy(StringRef path, uint64_t maxBytes) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return npyError(path, "cannot open: " + buffer.getError().message());
  return parseNpy((*buffer)->getBuffer(), path, maxBytes);
}

void shardc::writeNpy(llvm::raw_ostream &os, const Tensor &tensor) {
  // NumPy has no bf16: a bf16 tensor is written as the f32 values it holds
  // (exactly), which NumPy and PyTorch read without an extension.
  if (tensor.dtype() == DType::BF16) {
    writeNpy(os, llvm::cantFail(widenToF32(tensor, ~uint64_t(0))));
    return;
  }
  // NumPy's descriptor of the tensor's dtype (f64 is never computed, so
  // never written).
  const char *descr = tensor.dtype() == DType::I1    ? "|b1"
                      : tensor.dtype() == DType::I32 ? "<i4"
                      : tensor.dtype() == DType::I64 ? "<i8"
                      : tensor.dtype() == DType::F16 ? "<f2"
                                                     : "<f4";
  std::string dict = std::string("{'descr': '") + descr +
                     "', 'fortran_order': False, 'shape': (";
  for (int64_t d : tensor.shape())
    dict += std::to_string(d) + ", ";
  if (tensor.rank() > 1) // "(16, 64)", but "(5,)" and "()"
    dict.resize(dict.size() - 2);
  else if (tensor.rank() == 1)
    dict.pop_back();
  dict += "), }";
  // Pad with spaces so that the data starts 64-byte aligned, as NumPy does;
  // the header ends with a newline.
  bool v1 = dict.size() + 1 + 10 <= std::numeric_limits<uint16_t>::max();
  size_t prefix = v1 ? 10 : 12;
  size_t total = prefix + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict.push_back('\n');

  os << kMagic;
  os << static_cast<char>(v1 ? 1 : 2) << static_cast<char>(0);
  char len[4];
  if (v1) {
    llvm::support::endian::write16le(len, static_cast<uint16_t>(dict.size()));
    os.write(len, 2);
  } else {
    llvm::support::endian::write32le(len, static_cast<uint32_t>(dict.size()));
    os.write(len, 4);
  }
  os << dict;
  if (tensor.numElements() == 0)
    return;
  if (llvm::sys::IsLittleEndianHost) {
    os.write(reinterpret_cast<const char *>(tensor.rawData()),
             tensor.byteSize());
    return;
  }
  unsigned width = tensor.elementByteWidth();
  for (int64_t i = 0; i < tensor.numElements(); ++i) {
    const unsigned char *p = tensor.rawData() + i * width;
    for (unsigned k = 0; k < width; ++k)
      os << static_cast<char>(p[width - 1 - k]);
  }
}

std::string shardc::serializeNpy(const Tensor &tensor) {
  std::string out;
  llvm::raw_string_ostream os(out);
  writeNpy(os, tensor);
  os.flush();
  return out;
}

llvm::Error shardc::writeNpy(StringRef path, const Tensor &tensor) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return npyError(path, "cannot open for writing: " + ec.message());
  writeNpy(os, tensor);
  os.close();
  if (os.has_error()) {
    std::string message = os.error().message();
    os.clear_error();
    return npyError(path, "write failed: " + message);
  }
  return llvm::Error::success();
}

//===- JsonPositions.cpp - a JSON text read into a located tree -----------===//
//
// nlohmann/json keeps no source positions, so the importer reads the text
// itself, here, into a JsonDocument that records where every value starts.
// The first read also checks the JSON grammar as it goes and stops at the
// first thing off it; only then does nlohmann run, to explain the error in
// its words (validating every well-formed file with nlohmann as well cost a
// twelfth of a compile). The check may be stricter than nlohmann, never
// laxer: when nlohmann accepts what it stopped at, the text is read again
// without it. Recursion is bounded by the nesting check, which sees the same
// brackets as long as the text read so far is well formed, and every read is
// bounds-checked.
//
//===----------------------------------------------------------------------===//

#include "JsonText.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

using namespace shardc::jsonimport;
using llvm::StringRef;

static constexpr StringRef kUtf8Bom = "\xEF\xBB\xBF";

class JsonDocument::Reader {
public:
  Reader(StringRef text, JsonDocument &doc, bool strict)
      : text(text), doc(doc), strict(strict) {}

  std::optional<TextError> run() {
    if (text.starts_with(kUtf8Bom))
      pos = kUtf8Bom.size();
    skipSpace();
    value(/*parent=*/kNone, /*index=*/0, /*depth=*/0);
    skipSpace();
    if (pos != text.size())
      reject(); // something after the value
    return error;
  }

  /// In strict mode: the text was not all well-formed JSON.
  bool malformed = false;

private:
  char peek() const { return pos < text.size() ? text[pos] : '\0'; }

  /// Strict mode: the text leaves the JSON grammar here. Reading stops (the
  /// position jumps to the end, which ends every loop).
  void reject() {
    if (!strict)
      return;
    malformed = true;
    pos = text.size();
  }

  /// `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`, JSON's number grammar.
  static bool isNumber(StringRef t) {
    size_t i = 0, n = t.size();
    auto digits = [&] {
      size_t start = i;
      while (i < n && llvm::isDigit(t[i]))
        ++i;
      return i > start;
    };
    if (i < n && t[i] == '-')
      ++i;
    if (i < n && t[i] == '0')
      ++i;
    else if (!digits())
      return false;
    if (i < n && t[i] == '.') {
      ++i;
      if (!digits())
        return false;
    }
    if (i < n && (t[i] == 'e' || t[i] == 'E')) {
      ++i;
      if (i < n && (t[i] == '+' || t[i] == '-'))
        ++i;
      if (!digits())
        return false;
    }
    return i == n;
  }

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  /// Reads the value at `pos` into a new node and returns its id.
  int value(int parent, unsigned index, unsigned depth) {
    int id = static_cast<int>(doc.nodes.size());
    JsonNode &node = doc.nodes.emplace_back();
    node.offset = node.keyOffset = pos;
    node.parent = parent;
    node.index = index;
    node.depth = depth;
    // `node` dangles once children are added: use doc.nodes[id] below.
    char c = peek();
    if (c == '{') {
      object(id, depth);
    } else if (c == '[') {
      list(id, depth);
    } else if (c == '"') {
      doc.nodes[id].k = JsonNode::Kind::String;
      doc.nodes[id].str = readString();
    } else {
      size_t start = pos;
      while (pos < text.size() && !llvm::is_contained(" \t\r\n,]}", text[pos]))
        ++pos;
      StringRef token = text.slice(start, pos);
      if (strict && token != "true" && token != "false" && token != "null" &&
          !isNumber(token))
        reject();
      else
        scalar(doc.nodes[id], token);
    }
    return id;
  }

  /// A literal or a number, classified the way nlohmann classifies it.
  void scalar(JsonNode &node, StringRef token) {
    using Kind = JsonNode::Kind;
    if (token == "true" || token == "false") {
      node.k = Kind::Bool;
      node.scalar.b = token == "true";
      return;
    }
    if (token == "null")
      return; // Kind::Null
    // strtoull/strtoll/strtod need a terminated string.
    number.assign(token.begin(), token.end());
    bool integral = token.find_first_of(".eE") == StringRef::npos;
    errno = 0;
    if (integral && !token.starts_with("-")) {
      unsigned long long v = std::strtoull(number.c_str(), nullptr, 10);
      if (errno == 0) {
        node.k = Kind::Unsigned;
        node.scalar.u = v;
        return;
      }
    } else if (integral) {
      long long v = std::strtoll(number.c_str(), nullptr, 10);
      if (errno == 0) {
        node.k = Kind::Integer;
        node.scalar.i = v;
        return;
      }
    }
    // A fraction, an exponent, or an integer beyond 64 bits.
    node.k = Kind::Float;
    node.scalar.f = std::strtod(number.c_str(), nullptr);
    if (!std::isfinite(node.scalar.f))
      reject(); // nlohmann: "number overflow"
  }

  /// Stores the ids in `pending` from `start` on as the children of `id`.
  void adopt(int id, size_t start) {
    llvm::ArrayRef<int> ids = llvm::ArrayRef(pending).drop_front(start);
    int *stored = doc.storage.Allocate<int>(ids.size());
    std::copy(ids.begin(), ids.end(), stored);
    doc.nodes[id].childIds = llvm::ArrayRef<int>(stored, ids.size());
    pending.resize(start);
  }

  void object(int id, unsigned depth) {
    doc.nodes[id].k = JsonNode::Kind::Object;
    ++pos; // '{'
    size_t start = pending.size();
    llvm::SmallDenseSet<StringRef, 8> keys;
    skipSpace();
    while (pos < text.size() && peek() != '}') {
      if (peek() != '"') {
        reject(); // a key must be a string
        break;
      }
      size_t keyOffset = pos;
      StringRef key = readString();
      if (!keys.insert(key).second && !error)
        error = TextError{keyOffset, "field \"" + printable(key) +
                                         "\" appears twice in one object"};
      skipSpace();
      if (peek() == ':')
        ++pos;
      else
        reject();
      skipSpace();
      unsigned index = static_cast<unsigned>(pending.size() - start);
      int child = value(id, index, depth + 1);
      doc.nodes[child].key = key;
      doc.nodes[child].keyOffset = keyOffset;
      pending.push_back(child);
      skipSpace();
      if (peek() != ',')
        break;
      ++pos;
      skipSpace();
      if (peek() != '"')
        reject(); // a trailing comma, or a key that is no string
    }
    if (peek() == '}')
      ++pos;
    else
      reject();
    adopt(id, start);
  }

  void list(int id, unsigned depth) {
    doc.nodes[id].k = JsonNode::Kind::List;
    ++pos; // '['
    size_t start = pending.size();
    skipSpace();
    while (pos < text.size() && peek() != ']') {
      unsigned index = static_cast<unsigned>(pending.size() - start);
      pending.push_back(value(id, index, depth + 1));
      skipSpace();
      if (peek() != ',')
        break;
      ++pos;
      skipSpace();
      if (peek() == ']')
        reject(); // a trailing comma
    }
    if (peek() == ']')
      ++pos;
    else
      reject();
    adopt(id, start);
  }

  /// Strict mode: the length in bytes of the unescaped character at `pos`
  /// if a JSON string may hold it, else 0. nlohmann refuses control
  /// characters and anything but valid UTF-8 (RFC 3629: no overlong forms,
  /// no surrogates, nothing past U+10FFFF), as LLVM's check does.
  size_t rawCharLength() const {
    auto c = static_cast<unsigned char>(text[pos]);
    if (c < 0x80)
      return c < 0x20 ? 0 : 1;
    unsigned n = llvm::getNumBytesForUTF8(c);
    if (pos + n > text.size())
      return 0;
    const auto *p = reinterpret_cast<const llvm::UTF8 *>(text.data() + pos);
    return llvm::isLegalUTF8Sequence(p, p + n) ? n : 0;
  }

  /// Reads the string at `pos` (which must be at its opening quote) with
  /// escapes decoded. A string without escapes is returned in place.
  StringRef readString() {
    if (peek() != '"')
      return {};
    size_t start = ++pos;
    while (pos < text.size() && text[pos] != '"' && text[pos] != '\\') {
      auto c = static_cast<unsigned char>(text[pos]);
      if (!strict || (c >= 0x20 && c < 0x80)) {
        ++pos;
        continue;
      }
      size_t n = rawCharLength();
      if (n == 0) {
        reject();
        return {};
      }
      pos += n;
    }
    if (pos >= text.size() || text[pos] == '"') {
      StringRef plain = text.slice(start, pos);
      if (pos < text.size())
        ++pos; // closing quote
      else
        reject(); // unterminated
      return plain;
    }
    std::string out(text.slice(start, pos));
    while (pos < text.size() && text[pos] != '"') {
      if (text[pos] != '\\') {
        size_t n = strict ? rawCharLength() : 1;
        if (n == 0) {
          reject();
          return {};
        }
        out.append(text.data() + pos, n);
        pos += n;
        continue;
      }
      if (++pos >= text.size())
        break;
      switch (char e = text[pos++]) {
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u':
        appendCodePoint(out);
        break;
      case '"':
      case '\\':
      case '/':
        out.push_back(e);
        break;
      default:
        reject(); // not an escape JSON has
        out.push_back(e);
        break;
      }
    }
    if (pos < text.size())
      ++pos; // closing quote
    else
      reject(); // unterminated
    char *stored = doc.storage.Allocate<char>(out.size());
    std::copy(out.begin(), out.end(), stored);
    return StringRef(stored, out.size());
  }

  /// Reads 4 hex digits at `pos`, or returns -1.
  int readHex4() {
    if (pos + 4 > text.size())
      return -1;
    StringRef digits = text.substr(pos, 4);
    unsigned v = 0;
    if (!llvm::all_of(digits, llvm::isHexDigit) || digits.getAsInteger(16, v))
      return -1;
    pos += 4;
    return static_cast<int>(v);
  }

  /// Decodes the \uXXXX escape whose 'u' was just read, joining surrogate
  /// pairs, and appends it as UTF-8. A surrogate that is not half of a pair
  /// is malformed to nlohmann.
  void appendCodePoint(std::string &out) {
    int hi = readHex4();
    if (hi < 0)
      return reject();
    unsigned cp = static_cast<unsigned>(hi);
    if (cp >= 0xDC00 && cp < 0xE000)
      reject(); // a low surrogate first
    if (cp >= 0xD800 && cp < 0xDC00) {
      bool paired = false;
      if (text.substr(pos).starts_with("\\u")) {
        size_t save = pos;
        pos += 2;
        int lo = readHex4();
        if (lo >= 0xDC00 && lo < 0xE000) {
          cp = 0x10000 + ((cp - 0xD800) << 10) +
               (static_cast<unsigned>(lo) - 0xDC00);
          paired = true;
        } else {
          pos = save;
        }
      }
      if (!paired)
        reject();
    }
    char buf[UNI_MAX_UTF8_BYTES_PER_CODE_POINT];
    char *end = buf;
    if (llvm::ConvertCodePointToUTF8(cp, end))
      out.append(buf, end);
  }

  StringRef text;
  JsonDocument &doc;
  /// Check the grammar (see reject()).
  bool strict;
  size_t pos = 0;
  /// Children of the open lists and objects, innermost last.
  std::vector<int> pending;
  /// The text of the number being read.
  std::string number;
  std::optional<TextError> error;
};

std::optional<TextError> JsonDocument::read(StringRef text) {
  nodes.clear();
  Reader reader(text, *this, /*strict=*/true);
  std::optional<TextError> error = reader.run();
  wellFormedText = !reader.malformed;
  return error;
}

std::optional<TextError> JsonDocument::readValidated(StringRef text) {
  nodes.clear();
  wellFormedText = true;
  return Reader(text, *this, /*strict=*/false).run();
}

int JsonDocument::member(int node, StringRef key) const {
  if (node < 0 || static_cast<size_t>(node) >= nodes.size() ||
      !nodes[node].is_object())
    return kNone;
  for (int child : nodes[node].children())
    if (nodes[child].key == key)
      return child;
  return kNone;
}

int JsonDocument::element(int node, size_t index) const {
  if (node < 0 || static_cast<size_t>(node) >= nodes.size() ||
      !nodes[node].is_array())
    return kNone;
  llvm::ArrayRef<int> children = nodes[node].children();
  return index < children.size() ? children[index] : kNone;
}

static bool isContinuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

LineTable::LineTable(StringRef text) : text(text) {
  lineStarts.push_back(0);
  for (size_t nl = text.find('\n'); nl != StringRef::npos;
       nl = text.find('\n', nl + 1))
    lineStarts.push_back(nl + 1);
  size_t continuations = 0;
  blockContinuations.reserve(text.size() / kBlock + 1);
  for (size_t block = 0; block < text.size(); block += kBlock) {
    blockContinuations.push_back(continuations);
    for (char c : text.substr(block, kBlock))
      continuations += isContinuation(c);
  }
  hasContinuations = continuations > 0;
}

size_t LineTable::continuationsBefore(size_t offset) const {
  if (!hasContinuations)
    return 0;
  size_t block = offset / kBlock;
  if (block >= blockContinuations.size())
    return 0; // only for an empty text
  size_t n = blockContinuations[block];
  for (size_t i = block * kBlock; i < offset; ++i)
    n += isContinuation(text[i]);
  return n;
}

std::pair<unsigned, unsigned> LineTable::lineAndColumn(size_t offset) const {
  offset = std::min(offset, text.size());
  auto it = std::upper_bound(lineStarts.begin(), lineStarts.end(), offset);
  size_t line = static_cast<size_t>(it - lineStarts.begin()) - 1;
  size_t start = lineStarts[line];
  // An editor shows neither the byte-order mark nor UTF-8 continuation bytes
  // as columns.
  if (line == 0 && text.starts_with(kUtf8Bom) && offset >= kUtf8Bom.size())
    start = kUtf8Bom.size();
  size_t chars = (offset - start) -
                 (continuationsBefore(offset) - continuationsBefore(start));
  return {static_cast<unsigned>(line + 1), static_cast<unsigned>(chars + 1)};
}

//===- JsonPositions.cpp - byte offsets of the values of a JSON text ------===//
//
// nlohmann/json keeps no source positions, so the importer scans the text a
// second time, here, to learn where every entry starts. The scanner only runs
// on text the parser accepted, and its recursion is bounded by the nesting
// check; it still bounds-checks every read so that it cannot misbehave even
// if the two ever disagreed.
//
//===----------------------------------------------------------------------===//

#include "JsonText.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/ConvertUTF.h"

#include <algorithm>

using namespace shardc::jsonimport;
using llvm::StringRef;

static constexpr StringRef kUtf8Bom = "\xEF\xBB\xBF";

class JsonPositions::Scanner {
public:
  Scanner(StringRef text, unsigned recordDepth, std::vector<Node> &nodes)
      : text(text), recordDepth(recordDepth), nodes(nodes) {}

  std::optional<TextError> run() {
    if (text.starts_with(kUtf8Bom))
      pos = kUtf8Bom.size();
    skipSpace();
    value(/*depth=*/0, /*record=*/true);
    return error;
  }

private:
  char peek() const { return pos < text.size() ? text[pos] : '\0'; }

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  int newNode() {
    nodes.push_back(Node{pos, pos, {}, {}});
    return static_cast<int>(nodes.size() - 1);
  }

  /// Scans the value at `pos`; returns its node, or kNone when it is deeper
  /// than what is recorded.
  int value(unsigned depth, bool record) {
    int id = record ? newNode() : kNone;
    char c = peek();
    if (c == '{')
      object(id, depth, record);
    else if (c == '[')
      list(id, depth, record);
    else if (c == '"')
      readString(/*decode=*/false);
    else
      while (pos < text.size() && !llvm::is_contained(" \t\r\n,]}", text[pos]))
        ++pos;
    return id;
  }

  void object(int id, unsigned depth, bool record) {
    ++pos; // '{'
    bool recordChildren = record && depth + 1 <= recordDepth;
    llvm::StringSet<> keys;
    skipSpace();
    if (peek() == '}') {
      ++pos;
      return;
    }
    while (pos < text.size()) {
      skipSpace();
      size_t keyOffset = pos;
      std::string key = readString(/*decode=*/true);
      if (!keys.insert(key).second && !error)
        error = TextError{keyOffset, "field \"" + printable(key) +
                                         "\" appears twice in one object"};
      skipSpace();
      if (peek() == ':')
        ++pos;
      skipSpace();
      int child = value(depth + 1, recordChildren);
      if (child != kNone) {
        nodes[child].key = std::move(key);
        nodes[child].keyOffset = keyOffset;
        nodes[id].children.push_back(child);
      }
      skipSpace();
      if (peek() != ',')
        break;
      ++pos;
    }
    if (peek() == '}')
      ++pos;
  }

  void list(int id, unsigned depth, bool record) {
    ++pos; // '['
    bool recordChildren = record && depth + 1 <= recordDepth;
    skipSpace();
    if (peek() == ']') {
      ++pos;
      return;
    }
    while (pos < text.size()) {
      skipSpace();
      int child = value(depth + 1, recordChildren);
      if (child != kNone)
        nodes[id].children.push_back(child);
      skipSpace();
      if (peek() != ',')
        break;
      ++pos;
    }
    if (peek() == ']')
      ++pos;
  }

  /// Reads the string at `pos` (which must be at its opening quote) and, if
  /// asked, returns it with escapes decoded, so that keys can be compared
  /// with the parsed document's.
  std::string readString(bool decode) {
    std::string out;
    if (peek() != '"')
      return out;
    ++pos;
    while (pos < text.size() && text[pos] != '"') {
      char c = text[pos++];
      if (c != '\\') {
        if (decode)
          out.push_back(c);
        continue;
      }
      if (pos >= text.size())
        break;
      char e = text[pos++];
      if (!decode)
        continue;
      switch (e) {
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
      default:
        out.push_back(e);
        break; // '"', '\\', '/'
      }
    }
    if (pos < text.size())
      ++pos; // closing quote
    return out;
  }

  /// Reads 4 hex digits at `pos`, or returns -1.
  int readHex4() {
    if (pos + 4 > text.size())
      return -1;
    unsigned v = 0;
    if (text.substr(pos, 4).getAsInteger(16, v))
      return -1;
    pos += 4;
    return static_cast<int>(v);
  }

  /// Decodes the \uXXXX escape whose 'u' was just read, joining surrogate
  /// pairs, and appends it as UTF-8.
  void appendCodePoint(std::string &out) {
    int hi = readHex4();
    if (hi < 0)
      return;
    unsigned cp = static_cast<unsigned>(hi);
    if (cp >= 0xD800 && cp < 0xDC00 && text.substr(pos).starts_with("\\u")) {
      size_t save = pos;
      pos += 2;
      int lo = readHex4();
      if (lo >= 0xDC00 && lo < 0xE000)
        cp = 0x10000 + ((cp - 0xD800) << 10) +
             (static_cast<unsigned>(lo) - 0xDC00);
      else
        pos = save;
    }
    char buf[UNI_MAX_UTF8_BYTES_PER_CODE_POINT];
    char *end = buf;
    if (llvm::ConvertCodePointToUTF8(cp, end))
      out.append(buf, end);
  }

  StringRef text;
  unsigned recordDepth;
  std::vector<Node> &nodes;
  size_t pos = 0;
  std::optional<TextError> error;
};

std::optional<TextError> JsonPositions::scan(StringRef text,
                                             unsigned recordDepth) {
  nodes.clear();
  return Scanner(text, recordDepth, nodes).run();
}

int JsonPositions::member(int node, StringRef key) const {
  if (node < 0 || static_cast<size_t>(node) >= nodes.size())
    return kNone;
  for (int child : nodes[node].children)
    if (nodes[child].key == key)
      return child;
  return kNone;
}

int JsonPositions::element(int node, size_t index) const {
  if (node < 0 || static_cast<size_t>(node) >= nodes.size())
    return kNone;
  const std::vector<int> &children = nodes[node].children;
  return index < children.size() ? children[index] : kNone;
}

static bool isContinuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

LineTable::LineTable(StringRef text) : text(text) {
  lineStarts.push_back(0);
  size_t continuations = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    if (i % kBlock == 0)
      blockContinuations.push_back(continuations);
    if (text[i] == '\n')
      lineStarts.push_back(i + 1);
    continuations += isContinuation(text[i]);
  }
}

size_t LineTable::continuationsBefore(size_t offset) const {
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

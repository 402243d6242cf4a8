//===- JsonText.h - raw JSON text: parsing, positions, lines ----*- C++ -*-===//
//
// The layer of the importer that deals with bytes: it rejects pathological
// nesting before anything recursive runs, then reads the text into a
// JsonDocument, a compact tree that keeps the byte offset of every value, so
// that every later diagnostic can point at the JSON entry it is about. Text
// that is not well-formed JSON is explained by nlohmann/json, whose messages
// explain a syntax error well.
//
// LLVM is built without exceptions, so nlohmann's throwing paths would abort;
// validation goes through its SAX interface, which reports errors by return
// value.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_IMPORT_JSONTEXT_H
#define SHARDC_LIB_IMPORT_JSONTEXT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Allocator.h"

#include <optional>
#include <string>
#include <vector>

namespace shardc::jsonimport {

/// Deepest nesting of lists and objects accepted. Real graphs need 4 levels;
/// the limit keeps every recursive walk of the document shallow.
constexpr unsigned kMaxNestingDepth = 64;

/// A problem with the text itself, at byte `offset`.
struct TextError {
  size_t offset = 0;
  std::string message;
};

/// Fails if lists/objects nest deeper than `maxDepth`, pointing at the first
/// bracket that is too deep. Understands strings, so brackets inside them do
/// not count; anything else malformed is left for the parser to report.
std::optional<TextError> checkNesting(llvm::StringRef text, unsigned maxDepth);

/// Checks that `text` is one JSON value, without building anything. On
/// failure the error carries nlohmann's explanation (made printable) and the
/// offset where it stopped.
std::optional<TextError> validateJson(llvm::StringRef text);

/// Makes `text` safe to embed in a diagnostic: control characters and bytes
/// that are not valid UTF-8 (a binary file's garbage) become \xNN escapes.
std::string printable(llvm::StringRef text);

/// One value of a JsonDocument. The predicates are named like nlohmann's,
/// which the readers were first written against.
class JsonNode {
public:
  enum class Kind : uint8_t {
    Null,
    Bool,
    /// A negative integer that fits in int64.
    Integer,
    /// A non-negative integer that fits in uint64.
    Unsigned,
    /// Any other number (as nlohmann reads them: integers that fit neither
    /// become floating point).
    Float,
    String,
    List,
    Object,
  };

  Kind kind() const { return k; }
  bool is_null() const { return k == Kind::Null; }
  bool is_boolean() const { return k == Kind::Bool; }
  bool is_number_unsigned() const { return k == Kind::Unsigned; }
  bool is_number_integer() const {
    return k == Kind::Integer || k == Kind::Unsigned;
  }
  bool is_number_float() const { return k == Kind::Float; }
  bool is_number() const { return is_number_integer() || is_number_float(); }
  bool is_string() const { return k == Kind::String; }
  bool is_array() const { return k == Kind::List; }
  bool is_object() const { return k == Kind::Object; }

  /// Number of elements or members (0 for anything else).
  size_t size() const { return childIds.size(); }
  bool empty() const { return childIds.empty(); }
  /// Ids of the elements or members, in document order.
  llvm::ArrayRef<int> children() const { return childIds; }

  /// The scalar, for the matching kind only.
  bool getBool() const { return scalar.b; }
  int64_t getInteger() const { return scalar.i; }
  uint64_t getUnsigned() const { return scalar.u; }
  double getFloat() const { return scalar.f; }
  /// The decoded string.
  llvm::StringRef getString() const { return str; }

  /// Byte offset of the first character of the value.
  size_t offset = 0;
  /// Byte offset of the key of a member (the value's for other nodes).
  size_t keyOffset = 0;
  /// The decoded key of a member.
  llvm::StringRef key;
  /// The enclosing list or object, or -1 for the root.
  int parent = -1;
  /// Position among the parent's elements or members.
  unsigned index = 0;
  /// Nesting depth: 0 for the root.
  unsigned depth = 0;

private:
  friend class JsonDocument;
  Kind k = Kind::Null;
  union {
    bool b;
    int64_t i;
    uint64_t u;
    double f;
  } scalar = {};
  llvm::StringRef str;
  llvm::ArrayRef<int> childIds;
};

/// A JSON text read into a tree of JsonNodes addressed by id. Strings without
/// escapes point into the text, which must outlive the document.
class JsonDocument {
public:
  static constexpr int kNone = -1;

  /// Reads `text`, checking the JSON grammar as it goes. Fails on a key
  /// repeated within one object: nlohmann would silently keep the last one,
  /// and a repeated field in a hand-written graph is almost always a
  /// mistake. If the text leaves the grammar, reading stops there,
  /// wellFormed() is false and the document is incomplete: validateJson
  /// explains the error; should it accept the text, readValidated() reads
  /// it. The check never accepts what nlohmann rejects.
  std::optional<TextError> read(llvm::StringRef text);
  /// Whether the last read() found the text well formed.
  bool wellFormed() const { return wellFormedText; }
  /// Reads `text`, which validateJson accepted, without checking it.
  std::optional<TextError> readValidated(llvm::StringRef text);

  int root() const { return nodes.empty() ? kNone : 0; }
  const JsonNode &operator[](int id) const { return nodes[id]; }
  /// The value of member `key` of object node `node`, or kNone.
  int member(int node, llvm::StringRef key) const;
  /// Element `index` of list node `node`, or kNone.
  int element(int node, size_t index) const;

private:
  class Reader;
  std::vector<JsonNode> nodes;
  bool wellFormedText = false;
  /// Children lists and decoded strings.
  llvm::BumpPtrAllocator storage;
};

/// Maps byte offsets to 1-based (line, column); columns count UTF-8 code
/// points, as editors do.
class LineTable {
public:
  explicit LineTable(llvm::StringRef text);
  std::pair<unsigned, unsigned> lineAndColumn(size_t offset) const;

private:
  /// Number of UTF-8 continuation bytes before `offset`.
  size_t continuationsBefore(size_t offset) const;

  llvm::StringRef text;
  std::vector<size_t> lineStarts;
  /// continuationsBefore() at every kBlock-th byte, so that a column costs
  /// O(kBlock) even on a one-line file of many megabytes.
  static constexpr size_t kBlock = 256;
  std::vector<size_t> blockContinuations;
  /// The text has non-ASCII characters (else a column is a byte count).
  bool hasContinuations = false;
};

} // namespace shardc::jsonimport

#endif // SHARDC_LIB_IMPORT_JSONTEXT_H

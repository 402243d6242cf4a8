//===- JsonText.h - raw JSON text: parsing, positions, lines ----*- C++ -*-===//
//
// The layer of the importer that deals with bytes: it rejects pathological
// nesting before anything recursive runs, parses with nlohmann/json (which
// keeps no source positions), and separately scans the accepted text for the
// byte offset of every value, so that every later diagnostic can point at the
// JSON entry it is about.
//
// LLVM is built without exceptions, so nlohmann's throwing paths would abort;
// everything here goes through its SAX interface, which reports errors by
// return value.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_IMPORT_JSONTEXT_H
#define SHARDC_LIB_IMPORT_JSONTEXT_H

#include "llvm/ADT/StringRef.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace shardc::jsonimport {

using Json = nlohmann::json;

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

/// Parses `text` into `out` without exceptions. On failure the error carries
/// nlohmann's explanation (made printable) and the offset where it stopped.
std::optional<TextError> parseJson(llvm::StringRef text, Json &out);

/// Makes `text` safe to embed in a diagnostic: control characters and bytes
/// that are not valid UTF-8 (a binary file's garbage) become \xNN escapes.
std::string printable(llvm::StringRef text);

/// Byte offsets of the values of a parsed document, as a tree mirroring it.
/// Only the first `recordDepth` levels are kept: deeper values (the elements
/// of a large constant) are reported at their enclosing entry, which keeps
/// the tree small whatever the document size.
class JsonPositions {
public:
  static constexpr int kNone = -1;

  /// Scans `text`, which parseJson accepted. Fails on a key repeated within
  /// one object: nlohmann would silently keep the last one, and a repeated
  /// field in a hand-written graph is almost always a mistake.
  std::optional<TextError> scan(llvm::StringRef text, unsigned recordDepth);

  int root() const { return nodes.empty() ? kNone : 0; }
  /// The value of member `key` of object node `node`, or kNone.
  int member(int node, llvm::StringRef key) const;
  /// Element `index` of list node `node`, or kNone.
  int element(int node, size_t index) const;
  /// Byte offset of the first character of the node's value.
  size_t offset(int node) const { return nodes[node].offset; }
  /// Byte offset of the key of a member node (its value's for elements).
  size_t keyOffset(int node) const { return nodes[node].keyOffset; }

private:
  struct Node {
    size_t offset = 0;
    size_t keyOffset = 0;
    /// Member key (decoded) when the parent is an object.
    std::string key;
    std::vector<int> children;
  };
  class Scanner;
  std::vector<Node> nodes;
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
};

} // namespace shardc::jsonimport

#endif // SHARDC_LIB_IMPORT_JSONTEXT_H

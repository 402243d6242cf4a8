//===- NestingDepth.cpp - bounding bracket nesting before parsing ---------===//

#include "shardc/Support/NestingDepth.h"

#include "llvm/ADT/SmallVector.h"

using namespace shardc;

static char closerOf(char open) {
  switch (open) {
  case '[':
    return ']';
  case '{':
    return '}';
  case '(':
    return ')';
  default:
    return '>';
  }
}

namespace {
/// The bytes the scan has to look at in one syntax: quotes, brackets and
/// (MLIR) the comment slash. Every other byte changes nothing, and the scan
/// runs over every byte of every input before it is parsed, so those are
/// skipped with one table lookup each.
struct SpecialBytes {
  bool isSpecial[256] = {};
  explicit SpecialBytes(bool mlir) {
    for (unsigned char c : llvm::StringRef("\"[]{}"))
      isSpecial[c] = true;
    if (mlir)
      for (unsigned char c : llvm::StringRef("()<>/"))
        isSpecial[c] = true;
  }
};
} // namespace

std::optional<size_t> shardc::findExcessNesting(llvm::StringRef text,
                                                unsigned maxDepth,
                                                NestingSyntax syntax) {
  bool mlir = syntax == NestingSyntax::Mlir;
  static const SpecialBytes jsonBytes(false), mlirBytes(true);
  const bool *isSpecial = (mlir ? mlirBytes : jsonBytes).isSpecial;
  // The open brackets, innermost last; never longer than maxDepth.
  llvm::SmallVector<char, 64> open;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (!isSpecial[static_cast<unsigned char>(c)])
      continue;
    if (c == '"') {
      // A string: the character after a backslash cannot end it. An
      // unterminated string runs to the end, where nothing is left to count.
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      continue;
    }
    if (mlir && c == '/' && i + 1 < e && text[i + 1] == '/') {
      i = text.find('\n', i);
      if (i == llvm::StringRef::npos)
        break;
      continue;
    }
    bool opens = c == '[' || c == '{' || (mlir && (c == '(' || c == '<'));
    if (opens) {
      if (open.size() >= maxDepth)
        return i;
      open.push_back(c);
      continue;
    }
    // `->` separates a function type's inputs from its results.
    if (c == '>' && i > 0 && text[i - 1] == '-')
      continue;
    if (!open.empty() && c == closerOf(open.back()))
      open.pop_back();
  }
  return std::nullopt;
}

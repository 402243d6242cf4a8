//===- NestingDepth.h - bounding bracket nesting before parsing -*- C++ -*-===//
//
// The parsers shardc hands its input to (MLIR's, the JSON reader) descend
// one C++ call per nesting level, so a file of ten thousand `[` overflows
// the stack and the process dies with SIGSEGV instead of a diagnostic. A
// linear scan of the text bounds the depth before any recursive parser
// runs; it understands just enough of the syntax (strings, comments) that
// brackets there do not count.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_SUPPORT_NESTINGDEPTH_H
#define SHARDC_SUPPORT_NESTINGDEPTH_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <optional>

namespace shardc {

enum class NestingSyntax {
  /// `[ ]` and `{ }`; "strings" with backslash escapes.
  Json,
  /// `[ ]`, `{ }`, `( )` and `< >` (the `>` of `->` closes nothing);
  /// "strings" with backslash escapes and `//` comments.
  Mlir,
};

/// Deepest nesting accepted in a .mlir file. Real programs stay below 20
/// (module, function, region, attribute lists, types); MLIR's parser needs
/// well under a kilobyte of stack per level, so 256 levels cannot exhaust
/// even a small thread stack.
constexpr unsigned kMaxMlirNestingDepth = 256;

/// The byte offset of the first opening bracket of `text` that is nested
/// deeper than `maxDepth`, or std::nullopt if none is. A closing bracket
/// that does not match the innermost open one is not counted: the text is
/// malformed, which the parser reports better.
std::optional<size_t> findExcessNesting(llvm::StringRef text, unsigned maxDepth,
                                        NestingSyntax syntax);

} // namespace shardc

#endif // SHARDC_SUPPORT_NESTINGDEPTH_H

//===- ByteSize.h - byte counts as users write them -------------*- C++ -*-===//
//
// A memory budget on the command line, in a Python call or a plan is
// written "64M" or "1073741824": one parser, so every entry point accepts
// the same spellings and refuses the same mistakes.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_SUPPORT_BYTESIZE_H
#define SHARDC_SUPPORT_BYTESIZE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace shardc {

/// "64M" -> 67108864 (K, M, G: powers of 1024; a plain number is bytes);
/// nullopt for anything else, and for a count past INT64_MAX.
std::optional<int64_t> parseByteSize(llvm::StringRef text);

} // namespace shardc

#endif // SHARDC_SUPPORT_BYTESIZE_H

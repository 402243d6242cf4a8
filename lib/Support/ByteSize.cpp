//===- ByteSize.cpp - byte counts as users write them ---------------------===//

#include "shardc/Support/ByteSize.h"

#include <cctype>

using namespace shardc;

std::optional<int64_t> shardc::parseByteSize(llvm::StringRef text) {
  text = text.trim();
  int64_t scale = 1;
  if (!text.empty()) {
    switch (std::toupper(static_cast<unsigned char>(text.back()))) {
    case 'K':
      scale = int64_t(1) << 10;
      break;
    case 'M':
      scale = int64_t(1) << 20;
      break;
    case 'G':
      scale = int64_t(1) << 30;
      break;
    default:
      break;
    }
    if (scale != 1)
      text = text.drop_back();
  }
  uint64_t value;
  if (text.empty() || text.getAsInteger(10, value) ||
      value > uint64_t(INT64_MAX) / uint64_t(scale))
    return std::nullopt;
  return int64_t(value) * scale;
}

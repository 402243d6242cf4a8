//===- JsonReader.cpp - nesting check and exception-free validation -------===//
//
// nlohmann/json reports parse errors by throwing, which aborts in this
// -fno-exceptions build. Its SAX interface instead hands the error to a
// callback, so the text is validated here by a SAX handler that keeps the
// explanation and the position of the first error and builds nothing: the
// document itself is read by JsonDocument, which also records positions.
//
//===----------------------------------------------------------------------===//

#include "JsonText.h"

#include "shardc/Support/NestingDepth.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"

#include <nlohmann/json.hpp>

using namespace shardc::jsonimport;
using llvm::StringRef;

std::optional<TextError> shardc::jsonimport::checkNesting(StringRef text,
                                                          unsigned maxDepth) {
  std::optional<size_t> at =
      findExcessNesting(text, maxDepth, NestingSyntax::Json);
  if (!at)
    return std::nullopt;
  return TextError{*at, "lists and objects nest deeper than " +
                            std::to_string(maxDepth) + " levels"};
}

std::string shardc::jsonimport::printable(StringRef text) {
  std::string out;
  out.reserve(text.size());
  const auto *p = reinterpret_cast<const llvm::UTF8 *>(text.begin());
  const auto *end = reinterpret_cast<const llvm::UTF8 *>(text.end());
  while (p < end) {
    unsigned char c = *p;
    // Valid UTF-8 (names like "größe") stays readable; control characters
    // and the stray bytes of a binary file do not reach the terminal.
    unsigned n = c < 0x80 ? 1 : llvm::getNumBytesForUTF8(c);
    if (c >= 0x80 && p + n <= end && llvm::isLegalUTF8Sequence(p, p + n)) {
      out.append(reinterpret_cast<const char *>(p), n);
      p += n;
      continue;
    }
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(llvm::hexdigit(c >> 4, /*LowerCase=*/true));
      out.push_back(llvm::hexdigit(c & 15, /*LowerCase=*/true));
    }
    ++p;
  }
  return out;
}

namespace {
using Json = nlohmann::json;

/// Accepts every event: nlohmann's parser does the checking.
class Validator final : public nlohmann::json_sax<Json> {
public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t &) override { return true; }
  bool string(string_t &) override { return true; }
  // Only produced by binary formats (CBOR, ...), never by JSON text.
  bool binary(binary_t &) override { return false; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t &) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }

  bool parse_error(std::size_t position, const std::string &,
                   const nlohmann::detail::exception &ex) override {
    error = TextError{position > 0 ? position - 1 : 0, explain(ex.what())};
    return false;
  }

  std::optional<TextError> error;

private:
  /// nlohmann's text is "[json.exception.parse_error.101] parse error at
  /// line 1, column 4: syntax error ..." or "[json.exception.out_of_range.406]
  /// number overflow ..."; the position is reported through the
  /// diagnostic's location, so keep only the explanation.
  static std::string explain(StringRef what) {
    if (what.starts_with("[")) {
      size_t end = what.find("] ");
      if (end != StringRef::npos)
        what = what.drop_front(end + 2);
    }
    if (what.starts_with("parse error")) {
      size_t colon = what.find(": ", what.find("column "));
      if (colon != StringRef::npos)
        what = what.drop_front(colon + 2);
    }
    return printable(what);
  }
};
} // namespace

std::optional<TextError> shardc::jsonimport::validateJson(StringRef text) {
  Validator validator;
  bool ok = Json::sax_parse(text.begin(), text.end(), &validator,
                            Json::input_format_t::json, /*strict=*/true,
                            /*ignore_comments=*/false);
  if (ok && !validator.error)
    return std::nullopt;
  if (validator.error) {
    validator.error->offset = std::min(validator.error->offset, text.size());
    return validator.error;
  }
  return TextError{0, "the document could not be parsed"};
}

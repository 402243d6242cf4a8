//===- JsonReader.cpp - nesting check and exception-free parsing ----------===//
//
// nlohmann/json reports parse errors by throwing, which aborts in this
// -fno-exceptions build. Its SAX interface instead hands the error to a
// callback, so the document is built here by a small SAX handler that also
// keeps the explanation and the position of the first error.
//
//===----------------------------------------------------------------------===//

#include "JsonText.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"

using namespace shardc::jsonimport;
using llvm::StringRef;

std::optional<TextError> shardc::jsonimport::checkNesting(StringRef text,
                                                          unsigned maxDepth) {
  unsigned depth = 0;
  bool inString = false;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i; // the escaped character cannot end the string
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > maxDepth)
        return TextError{i, "lists and objects nest deeper than " +
                                std::to_string(maxDepth) + " levels"};
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
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
/// Builds the document from SAX events. Containers are only appended to
/// while they are open, so the pointers on the stack stay valid: a vector
/// reallocation moves the *children* of an open list, and those are closed.
class DomBuilder final : public nlohmann::json_sax<Json> {
public:
  explicit DomBuilder(Json &root) : root(root) {}

  bool null() override { return place(Json(nullptr)); }
  bool boolean(bool v) override { return place(Json(v)); }
  bool number_integer(number_integer_t v) override { return place(Json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return place(Json(v)); }
  bool number_float(number_float_t v, const string_t &) override {
    return place(Json(v));
  }
  bool string(string_t &v) override { return place(Json(std::move(v))); }
  // Only produced by binary formats (CBOR, ...), never by JSON text.
  bool binary(binary_t &) override { return false; }

  bool start_object(std::size_t) override {
    Json *slot = place(Json::object());
    if (slot)
      stack.push_back(slot);
    return slot != nullptr;
  }
  bool key(string_t &k) override {
    pendingKey = std::move(k);
    return true;
  }
  bool end_object() override { return pop(); }
  bool start_array(std::size_t) override {
    Json *slot = place(Json::array());
    if (slot)
      stack.push_back(slot);
    return slot != nullptr;
  }
  bool end_array() override { return pop(); }

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

  Json *place(Json value) {
    if (stack.empty()) {
      root = std::move(value);
      return &root;
    }
    Json &parent = *stack.back();
    if (auto *list = parent.get_ptr<Json::array_t *>()) {
      list->push_back(std::move(value));
      return &list->back();
    }
    if (auto *object = parent.get_ptr<Json::object_t *>()) {
      Json &slot = (*object)[pendingKey];
      slot = std::move(value);
      return &slot;
    }
    return nullptr;
  }

  bool pop() {
    if (stack.empty())
      return false;
    stack.pop_back();
    return true;
  }

  Json &root;
  std::vector<Json *> stack;
  std::string pendingKey;
};
} // namespace

std::optional<TextError> shardc::jsonimport::parseJson(StringRef text,
                                                       Json &out) {
  DomBuilder builder(out);
  bool ok = Json::sax_parse(text.begin(), text.end(), &builder,
                            Json::input_format_t::json, /*strict=*/true,
                            /*ignore_comments=*/false);
  if (ok && !builder.error)
    return std::nullopt;
  if (builder.error) {
    builder.error->offset = std::min(builder.error->offset, text.size());
    return builder.error;
  }
  return TextError{0, "the document could not be parsed"};
}

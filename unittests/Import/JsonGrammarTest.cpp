//===- JsonGrammarTest.cpp - the reader's grammar check vs nlohmann -------===//
//
// The importer lets nlohmann/json look at a text only when its own reader
// finds the text off the JSON grammar. That is right only if the reader
// never calls well formed what nlohmann rejects, since nlohmann's message
// would then be lost; these tests hold the two side by side on hand-picked
// edge cases and on many thousands of mutated documents.
//
//===----------------------------------------------------------------------===//

#include "JsonText.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

using namespace shardc::jsonimport;

namespace {

/// Reads `text` and returns whether the reader found it well formed; fails
/// the test if it did and nlohmann rejects it.
bool readerAccepts(const std::string &text) {
  JsonDocument doc;
  (void)doc.read(text);
  if (doc.wellFormed()) {
    std::optional<TextError> e = validateJson(text);
    EXPECT_FALSE(e.has_value()) << "the reader accepts what nlohmann rejects ("
                                << (e ? e->message : "") << "):\n"
                                << printable(text);
  }
  return doc.wellFormed();
}

const char *const kValid[] = {
    "{}",
    "[]",
    " \t\r\n[1, -0, 0.5, -1.5e-3, 2E+10, 1e5, 18446744073709551616]\n",
    "{\"a\": [true, false, null], \"b\": {\"c\": \"d\"}}",
    "\xEF\xBB\xBF{\"bom\": 1}",
    "\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\ud83d\\ude00 \\u0000\"",
    "[\"gr\xC3\xB6\xC3\x9F\x65\", \"\xE2\x82\xAC\", \"\xF0\x9F\x98\x80\"]",
    "{\"a\": 1, \"a\": 2}", // well formed; the repeated key is the reader's
                            // own error
};

const char *const kMalformed[] = {
    "",
    "   ",
    "{",
    "[",
    "[1,]",
    "{\"a\": 1,}",
    "[,1]",
    "{,}",
    "{\"a\" 1}",
    "{\"a\": }",
    "{a: 1}",
    "{1: 1}",
    "[1 2]",
    "[1] [2]",
    "[1]x",
    "[01]",
    "[-]",
    "[1.]",
    "[.5]",
    "[1e]",
    "[1e+]",
    "[+1]",
    "[0x10]",
    "[1e400]",
    "[-1e400]",
    "[tru]",
    "[truex]",
    "[True]",
    "[nul]",
    "[NaN]",
    "[Infinity]",
    "[\"unterminated]",
    "[\"a\\x\"]",
    "[\"\\u12\"]",
    "[\"\\u12G4\"]",
    "[\"\\ud800\"]",
    "[\"\\ud800\\u0041\"]",
    "[\"\\udc00\"]",
    "[\"tab\there\"]",
    "[\"nl\nhere\"]",
    "[\"\xC3\"]",
    "[\"\xC0\xAF\"]",
    "[\"\xED\xA0\x80\"]",
    "[\"\xF4\x90\x80\x80\"]",
    "[\"\xFF\"]",
    "[\"\x80\"]",
    "\xEF\xBB{}",
    "/* comment */ {}",
    "{} // comment",
    "{\"a\": [1, 2}",
    "{\"a\": [1, 2]]",
    "[\"a\" \"b\"]",
    "{\"a\": 1 \"b\": 2}",
    "[1,\n]",
    "'single'",
};

TEST(JsonGrammar, WellFormedTextsAreAccepted) {
  for (const char *text : kValid)
    EXPECT_TRUE(readerAccepts(text)) << printable(text);
  // Embedded NULs need an explicit length.
  EXPECT_TRUE(readerAccepts(std::string("[\"a\\u0000b\"]")));
}

TEST(JsonGrammar, MalformedTextsAreRejected) {
  for (const char *text : kMalformed) {
    EXPECT_FALSE(readerAccepts(text)) << printable(text);
    EXPECT_TRUE(validateJson(text).has_value()) << printable(text);
  }
  EXPECT_FALSE(readerAccepts(std::string("[1]\0", 4)));
  EXPECT_FALSE(readerAccepts(std::string("[\"a\0b\"]", 7)));
}

/// The reader is only checked never to be laxer than nlohmann; being
/// stricter would cost a second read, not a wrong message. Still, on these
/// mutations of a real graph both should agree, or the fast path is lost.
TEST(JsonGrammar, AgreesWithNlohmannOnMutations) {
  const std::string base =
      R"({"mesh": {"name": "mesh", "axes": [["x", 2], ["y", 4]]},
 "inputs": [{"name": "x\u00e9", "shape": [16, 64], "dtype": "f32", "sharding": [null, "x"]}],
 "ops": [{"op": "constant", "output": "c", "shape": [2], "values": [1.5e-3, -2, "inf"]},
         {"op": "matmul", "inputs": ["x\u00e9", "c"], "output": "h\ud83d\ude00", "partial": []}],
 "outputs": [{"name": "h", "sharding": [true, false]}]})";
  ASSERT_TRUE(readerAccepts(base));
  std::mt19937 rng(2024);
  // Bytes that change the structure, the literals, the numbers and the
  // strings (escapes, control characters, UTF-8 lead and continuation bytes).
  static const char kBytes[] = "[]{}\",:0123456789.eE+- \t\n\\/ubfnrtu"
                               "aelsx\x00\x01\x1f\x7f\x80\xbf\xc3\xed\xf4\xff";
  const std::string interesting(kBytes, sizeof(kBytes) - 1);
  int agreed = 0, total = 0;
  for (int iteration = 0; iteration < 20000; ++iteration) {
    std::string text = base;
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      size_t at = rng() % text.size();
      switch (rng() % 3) {
      case 0:
        text[at] = interesting[rng() % interesting.size()];
        break;
      case 1:
        text.erase(at, 1 + rng() % 4);
        break;
      default:
        text.insert(at, 1, interesting[rng() % interesting.size()]);
        break;
      }
    }
    bool reader = readerAccepts(text);
    bool nlohmann = !validateJson(text).has_value();
    agreed += reader == nlohmann;
    ++total;
  }
  // Every disagreement is the reader being stricter (checked above); there
  // should be none.
  EXPECT_EQ(agreed, total);
}

TEST(JsonGrammar, EveryTruncation) {
  const std::string base =
      R"({"a": [1, -2.5e3, true, false, null, "s\n\u00e9"], "b": {}})";
  for (size_t n = 0; n <= base.size(); ++n) {
    std::string text = base.substr(0, n);
    bool reader = readerAccepts(text);
    EXPECT_EQ(reader, !validateJson(text).has_value()) << text;
  }
}

} // namespace

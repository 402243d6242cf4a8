//===- NestingDepthTest.cpp - the nesting bound checked before parsing ----===//

#include "shardc/Support/NestingDepth.h"

#include "gtest/gtest.h"

#include <string>

using namespace shardc;

namespace {

std::optional<size_t> mlir(const std::string &text, unsigned maxDepth) {
  return findExcessNesting(text, maxDepth, NestingSyntax::Mlir);
}
std::optional<size_t> json(const std::string &text, unsigned maxDepth) {
  return findExcessNesting(text, maxDepth, NestingSyntax::Json);
}

TEST(NestingDepthTest, PointsAtTheFirstBracketTooDeep) {
  EXPECT_EQ(mlir("[[]]", 2), std::nullopt);
  EXPECT_EQ(mlir("[[[]]]", 2), 2u);
  // Siblings do not add up; only the open brackets count.
  EXPECT_EQ(mlir("x = [[], [], []]", 2), std::nullopt);
  EXPECT_EQ(mlir("x = [[], [[]]]", 2), 10u);
  EXPECT_EQ(mlir("{ ( < [ ] > ) }", 3), 6u);
  EXPECT_EQ(mlir(std::string(20000, '{'), 256), 256u);
}

TEST(NestingDepthTest, MlirStringsAndCommentsDoNotCount) {
  EXPECT_EQ(mlir("\"[[[[\" []", 1), std::nullopt);
  EXPECT_EQ(mlir("\"a \\\" [[[[\" []", 1), std::nullopt);
  EXPECT_EQ(mlir("// [[[[\n[]", 1), std::nullopt);
  EXPECT_EQ(mlir("// [[[[", 1), std::nullopt);
  // `/` alone is no comment.
  EXPECT_EQ(mlir("/ [[", 1), 3u);
  // An unterminated string runs to the end.
  EXPECT_EQ(mlir("\"[[[[", 1), std::nullopt);
}

TEST(NestingDepthTest, MlirArrowsCloseNothing) {
  // `(a) -> (b)` inside `<...>` keeps the angle bracket open...
  EXPECT_EQ(mlir("#m<(d0) -> (d0)>", 2), std::nullopt);
  EXPECT_EQ(mlir("<(d0) -> <<", 2), 10u);
  // ...and a `>` that closes no `<` (a `>=` in an integer set) is ignored.
  EXPECT_EQ(mlir("#s<(d0) : (d0 >= 0)>", 2), std::nullopt);
  EXPECT_EQ(mlir("[> [> [", 2), 6u);
}

TEST(NestingDepthTest, JsonCountsListsAndObjectsOnly) {
  EXPECT_EQ(json("{\"a\": [1, 2]}", 2), std::nullopt);
  EXPECT_EQ(json("{\"a\": [[1]]}", 2), 7u);
  EXPECT_EQ(json("[\"(((\", \"<<<\"]", 1), std::nullopt);
  // No comments in JSON: `//` inside a string is text, outside it is not
  // special either.
  EXPECT_EQ(json("[\"//\", [", 1), 7u);
}

} // namespace

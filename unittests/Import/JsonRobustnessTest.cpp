//===- JsonRobustnessTest.cpp - no input makes the importer crash ---------===//
//
// The importer runs on untrusted files in a build where exceptions abort and
// assertions are compiled out, so every input must end in a module or in a
// located diagnostic. These tests throw truncations, mutations and the
// repository's corpus of bad inputs at it.
//
//===----------------------------------------------------------------------===//

#include "JsonTestUtils.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <random>

using namespace mlir;
using namespace shardc::test;

namespace {

const std::string kGraph = graph(
    R"({"name": "x", "shape": [16, 64], "sharding": ["y", "x"]},
       {"name": "w", "shape": [64, 128], "dtype": "f32", "sharding": [null, ["y", "x"]], "partial": []})",
    R"({"op": "matmul", "inputs": ["x", "w"], "output": "h", "sharding": ["y", null], "partial": ["x"]},
       {"op": "reduce_sum", "inputs": ["h"], "output": "r", "dims": [1]},
       {"op": "constant", "output": "c", "shape": [2, 2], "values": [1, 2.5, "inf", -3e-2]},
       {"op": "sharding_constraint", "inputs": ["h"], "output": "k", "sharding": [null, "x"]},
       {"op": "all_to_all", "inputs": ["k"], "output": "t", "axes": ["y"], "split_dim": 0, "concat_dim": 1},
       {"op": "collective_permute", "inputs": ["t"], "output": "p", "axes": ["x"], "pairs": [[0, 1]]})",
    R"({"name": "r", "sharding": ["y"]}, {"name": "c"}, {"name": "p"})");

/// Imports `text` and checks the outcome is a module or a located error.
void expectCleanOutcome(MLIRContext &ctx, llvm::StringRef text) {
  Imported imported = importJson(ctx, text);
  if (imported.module)
    return;
  ASSERT_FALSE(imported.diags.empty()) << "silent failure on:\n" << text.str();
  EXPECT_EQ(imported.diags[0].file, "graph.json") << imported.text() << "on:\n"
                                                  << text.str();
  EXPECT_NE(imported.diags[0].line, 0u) << imported.text();
}

TEST(JsonRobustness, TheBaseGraphImports) {
  auto ctx = makeContext();
  Imported imported = importJson(*ctx, kGraph);
  EXPECT_TRUE(imported.module) << imported.text();
}

TEST(JsonRobustness, EveryTruncation) {
  auto ctx = makeContext();
  for (size_t n = 0; n < kGraph.size(); ++n)
    expectCleanOutcome(*ctx, llvm::StringRef(kGraph).take_front(n));
}

TEST(JsonRobustness, RandomMutations) {
  auto ctx = makeContext();
  std::mt19937 rng(1234);
  // Bytes that change the structure, the types and the numbers.
  const std::string interesting = "[]{}\",:0-9.eE \\\x00\xff"
                                  "nultrf";
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::string text = kGraph;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % text.size();
      switch (rng() % 3) {
      case 0:
        text[at] = interesting[rng() % interesting.size()];
        break;
      case 1:
        text.erase(at, 1 + rng() % 8);
        break;
      default:
        text.insert(at, 1, interesting[rng() % interesting.size()]);
        break;
      }
      if (text.empty())
        text = "{";
    }
    expectCleanOutcome(*ctx, text);
  }
}

TEST(JsonRobustness, TypeConfusionInEveryField) {
  // Replace every scalar and list value of the graph with a value of every
  // other JSON type.
  auto ctx = makeContext();
  const char *const replacements[] = {
      "null", "true", "-1",   "1.5",   "\"s\"",
      "[]",   "{}",   "[[]]", "1e400", "18446744073709551616"};
  for (size_t at = 0; at < kGraph.size(); ++at) {
    if (kGraph[at] != ':' && kGraph[at] != '[' && kGraph[at] != ',')
      continue;
    size_t start = kGraph.find_first_not_of(" \n", at + 1);
    size_t end = kGraph.find_first_of(",]}", start);
    if (start == std::string::npos || end == std::string::npos)
      continue;
    for (const char *r : replacements) {
      std::string text = kGraph;
      text.replace(start, end - start, r);
      expectCleanOutcome(*ctx, text);
    }
  }
}

TEST(JsonRobustness, PathologicalInputs) {
  auto ctx = makeContext();
  expectCleanOutcome(*ctx, std::string(100000, '['));
  expectCleanOutcome(*ctx, std::string(100000, '"'));
  expectCleanOutcome(*ctx, "{\"mesh\": " + std::string(63, '[') +
                               std::string(63, ']') + "}");
  expectCleanOutcome(*ctx, std::string("{\"\\ud800\": 1}"));
  expectCleanOutcome(*ctx, std::string("{\"a\\u0000b\": 1}"));
  std::string garbage;
  std::mt19937 rng(7);
  for (int i = 0; i < 4096; ++i)
    garbage.push_back(static_cast<char>(rng()));
  expectCleanOutcome(*ctx, garbage);
  // A very large constant is fine.
  std::string values = "0";
  for (int i = 1; i < 100000; ++i)
    values += ",1";
  expectCleanOutcome(*ctx, graph("",
                                 R"({"op": "constant", "output": "c",
      "shape": [100000], "values": [)" +
                                     values + "]}",
                                 R"({"name": "c"})"));
}

/// The corpus under test/bad-inputs, if present: every JSON file must be
/// rejected with a located error.
TEST(JsonRobustness, BadInputsCorpus) {
  llvm::SmallString<256> dir(SHARDC_BAD_INPUTS_DIR);
  std::error_code ec;
  int seen = 0;
  auto ctx = makeContext();
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (llvm::sys::path::extension(it->path()) != ".json")
      continue;
    auto buffer = llvm::MemoryBuffer::getFile(it->path());
    ASSERT_TRUE(bool(buffer)) << it->path();
    std::string name = llvm::sys::path::filename(it->path()).str();
    Imported imported = importJson(*ctx, (*buffer)->getBuffer(), name);
    EXPECT_FALSE(imported.module) << name << " was accepted";
    ASSERT_FALSE(imported.diags.empty()) << name;
    EXPECT_EQ(imported.diags[0].file, name) << imported.text();
    EXPECT_NE(imported.diags[0].line, 0u) << imported.text();
    ++seen;
  }
  if (seen == 0)
    GTEST_SKIP() << "no corpus at " << dir.str().str();
}

} // namespace

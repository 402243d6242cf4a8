//===- RandomTensorTest.cpp - deterministic random inputs -----------------===//

#include "shardc/Support/RandomTensor.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace shardc;

namespace {

TEST(RandomTensorTest, BuildingBlocksMatchTheirReferences) {
  // FNV-1a 64 test vectors.
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ULL);
  // SplitMix64 seeded with 0: its first outputs are well known.
  EXPECT_EQ(splitmix64Mix(0x9e3779b97f4a7c15ULL), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(splitmix64Mix(2 * 0x9e3779b97f4a7c15ULL), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(bitsToUniformFloat(0), -1.0f);
  EXPECT_EQ(bitsToUniformFloat(~0ULL), 1.0f - 1.0f / (1 << 23));
  EXPECT_EQ(bitsToUniformFloat(uint64_t(1) << 63), 0.0f);
}

TEST(RandomTensorTest, FirstValueFollowsTheDocumentedFormula) {
  // seed ^ fnv1a64(name) == 0 starts SplitMix64 at state 0.
  Tensor t = randomTensor({2}, fnv1a64("x"), "x");
  EXPECT_EQ(t.at({0}), bitsToUniformFloat(0xe220a8397b1dcdafULL));
  EXPECT_EQ(t.at({1}), bitsToUniformFloat(0x6e789e6aa1b965f4ULL));
}

TEST(RandomTensorTest, DeterministicAndNameSensitive) {
  Tensor a = randomTensor({8, 16}, 42, "w0");
  Tensor b = randomTensor({8, 16}, 42, "w0");
  Tensor c = randomTensor({8, 16}, 42, "w1");
  Tensor d = randomTensor({8, 16}, 43, "w0");
  EXPECT_EQ(a.values(), b.values());
  EXPECT_NE(a.values(), c.values());
  EXPECT_NE(a.values(), d.values());
  // The values depend on the element's row-major position only, not on
  // the shape.
  Tensor flat = randomTensor({128}, 42, "w0");
  EXPECT_EQ(flat.values(), a.values());
}

TEST(RandomTensorTest, UniformInRange) {
  Tensor t = randomTensor({100000}, 7, "x");
  double sum = 0, sumSq = 0;
  for (float v : t.values()) {
    ASSERT_GE(v, -1.0f);
    ASSERT_LT(v, 1.0f);
    sum += v;
    sumSq += double(v) * v;
  }
  EXPECT_NEAR(sum / t.numElements(), 0.0, 0.01);
  EXPECT_NEAR(sumSq / t.numElements(), 1.0 / 3.0, 0.01); // Var U(-1, 1)
}

TEST(RandomTensorTest, TryRefusesBadShapes) {
  llvm::Expected<Tensor> t = tryRandomTensor({1 << 20, 1 << 20}, 0, "big",
                                             /*maxBytes=*/1 << 20);
  ASSERT_FALSE(t);
  EXPECT_NE(llvm::toString(t.takeError()).find("[1048576, 1048576]"),
            std::string::npos);
  llvm::Expected<Tensor> n = tryRandomTensor({-3}, 0, "neg");
  ASSERT_FALSE(n);
  llvm::consumeError(n.takeError());
}

/// The documented formula, run by Python's arbitrary precision integers: the
/// values must be bit-identical.
TEST(RandomTensorTest, MatchesAPythonTranscriptionOfTheHeader) {
  const char *script =
      "import struct, sys\n"
      "M = 2**64 - 1\n"
      "seed, name, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])\n"
      "h = 0xcbf29ce484222325\n"
      "for b in name.encode():\n"
      "  h = ((h ^ b) * 0x100000001b3) & M\n"
      "s = seed ^ h\n"
      "out = []\n"
      "for i in range(n):\n"
      "  z = (s + (i + 1) * 0x9e3779b97f4a7c15) & M\n"
      "  z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M\n"
      "  z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M\n"
      "  z = z ^ (z >> 31)\n"
      "  v = ((z >> 40) - 2**23) * 2.0**-23\n"
      "  out.append(struct.unpack('<I', struct.pack('<f', v))[0])\n"
      "print(' '.join(map(str, out)))\n";
  if (std::system("python3 -c pass >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "no python3";
  char scriptPath[] = "/tmp/shardc-random-XXXXXX";
  int fd = mkstemp(scriptPath);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(scriptPath) << script;
  std::string cmd =
      std::string("python3 ") + scriptPath + " 12345678901234 layer0.w 64";
  FILE *pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string text;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof(buf), pipe))
    text.append(buf, n);
  ASSERT_EQ(pclose(pipe), 0);
  std::remove(scriptPath);

  Tensor t = randomTensor({64}, 12345678901234ULL, "layer0.w");
  std::istringstream in(text);
  for (float v : t.values()) {
    uint32_t expected = 0, bits;
    ASSERT_TRUE(static_cast<bool>(in >> expected));
    std::memcpy(&bits, &v, 4);
    EXPECT_EQ(bits, expected);
  }
}

} // namespace

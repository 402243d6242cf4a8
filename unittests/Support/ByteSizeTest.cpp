//===- ByteSizeTest.cpp - byte counts as users write them -----------------===//

#include "shardc/Support/ByteSize.h"

#include "gtest/gtest.h"

using namespace shardc;

namespace {

TEST(ByteSizeTest, SuffixesArePowersOf1024) {
  EXPECT_EQ(parseByteSize("4096"), 4096);
  EXPECT_EQ(parseByteSize("8K"), 8 << 10);
  EXPECT_EQ(parseByteSize("64m"), int64_t(64) << 20);
  EXPECT_EQ(parseByteSize(" 2G "), int64_t(2) << 30);
}

TEST(ByteSizeTest, RefusesWhatIsNoByteCount) {
  for (const char *bad : {"", "M", "-1", "1.5G", "12T", "G8", "9223372036854775807K"})
    EXPECT_FALSE(parseByteSize(bad).has_value()) << bad;
  EXPECT_EQ(parseByteSize("9223372036854775807"), INT64_MAX);
}

} // namespace

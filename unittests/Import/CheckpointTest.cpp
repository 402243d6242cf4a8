//===- CheckpointTest.cpp - .npz and .safetensors, written and read -------===//

#include "shardc/Export/CheckpointWriter.h"
#include "shardc/Import/Checkpoint.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <random>

using namespace shardc;

namespace {

std::map<std::string, Tensor> example() {
  std::map<std::string, Tensor> t;
  t["blocks.0.fc.weight"] =
      llvm::cantFail(Tensor::fromValues({2, 3}, {1, -2, 3.5f, 0, 1e-30f, 7}));
  t["bias"] = llvm::cantFail(Tensor::fromValues({4}, {0.25f, 0.5f, 1, 2}));
  t["scalar"] = Tensor::scalar(-3);
  return t;
}

std::string tempPath(llvm::StringRef ext) {
  llvm::SmallString<128> path;
  int fd;
  EXPECT_FALSE(llvm::sys::fs::createTemporaryFile("checkpoint", ext.drop_front(),
                                                  fd, path));
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  return path.str().str();
}

void writeBytes(const std::string &path, llvm::StringRef bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  ASSERT_FALSE(ec);
  os << bytes;
}

class CheckpointFormat : public ::testing::TestWithParam<const char *> {};

} // namespace

TEST_P(CheckpointFormat, WrittenTensorsReadBackEqual) {
  std::string path = tempPath(GetParam());
  ASSERT_FALSE(bool(writeCheckpoint(path, example())));
  auto read = readCheckpoint(path);
  ASSERT_TRUE(bool(read)) << llvm::toString(read.takeError());
  std::map<std::string, Tensor> want = example();
  ASSERT_EQ(read->size(), want.size());
  for (auto &[name, t] : want) {
    ASSERT_TRUE(read->count(name)) << name;
    EXPECT_EQ(read->at(name).getShape(), t.getShape()) << name;
    EXPECT_EQ(read->at(name).values(), t.values()) << name;
  }
  llvm::sys::fs::remove(path);
}

TEST_P(CheckpointFormat, DamagedFilesAreErrorsNotCrashes) {
  std::string good = tempPath(GetParam()), bad = tempPath(GetParam());
  ASSERT_FALSE(bool(writeCheckpoint(good, example())));
  std::string bytes = (*llvm::MemoryBuffer::getFile(good))->getBuffer().str();
  // Every prefix, and random bytes overwritten (lengths, offsets, headers):
  // a result or an error naming the file, never a crash (the sanitizer
  // build runs this too).
  for (size_t n = 0; n < bytes.size(); ++n) {
    writeBytes(bad, llvm::StringRef(bytes).take_front(n));
    auto read = readCheckpoint(bad);
    EXPECT_FALSE(bool(read)) << "prefix " << n;
    if (!read)
      EXPECT_NE(llvm::toString(read.takeError()).find(bad), std::string::npos);
  }
  std::mt19937 rng(0);
  for (int trial = 0; trial < 500; ++trial) {
    std::string damaged = bytes;
    for (int k = 0; k < 2; ++k)
      damaged[rng() % damaged.size()] = static_cast<char>(rng());
    writeBytes(bad, damaged);
    if (auto read = readCheckpoint(bad); !read)
      llvm::consumeError(read.takeError());
  }
  llvm::sys::fs::remove(good);
  llvm::sys::fs::remove(bad);
}

INSTANTIATE_TEST_SUITE_P(Formats, CheckpointFormat,
                         ::testing::Values(".npz", ".safetensors"));

//===- MeshTopologyTest.cpp - device ids, coordinates and groups ----------===//

#include "shardc/Support/MeshTopology.h"

#include "gtest/gtest.h"

#include <set>

using namespace shardc;
using llvm::SmallVector;
using llvm::StringRef;

namespace {

MeshTopology mesh(llvm::ArrayRef<StringRef> names,
                  llvm::ArrayRef<int64_t> sizes) {
  return llvm::cantFail(MeshTopology::create(names, sizes));
}

std::string createError(llvm::ArrayRef<StringRef> names,
                        llvm::ArrayRef<int64_t> sizes) {
  llvm::Expected<MeshTopology> m = MeshTopology::create(names, sizes);
  return m ? "" : llvm::toString(m.takeError());
}

TEST(MeshTopologyTest, RejectsInvalidMeshes) {
  EXPECT_NE(createError({}, {}).find("at least one axis"), std::string::npos);
  EXPECT_NE(createError({"x", "x"}, {2, 2}).find("twice"), std::string::npos);
  EXPECT_NE(createError({""}, {2}).find("non-empty"), std::string::npos);
  EXPECT_NE(createError({"x"}, {0}).find("size 0"), std::string::npos);
  EXPECT_NE(createError({"x", "y"}, {2}).find("one size"), std::string::npos);
  EXPECT_NE(
      createError({"a", "b", "c"}, {1 << 10, 1 << 10, 2}).find("more than"),
      std::string::npos);
  EXPECT_NE(createError({"a", "b"}, {INT64_MAX, INT64_MAX}).find("more than"),
            std::string::npos);
}

TEST(MeshTopologyTest, RowMajorDeviceIds) {
  MeshTopology m = mesh({"y", "x"}, {4, 2});
  EXPECT_EQ(m.numDevices(), 8);
  EXPECT_EQ(m.axisIndex("x"), 1);
  EXPECT_EQ(m.axisIndex("z"), -1);
  // Device (y, x) has id 2*y + x.
  EXPECT_EQ(m.coordinates(5), (SmallVector<int64_t>{2, 1}));
  EXPECT_EQ(m.deviceId({3, 0}), 6);
  for (int64_t d = 0; d < 8; ++d)
    EXPECT_EQ(m.deviceId(m.coordinates(d)), d);
  EXPECT_TRUE(m.coordinates(8).empty());
  EXPECT_TRUE(m.coordinates(-1).empty());
  EXPECT_EQ(m.deviceId({4, 0}), -1);
  EXPECT_EQ(m.deviceId({1}), -1);
}

TEST(MeshTopologyTest, GroupsFollowTheListedAxisOrder) {
  MeshTopology m = mesh({"y", "x"}, {4, 2});
  EXPECT_EQ(m.groupOf(5, {"x"}), (SmallVector<int64_t>{4, 5}));
  EXPECT_EQ(m.groupOf(5, {"y"}), (SmallVector<int64_t>{1, 3, 5, 7}));
  EXPECT_EQ(m.groupOf(5, {"y", "x"}),
            (SmallVector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  // "x" listed first is the major coordinate of the group index.
  EXPECT_EQ(m.groupOf(5, {"x", "y"}),
            (SmallVector<int64_t>{0, 2, 4, 6, 1, 3, 5, 7}));
  EXPECT_EQ(m.groupIndex(5, {"x"}), 1);
  EXPECT_EQ(m.groupIndex(5, {"y"}), 2);
  EXPECT_EQ(m.groupIndex(5, {"x", "y"}), 6);
  EXPECT_EQ(m.groupSize({"x", "y"}), 8);
}

TEST(MeshTopologyTest, GroupsPartitionTheMesh) {
  MeshTopology m = mesh({"a", "b", "c"}, {2, 3, 4});
  for (auto axes :
       {SmallVector<StringRef>{"b"}, SmallVector<StringRef>{"c", "a"},
        SmallVector<StringRef>{"a", "b", "c"}}) {
    std::set<SmallVector<int64_t>> groups;
    for (int64_t d = 0; d < m.numDevices(); ++d) {
      SmallVector<int64_t> group = m.groupOf(d, axes);
      ASSERT_EQ(static_cast<int64_t>(group.size()), m.groupSize(axes));
      // Every member sees the same group, at its own group index.
      EXPECT_EQ(group[m.groupIndex(d, axes)], d);
      for (int64_t other : group)
        EXPECT_EQ(m.groupOf(other, axes), group);
      groups.insert(group);
    }
    EXPECT_EQ(static_cast<int64_t>(groups.size()),
              m.numDevices() / m.groupSize(axes));
  }
}

TEST(MeshTopologyTest, InvalidAxesAreReported) {
  MeshTopology m = mesh({"y", "x"}, {4, 2});
  EXPECT_FALSE(m.checkAxes({"x"}));
  auto message = [&](llvm::ArrayRef<StringRef> axes) {
    return llvm::toString(m.checkAxes(axes));
  };
  EXPECT_NE(message({"z"}).find("unknown mesh axis \"z\""), std::string::npos);
  EXPECT_NE(message({"x", "x"}).find("twice"), std::string::npos);
  EXPECT_NE(message({}).find("at least one"), std::string::npos);
  EXPECT_TRUE(m.groupOf(0, {"z"}).empty());
  EXPECT_TRUE(m.groupOf(0, {"x", "x"}).empty());
  EXPECT_TRUE(m.groupOf(9, {"x"}).empty());
  EXPECT_EQ(m.groupIndex(0, {"z"}), -1);
  EXPECT_EQ(m.groupSize({"z"}), -1);
}

} // namespace

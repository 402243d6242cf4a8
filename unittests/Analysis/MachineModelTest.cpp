//===- MachineModelTest.cpp - nodes, links and the machine file -----------===//
//
// Device ids fill nodes row-major, so a group over the minor mesh axes stays
// in a node and one over the major axes crosses nodes; a collective is
// priced on the links its group spans (docs/machines.md).
//
//===----------------------------------------------------------------------===//

#include "shardc/Analysis/CostModel.h"

#include "gtest/gtest.h"

using namespace shardc;

namespace {

/// 8 devices per node; NVLink-like inside, InfiniBand-like between.
MachineModel twoLinkMachine() {
  MachineModel m;
  m.devicesPerNode = 8;
  m.linkLatencySeconds = 1e-6;
  m.linkBytesPerSecond = 300e9;
  m.interNode = {5e-6, 25e9};
  return m;
}

TEST(MachineModelTest, MinorAxesShareANode) {
  MachineModel m = twoLinkMachine();
  // Mesh [data=16, model=8]: "model" is inside a node, "data" crosses 16.
  int64_t sizes[] = {16, 8};
  GroupSpan model = m.groupSpan(sizes, {1});
  EXPECT_EQ(model.inner, 8);
  EXPECT_EQ(model.outer, 1);
  GroupSpan data = m.groupSpan(sizes, {0});
  EXPECT_EQ(data.inner, 1);
  EXPECT_EQ(data.outer, 16);
  GroupSpan both = m.groupSpan(sizes, {0, 1});
  EXPECT_EQ(both.inner, 8);
  EXPECT_EQ(both.outer, 16);
  // Mesh [data=4, model=2]: a data group of 4 with stride 2 fits in one
  // node of 8.
  int64_t small[] = {4, 2};
  EXPECT_EQ(m.groupSpan(small, {0}).outer, 1);
  EXPECT_EQ(m.groupSpan(small, {0}).inner, 4);
}

TEST(MachineModelTest, OneNodeWithoutDevicesPerNode) {
  MachineModel m; // the alpha-beta preset
  int64_t sizes[] = {16, 8};
  GroupSpan span = m.groupSpan(sizes, {0, 1});
  EXPECT_EQ(span.inner, 128);
  EXPECT_EQ(span.outer, 1);
  // And the old entry point prices the same.
  EXPECT_DOUBLE_EQ(
      m.collectiveSeconds(CollectiveKind::AllReduce, span, 1 << 20),
      m.collectiveSeconds(CollectiveKind::AllReduce, 128, 1 << 20));
}

TEST(MachineModelTest, CrossNodeGroupsUseTheSlowLink) {
  MachineModel m = twoLinkMachine();
  double bytes = 1 << 26;
  double inside =
      m.collectiveSeconds(CollectiveKind::AllReduce, GroupSpan{8, 1}, bytes);
  double across =
      m.collectiveSeconds(CollectiveKind::AllReduce, GroupSpan{1, 8}, bytes);
  EXPECT_DOUBLE_EQ(across,
                   MachineModel::collectiveSeconds(CollectiveKind::AllReduce, 8,
                                                   bytes, m.interNode));
  EXPECT_GT(across, 10 * inside);
}

TEST(MachineModelTest, SpanningBothIsHierarchical) {
  MachineModel m = twoLinkMachine();
  double L = 1 << 26;
  // Reduce-scatter in the node, all-reduce of the 1/8 slice between the
  // 4 nodes, all-gather in the node.
  double want = MachineModel::collectiveSeconds(CollectiveKind::ReduceScatter,
                                                8, L, m.intraNode()) +
                MachineModel::collectiveSeconds(CollectiveKind::AllReduce, 4,
                                                L / 8, m.interNode) +
                MachineModel::collectiveSeconds(CollectiveKind::AllGather, 8,
                                                L / 8, m.intraNode());
  EXPECT_DOUBLE_EQ(
      m.collectiveSeconds(CollectiveKind::AllReduce, GroupSpan{8, 4}, L), want);
  // Cheaper than a flat ring over the slow link.
  EXPECT_LT(want, MachineModel::collectiveSeconds(CollectiveKind::AllReduce, 32,
                                                  L, m.interNode));
}

TEST(MachineModelTest, GemmEfficiencyInterpolatesInLogFlops) {
  MachineModel m;
  m.gemmEfficiency = {{1e9, 0.2}, {1e11, 0.6}};
  EXPECT_DOUBLE_EQ(m.gemmEfficiencyAt(1e6), 0.2);
  EXPECT_NEAR(m.gemmEfficiencyAt(1e10), 0.4, 1e-12);
  EXPECT_DOUBLE_EQ(m.gemmEfficiencyAt(1e13), 0.6);
  m.peakFlops[int(ComputeType::BF16)] = 1e12;
  EXPECT_NEAR(m.gemmSeconds(1e10, ComputeType::BF16), 1e10 / (1e12 * 0.4),
              1e-15);
}

TEST(MachineModelTest, ParsesAFile) {
  llvm::Expected<MachineModel> m = parseMachineModel(
      R"({"name": "x", "devices_per_node": 4,
          "device": {"memory_bytes": 1000, "memory_bytes_per_s": 2e12,
                     "peak_flops_per_s": {"bf16": 300e12, "f32": 20e12},
                     "gemm_efficiency": [[1e9, 0.5], [1e12, 0.8]],
                     "memory_efficiency": 0.9},
          "intra_node_link": {"latency_s": 1e-6, "bytes_per_s": 3e11},
          "inter_node_link": {"latency_s": 5e-6, "bytes_per_s": 2.5e10}})",
      "test");
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  EXPECT_EQ(m->name, "x");
  EXPECT_EQ(m->devicesPerNode, 4);
  EXPECT_EQ(m->memoryBytes, 1000);
  EXPECT_DOUBLE_EQ(m->peakFlops[int(ComputeType::BF16)], 300e12);
  // f16 and tf32 default to the f32 peak when not given.
  EXPECT_DOUBLE_EQ(m->peakFlops[int(ComputeType::F16)], 20e12);
  EXPECT_DOUBLE_EQ(m->flopsPerSecond, 20e12 * 0.8);
  EXPECT_DOUBLE_EQ(m->interNode.bytesPerSecond, 2.5e10);
}

TEST(MachineModelTest, ParsesOverheadsAndSharedCores) {
  llvm::Expected<MachineModel> m = parseMachineModel(
      R"({"host_cores": 2,
          "device": {"peak_flops_per_s": {"f32": 1e11},
                     "op_overhead_s": 2e-6, "fuses_elementwise": false},
          "intra_node_link": {"latency_s": 5e-6, "bytes_per_s": 1e10,
                              "sync_s": 3e-5}})",
      "test");
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  EXPECT_EQ(m->hostCores, 2);
  EXPECT_DOUBLE_EQ(m->opOverheadSeconds, 2e-6);
  EXPECT_FALSE(m->fusesElementwise);
  EXPECT_DOUBLE_EQ(m->timeSharing(2), 1);
  EXPECT_DOUBLE_EQ(m->timeSharing(4), 2);
  EXPECT_DOUBLE_EQ(m->timeSharedWaitSeconds(4), 0); // not in the file
  // The rendezvous is paid once per collective call, on top of what its
  // algorithm sends; a group of one makes no call.
  MachineModel plain = *m;
  plain.linkSyncSeconds = 0;
  EXPECT_NEAR(m->collectiveSeconds(CollectiveKind::AllReduce, 2, 4096),
              plain.collectiveSeconds(CollectiveKind::AllReduce, 2, 4096) +
                  3e-5,
              1e-15);
  EXPECT_DOUBLE_EQ(m->collectiveSeconds(CollectiveKind::AllReduce, 1, 4096), 0);
  // Without them: the machine a fusing GPU compiler runs on, no overheads.
  MachineModel defaults;
  EXPECT_TRUE(defaults.fusesElementwise);
  EXPECT_DOUBLE_EQ(defaults.opOverheadSeconds, 0);
  EXPECT_DOUBLE_EQ(defaults.timeSharing(64), 1);
}

TEST(MachineModelTest, RejectsBadFiles) {
  auto error = [](llvm::StringRef text) {
    llvm::Expected<MachineModel> m = parseMachineModel(text, "m.json");
    if (m)
      return std::string("(accepted)");
    return llvm::toString(m.takeError());
  };
  const char *link =
      R"("intra_node_link": {"latency_s": 1e-6, "bytes_per_s": 1e9})";
  EXPECT_EQ(error("[]"), "m.json: a machine file is a JSON object");
  EXPECT_EQ(error(std::string("{") + link + "}"),
            "m.json: the machine needs \"device\"");
  EXPECT_EQ(
      error(
          std::string("{") + link +
          R"(, "device": {"peak_flops_per_s": {"f32": 1e9}, "memory_bandwith": 1}})"),
      "m.json: \"device\" has unknown field \"memory_bandwith\"");
  EXPECT_EQ(
      error(
          std::string("{") + link +
          R"(, "devices_per_node": 8, "device": {"peak_flops_per_s": {"f32": 1e9}}})"),
      "m.json: the machine needs \"inter_node_link\"");
  EXPECT_EQ(
      error(
          R"({"intra_node_link": {"latency_s": 0, "bytes_per_s": 1e9}, "device": {"peak_flops_per_s": {"f32": 1e9}}})"),
      "m.json: \"intra_node_link\" \"latency_s\" must be a positive number");
  EXPECT_EQ(
      error(
          std::string("{") + link +
          R"(, "device": {"peak_flops_per_s": {"f32": 1e9}, "fuses_elementwise": 1}})"),
      "m.json: \"device\" \"fuses_elementwise\" must be true or false");
  EXPECT_EQ(
      error(
          std::string("{") + link +
          R"(, "host_cores": 0, "device": {"peak_flops_per_s": {"f32": 1e9}}})"),
      "m.json: the machine \"host_cores\" must be a positive integer");
}

// The idle-core wall time per collective applies only where devices
// outnumber the host's cores, so it needs them said.
TEST(MachineModelTest, HostWaitOnlyWhereDevicesTimeShareTheCores) {
  llvm::Expected<MachineModel> m = parseMachineModel(
      R"({"host_cores": 2, "host_wait_s": 2e-5,
          "device": {"peak_flops_per_s": {"f32": 1e11}},
          "intra_node_link": {"latency_s": 5e-6, "bytes_per_s": 1e10}})",
      "test");
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  EXPECT_DOUBLE_EQ(m->timeSharedWaitSeconds(2), 0);
  EXPECT_DOUBLE_EQ(m->timeSharedWaitSeconds(4), 2e-5);
  llvm::Expected<MachineModel> bad = parseMachineModel(
      R"({"host_wait_s": 2e-5,
          "device": {"peak_flops_per_s": {"f32": 1e11}},
          "intra_node_link": {"latency_s": 5e-6, "bytes_per_s": 1e10}})",
      "m.json");
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "m.json: the machine \"host_wait_s\" needs \"host_cores\"");
}

} // namespace

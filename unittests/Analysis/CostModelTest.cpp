//===- CostModelTest.cpp - the machine picks a collective's algorithm -----===//
//
// Latency decides small blocks and bytes large ones, as in an MPI library:
// pricing every all-reduce as a ring made reducing a small partial value
// look dearer than gathering a large operand.
//
//===----------------------------------------------------------------------===//

#include "shardc/Analysis/CostModel.h"

#include "gtest/gtest.h"

using namespace shardc;

namespace {

TEST(CostModelTest, SmallAllReduceTakesRecursiveDoubling) {
  MachineModel machine;
  // Four devices, 4 bytes each: two rounds of 4 bytes.
  EXPECT_DOUBLE_EQ(machine.collectiveSeconds(CollectiveKind::AllReduce, 4, 4),
                   machine.transferSeconds(2, 8));
}

TEST(CostModelTest, LargeAllReduceTakesTheBandwidthOptimalAlgorithm) {
  MachineModel machine;
  int64_t big = int64_t(1) << 26;
  EXPECT_DOUBLE_EQ(
      machine.collectiveSeconds(CollectiveKind::AllReduce, 4, big),
      machine.transferSeconds(4, 2 * 3 * big / 4));
}

TEST(CostModelTest, GatherTakesLogarithmicRounds) {
  MachineModel machine;
  EXPECT_DOUBLE_EQ(machine.collectiveSeconds(CollectiveKind::AllGather, 8, 100),
                   machine.transferSeconds(3, 7 * 100));
  EXPECT_DOUBLE_EQ(machine.collectiveSeconds(CollectiveKind::AllSlice, 8, 100),
                   0.0);
}

TEST(CostModelTest, SmallAllToAllTakesBruck) {
  MachineModel machine;
  // Four devices, 256-byte blocks: Bruck's two rounds, each forwarding two
  // of the four 64-byte pieces (256 bytes in all), not three pairwise
  // messages of 192 bytes.
  EXPECT_DOUBLE_EQ(machine.collectiveSeconds(CollectiveKind::AllToAll, 4, 256),
                   machine.transferSeconds(2, 256));
  // Five devices: three rounds (ceil(log2 5)), forwarding pieces 1, 3; 2, 3;
  // and 4: five pieces of 100 bytes.
  EXPECT_DOUBLE_EQ(machine.collectiveSeconds(CollectiveKind::AllToAll, 5, 500),
                   machine.transferSeconds(3, 500));
}

TEST(CostModelTest, LargeAllToAllTakesPairwiseExchange) {
  MachineModel machine;
  int64_t big = int64_t(1) << 26;
  EXPECT_DOUBLE_EQ(machine.collectiveSeconds(CollectiveKind::AllToAll, 8, big),
                   machine.transferSeconds(7, 7 * big / 8));
}

} // namespace

//===- ThreadsStartedReductionTest.cpp - reductions that complete later ---===//
//
// The threads backend's started reductions (Communicator::startAllReduce /
// startReduceScatter) give the blocking calls' bits while several are in
// flight, blocking collectives run between their start and their wait, and
// they are finished in another order than they were started — what the
// interpreter does with gradient reductions during the backward pass — and
// a member that never starts one, or starts another, fails the run instead
// of hanging it.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

#include "shardc/Runtime/TensorBlocks.h"
#include "shardc/Support/MeshTopology.h"
#include "shardc/Support/RandomTensor.h"

#include <cstring>

using namespace mlir;
using namespace shardc;
using namespace shardc::testing;
using llvm::SmallVector;

namespace {

bool sameBits(const Tensor &a, const Tensor &b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         (a.byteSize() == 0 ||
          std::memcmp(a.data(), b.data(), a.byteSize()) == 0);
}

Tensor inputOf(int64_t device, int64_t round) {
  return randomTensor({4, 8, 10}, /*seed=*/9000 + 16 * round + device,
                      "started");
}

class ThreadsStartedReductionTest : public RuntimeTestBase {};

TEST_F(ThreadsStartedReductionTest, GiveTheBlockingCallsBits) {
  constexpr int64_t n = 4;
  MeshTopology mesh = llvm::cantFail(MeshTopology::create({"a", "b"}, {2, 2}));
  for (bool overlap : {true, false}) {
    ThreadsOptions options = testOptions();
    options.overlapReductions = overlap;
    std::vector<std::string> failures(n);
    ASSERT_TRUE(succeeded(runOnThreads(
        context, n,
        [&](Communicator &comm) -> LogicalResult {
          int64_t me = comm.deviceId();
          struct Started {
            std::unique_ptr<PendingCollective> pending;
            Tensor expected;
          };
          std::vector<Started> started;
          int64_t round = 0;
          for (SmallVector<int64_t> group :
               {comm.everyDevice(), mesh.groupOf(me, {"a"}),
                mesh.groupOf(me, {"b"})}) {
            std::vector<Tensor> inputs;
            SmallVector<const Tensor *> refs;
            for (int64_t d : group)
              inputs.push_back(inputOf(d, round));
            for (const Tensor &t : inputs)
              refs.push_back(&t);
            int64_t index = llvm::find(group, me) - group.begin();
            for (Reduction kind : {Reduction::Sum, Reduction::Max}) {
              auto p = comm.startAllReduce(inputOf(me, round), group, kind);
              if (failed(p))
                return failure();
              started.push_back({std::move(*p), reduceTensors(refs, kind)});
            }
            auto p = comm.startReduceScatter(inputOf(me, round), group, 1,
                                             Reduction::Sum);
            if (failed(p))
              return failure();
            started.push_back(
                {std::move(*p),
                 llvm::cantFail(trySliceBlock(
                     reduceTensors(refs, Reduction::Sum), 1,
                     static_cast<int64_t>(group.size()), index))});
            ++round;
          }
          // Blocking collectives on the same groups while they are in
          // flight; then some progress, and the waits last-started first.
          if (failed(comm.allGather(inputOf(me, 99), 0)) ||
              failed(comm.allReduce(inputOf(me, 98), mesh.groupOf(me, {"a"}),
                                    Reduction::Sum)))
            return failure();
          for (Started &s : started)
            s.pending->progress();
          for (auto it = started.rbegin(); it != started.rend(); ++it) {
            FailureOr<Tensor> result = it->pending->wait();
            if (failed(result))
              return failure();
            if (!sameBits(*result, it->expected))
              failures[me] += "reduction " +
                              std::to_string(it - started.rbegin()) +
                              " from the end differs; ";
          }
          return success();
        },
        options)))
        << diagnostics;
    for (int64_t d = 0; d < n; ++d)
      EXPECT_EQ(failures[d], "") << "device " << d << ", overlap " << overlap;
  }
}

TEST_F(ThreadsStartedReductionTest, MemberThatNeverStartsFailsTheWait) {
  LogicalResult result = runOnThreads(
      context, 2,
      [&](Communicator &comm) -> LogicalResult {
        if (comm.deviceId() == 1)
          return success(); // finishes without joining
        auto p = comm.startAllReduce(Tensor::scalar(1), comm.everyDevice(),
                                     Reduction::Sum);
        if (failed(p))
          return failure();
        return failed((*p)->wait()) ? failure() : success();
      },
      testOptions());
  EXPECT_TRUE(failed(result));
  EXPECT_NE(diagnostics.find("finished without joining"), std::string::npos)
      << diagnostics;
}

TEST_F(ThreadsStartedReductionTest, MismatchedStartsFail) {
  LogicalResult result = runOnThreads(
      context, 2,
      [&](Communicator &comm) -> LogicalResult {
        Reduction kind = comm.deviceId() == 0 ? Reduction::Sum : Reduction::Max;
        auto p =
            comm.startAllReduce(Tensor::scalar(1), comm.everyDevice(), kind);
        if (failed(p))
          return failure();
        return failed((*p)->wait()) ? failure() : success();
      },
      testOptions());
  EXPECT_TRUE(failed(result));
  EXPECT_NE(diagnostics.find("mismatched collectives"), std::string::npos)
      << diagnostics;
}

} // namespace

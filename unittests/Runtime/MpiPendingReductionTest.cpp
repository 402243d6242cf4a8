//===- MpiPendingReductionTest.cpp - reductions that complete later -------===//
//
// Part of the MpiBackendTest MPI program (its main starts MPI). Reductions
// started with MpiCommunicator::startAllReduce / startReduceScatter must
// give the simulator's bits, like the blocking calls, while several are in
// flight at once, blocking collectives run between their start and their
// wait, and they are waited for in another order than they were started:
// the interpreter's overlap of gradient reductions does all of these.
//
//===----------------------------------------------------------------------===//

#include "shardc/Runtime/MpiCommunicator.h"
#include "shardc/Runtime/TensorBlocks.h"
#include "shardc/Support/MeshTopology.h"
#include "shardc/Support/RandomTensor.h"

#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace mlir;
using namespace shardc;
using llvm::SmallVector;

namespace {

bool sameBits(const Tensor &a, const Tensor &b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         (a.byteSize() == 0 ||
          std::memcmp(a.data(), b.data(), a.byteSize()) == 0);
}

Tensor inputOf(int64_t device, llvm::ArrayRef<int64_t> shape) {
  return randomTensor(shape, /*seed=*/7000 + device, "pending");
}

/// One started reduction and the simulator's answer for it.
struct Started {
  std::unique_ptr<PendingCollective> pending;
  Tensor expected;
  std::string what;
};

/// Starts the reductions of `shape` over `group`: all_reduce sum and max,
/// reduce_scatter sum on dim 1.
void startReductions(MpiCommunicator &comm, llvm::ArrayRef<int64_t> group,
                     llvm::ArrayRef<int64_t> shape,
                     std::vector<Started> &started) {
  int64_t me = llvm::find(group, comm.deviceId()) - group.begin();
  std::vector<Tensor> inputs;
  for (int64_t d : group)
    inputs.push_back(inputOf(d, shape));
  SmallVector<const Tensor *> refs;
  for (const Tensor &t : inputs)
    refs.push_back(&t);
  for (Reduction kind : {Reduction::Sum, Reduction::Max}) {
    FailureOr<std::unique_ptr<PendingCollective>> p =
        comm.startAllReduce(inputOf(comm.deviceId(), shape), group, kind);
    ASSERT_TRUE(succeeded(p));
    started.push_back({std::move(*p), reduceTensors(refs, kind),
                       "all_reduce " + stringifyReduction(kind).str()});
  }
  FailureOr<std::unique_ptr<PendingCollective>> p = comm.startReduceScatter(
      inputOf(comm.deviceId(), shape), group, /*dim=*/1, Reduction::Sum);
  ASSERT_TRUE(succeeded(p));
  started.push_back(
      {std::move(*p),
       llvm::cantFail(trySliceBlock(reduceTensors(refs, Reduction::Sum), 1,
                                    group.size(), me)),
       "reduce_scatter"});
}

TEST(MpiPendingReductionTest, StartedReductionsGiveTheSimulatorsBits) {
  MLIRContext context;
  for (bool overlap : {true, false}) {
    MpiCommunicatorOptions options;
    options.overlapReductions = overlap;
    auto comm = MpiCommunicator::create(&context, options);
    ASSERT_TRUE(succeeded(comm));
    int64_t n = (*comm)->numDevices();
    MeshTopology mesh = llvm::cantFail(MeshTopology::create(
        {"a", "b"}, {n % 2 == 0 ? 2 : 1, n % 2 ? n : n / 2}));
    std::vector<SmallVector<int64_t>> groups = {
        (*comm)->everyDevice(), mesh.groupOf((*comm)->deviceId(), {"a"}),
        mesh.groupOf((*comm)->deviceId(), {"b"})};
    // Small (one round trip) and large (meets first, then spins).
    for (SmallVector<int64_t> shape :
         {SmallVector<int64_t>{4, 8, 6}, SmallVector<int64_t>{8, 16, 1032}}) {
      std::vector<Started> started;
      for (const auto &group : groups)
        startReductions(**comm, group, shape, started);
      // A blocking collective on the same groups while they are in flight.
      for (const auto &group : groups) {
        FailureOr<Tensor> gathered =
            (*comm)->allGather(inputOf((*comm)->deviceId(), shape), group, 0);
        ASSERT_TRUE(succeeded(gathered));
      }
      for (Started &s : started)
        s.pending->progress();
      // Waited for last-started first.
      for (auto it = started.rbegin(); it != started.rend(); ++it) {
        FailureOr<Tensor> result = it->pending->wait();
        ASSERT_TRUE(succeeded(result)) << it->what;
        EXPECT_TRUE(sameBits(*result, it->expected))
            << it->what << " of " << shape.size() << "-d shape, overlap "
            << overlap << ", rank " << (*comm)->deviceId();
      }
    }
  }
}

} // namespace

//===- UnevenCollectivesTest.cpp - hand-written uneven collectives --------===//
//
// The JSON program of UnevenCollectives.h on the sim and threads backends,
// on meshes whose "b" axis leaves 7 columns uneven in every way: a short
// last block (3, 4), and whole blocks of padding (8). MpiBackendTest runs
// it on the mpi backend.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"
#include "UnevenCollectives.h"

#include "shardc/Import/JsonImporter.h"
#include "shardc/Runtime/SimulatedMesh.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::testing;

namespace {

class UnevenCollectivesTest
    : public RuntimeTestBase,
      public ::testing::WithParamInterface<std::pair<int64_t, int64_t>> {};

TEST_P(UnevenCollectivesTest, SimAndThreadsGiveTheIndependentAnswer) {
  auto [a, b] = GetParam();
  OwningOpRef<ModuleOp> module = importJsonGraph(
      unevenCollectivesProgram(a, b), "uneven-collectives.json", &context);
  ASSERT_TRUE(module) << diagnostics;
  auto func = *module->getOps<func::FuncOp>().begin();
  MeshOp mesh = *module->getOps<MeshOp>().begin();
  MeshTopology topology =
      llvm::cantFail(MeshTopology::create({"a", "b"}, {a, b}));
  DeviceTensors args;
  for (int64_t d = 0; d < topology.numDevices(); ++d)
    args.push_back(unevenCollectivesArgs(topology, d));

  SimulationReport report;
  DeviceTensors simArgs;
  for (auto &deviceArgs : args) {
    simArgs.emplace_back();
    for (const Tensor &t : deviceArgs)
      simArgs.back().push_back(t.clone());
  }
  FailureOr<DeviceTensors> sim =
      simulateOnMesh(func, mesh, std::move(simArgs), {}, report);
  ASSERT_TRUE(succeeded(sim)) << diagnostics;

  std::unique_ptr<MeshBackend> threads =
      createThreadsBackend(mesh, testOptions());
  ASSERT_TRUE(threads) << diagnostics;
  FailureOr<DeviceTensors> onThreads = threads->run(func, args);
  ASSERT_TRUE(succeeded(onThreads)) << diagnostics;

  for (int64_t d = 0; d < topology.numDevices(); ++d) {
    EXPECT_EQ(checkUnevenCollectives(topology, d, (*sim)[d]), "") << "sim";
    EXPECT_EQ(checkUnevenCollectives(topology, d, (*onThreads)[d]), "")
        << "threads";
  }
}

INSTANTIATE_TEST_SUITE_P(Meshes, UnevenCollectivesTest,
                         ::testing::Values(std::make_pair(1, 3),
                                           std::make_pair(2, 4),
                                           std::make_pair(1, 8)));

} // namespace

//===- ThreadsFailureTest.cpp - one device fails, nobody hangs ------------===//
//
// A failure on one device must stop every other device's pending and later
// communicator calls, and the caller must learn which device failed first.
// Waits are bounded by the test options' timeout, so a regression fails
// (with "timed out" in the diagnostics, which these tests reject) instead
// of hanging; the failures below are all detected without it.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

#include "shardc/Runtime/DeviceLayout.h"

#include <atomic>
#include <chrono>
#include <thread>

using namespace mlir;
using namespace shardc;
using namespace shardc::testing;

namespace {

class ThreadsFailureTest : public RuntimeTestBase {
protected:
  /// The first line of the recorded diagnostics.
  std::string firstLine() const {
    return diagnostics.substr(0, diagnostics.find('\n'));
  }
};

// A 4-device program: relu, then an all_reduce every device must join.
constexpr const char *kProgram = R"mlir(
shardc.mesh @mesh ["x"=4]
func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> attributes {shardc.spmd} {
  %r = shardc.relu %a : tensor<2x3xf32>
  %s = shardc.all_reduce %r on @mesh axes = ["x"] : tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}
)mlir";

DeviceTensors argsFor(int64_t numDevices, std::vector<int64_t> shape) {
  DeviceTensors args(numDevices);
  for (int64_t d = 0; d < numDevices; ++d)
    args[d].push_back(llvm::cantFail(Tensor::allocate(shape)));
  return args;
}

TEST_F(ThreadsFailureTest, FailingDeviceBeforeCollectiveIsNamedFirst) {
  auto module = parse(kProgram);
  ASSERT_TRUE(module);
  auto func = *module->getOps<func::FuncOp>().begin();
  auto mesh = *module->getOps<MeshOp>().begin();
  std::unique_ptr<MeshBackend> backend =
      createThreadsBackend(mesh, testOptions());
  ASSERT_TRUE(backend);

  // Device 2 gets an argument of the wrong shape: it fails before the
  // all_reduce, which the other three are waiting in.
  DeviceTensors args = argsFor(4, {2, 3});
  args[2][0] = llvm::cantFail(Tensor::allocate({3, 3}));
  EXPECT_TRUE(failed(backend->run(func, args)));
  EXPECT_NE(firstLine().find("device 2: "), std::string::npos) << diagnostics;
  EXPECT_NE(firstLine().find("was given tensor<3x3xf32>"), std::string::npos)
      << diagnostics;
  for (int64_t d : {0, 1, 3})
    EXPECT_NE(diagnostics.find("device " + std::to_string(d) +
                               ": stopped in all_reduce"),
              std::string::npos)
        << diagnostics;
  EXPECT_EQ(diagnostics.find("timed out"), std::string::npos) << diagnostics;

  // The pool survives the failure: the next run with good inputs works.
  diagnostics.clear();
  FailureOr<DeviceTensors> ok = backend->run(func, argsFor(4, {2, 3}));
  EXPECT_TRUE(succeeded(ok)) << diagnostics;
}

TEST_F(ThreadsFailureTest, WrongNumberOfDeviceArguments) {
  auto module = parse(kProgram);
  ASSERT_TRUE(module);
  auto func = *module->getOps<func::FuncOp>().begin();
  auto mesh = *module->getOps<MeshOp>().begin();
  std::unique_ptr<MeshBackend> backend =
      createThreadsBackend(mesh, testOptions());
  ASSERT_TRUE(backend);
  EXPECT_TRUE(failed(backend->run(func, argsFor(3, {2, 3}))));
  EXPECT_NE(diagnostics.find("arguments for 3"), std::string::npos)
      << diagnostics;
}

TEST_F(ThreadsFailureTest, ProgramForALargerMeshFailsCleanly) {
  // The backend has 2 devices, the program's groups name 4.
  auto module = parse(kProgram);
  ASSERT_TRUE(module);
  auto func = *module->getOps<func::FuncOp>().begin();
  auto small = parse("shardc.mesh @small [\"x\"=2]");
  ASSERT_TRUE(small);
  std::unique_ptr<MeshBackend> backend =
      createThreadsBackend(*small->getOps<MeshOp>().begin(), testOptions());
  ASSERT_TRUE(backend);
  EXPECT_TRUE(failed(backend->run(func, argsFor(2, {2, 3}))));
  EXPECT_NE(diagnostics.find("the group must list distinct devices among "
                             "the 2"),
            std::string::npos)
      << diagnostics;
  EXPECT_EQ(diagnostics.find("timed out"), std::string::npos) << diagnostics;
}

TEST_F(ThreadsFailureTest, FailingBodyInRunOnThreads) {
  for (int64_t failing : {0, 3}) {
    diagnostics.clear();
    LogicalResult result = runOnThreads(
        context, 4,
        [&](Communicator &comm) -> LogicalResult {
          if (comm.deviceId() == failing)
            return emitError(UnknownLoc::get(&context), "injected failure");
          // The others wait in a collective, then in a barrier.
          if (failed(comm.allReduce(Tensor::scalar(1))))
            return failure();
          return comm.barrier();
        },
        testOptions());
    EXPECT_TRUE(failed(result));
    EXPECT_EQ(firstLine(),
              "error: device " + std::to_string(failing) + ": injected failure")
        << diagnostics;
    EXPECT_EQ(diagnostics.find("timed out"), std::string::npos) << diagnostics;
  }
}

TEST_F(ThreadsFailureTest, SilentFailureStillNamesTheDevice) {
  LogicalResult result = runOnThreads(
      context, 2,
      [&](Communicator &comm) -> LogicalResult {
        if (comm.deviceId() == 1)
          return failure();
        return comm.barrier();
      },
      testOptions());
  EXPECT_TRUE(failed(result));
  EXPECT_NE(diagnostics.find("device 1: failed"), std::string::npos)
      << diagnostics;
}

TEST_F(ThreadsFailureTest, WaitingForAFinishedDeviceFails) {
  // Device 1 returns without joining: device 0 must not wait for ever.
  LogicalResult result = runOnThreads(
      context, 2,
      [&](Communicator &comm) -> LogicalResult {
        if (comm.deviceId() == 1)
          return success();
        Tensor t = llvm::cantFail(Tensor::allocate({2}));
        return failed(comm.allGather(t, {0, 1}, 0)) ? failure() : success();
      },
      testOptions());
  EXPECT_TRUE(failed(result));
  EXPECT_NE(diagnostics.find("device 0: "), std::string::npos) << diagnostics;
  EXPECT_NE(diagnostics.find("device 1 finished without joining"),
            std::string::npos)
      << diagnostics;
}

TEST_F(ThreadsFailureTest, ReceiveFromAFinishedDeviceFails) {
  LogicalResult result = runOnThreads(
      context, 2,
      [&](Communicator &comm) -> LogicalResult {
        if (comm.deviceId() == 1)
          return success();
        return failed(comm.receive(1)) ? failure() : success();
      },
      testOptions());
  EXPECT_TRUE(failed(result));
  EXPECT_NE(diagnostics.find("device 1 finished without sending"),
            std::string::npos)
      << diagnostics;
}

TEST_F(ThreadsFailureTest, CyclicReceiveIsADeadlock) {
  LogicalResult result = runOnThreads(
      context, 3,
      [&](Communicator &comm) -> LogicalResult {
        int64_t d = comm.deviceId();
        return failed(comm.receive((d + 1) % 3)) ? failure() : success();
      },
      testOptions());
  EXPECT_TRUE(failed(result));
  EXPECT_NE(diagnostics.find("deadlock"), std::string::npos) << diagnostics;
  EXPECT_EQ(diagnostics.find("timed out"), std::string::npos) << diagnostics;
}

TEST_F(ThreadsFailureTest, MismatchedCollectivesFail) {
  LogicalResult result = runOnThreads(
      context, 2,
      [&](Communicator &comm) -> LogicalResult {
        FailureOr<Tensor> r =
            comm.deviceId() == 0
                ? comm.allReduce(Tensor::scalar(1))
                : comm.allReduce(Tensor::scalar(1), Reduction::Max);
        return failed(r) ? failure() : success();
      },
      testOptions());
  EXPECT_TRUE(failed(result));
  EXPECT_NE(diagnostics.find("mismatched collectives"), std::string::npos)
      << diagnostics;
}

// With more devices than cores the blocking collectives meet in slots
// holding copies of their tensors: a mismatch is found there too, and a
// member still waiting in the slot is stopped, not left to time out.
TEST_F(ThreadsFailureTest, MismatchedCollectivesFailWhereDevicesShareCores) {
  int64_t n = static_cast<int64_t>(std::thread::hardware_concurrency()) + 1;
  LogicalResult result = runOnThreads(
      context, n,
      [&](Communicator &comm) -> LogicalResult {
        FailureOr<Tensor> r =
            comm.deviceId() == n - 1
                ? comm.allReduce(Tensor::scalar(1), Reduction::Max)
                : comm.allReduce(Tensor::scalar(1));
        return failed(r) ? failure() : success();
      },
      testOptions());
  EXPECT_TRUE(failed(result));
  EXPECT_NE(diagnostics.find("mismatched collectives"), std::string::npos)
      << diagnostics;
  EXPECT_EQ(diagnostics.find("timed out"), std::string::npos) << diagnostics;
}

TEST_F(ThreadsFailureTest, BadArgumentsFailOnTheCallingDevice) {
  LogicalResult result = runOnThreads(
      context, 2,
      [&](Communicator &comm) -> LogicalResult {
        if (comm.deviceId() == 1)
          return failed(comm.send(7, Tensor::scalar(1))) ? failure()
                                                         : success();
        return comm.barrier();
      },
      testOptions());
  EXPECT_TRUE(failed(result));
  EXPECT_NE(firstLine().find("device 1: send to device 7"), std::string::npos)
      << diagnostics;
}

TEST_F(ThreadsFailureTest, TimeoutBoundsAWait) {
  // Device 1 is busy (not waiting), so this is no deadlock: only the
  // timeout ends device 0's wait. Device 1 reaches the barrier only once
  // device 0 has given up, however the threads are scheduled: the outcome
  // does not depend on the machine's speed.
  ThreadsOptions options;
  options.timeoutSeconds = 0.05;
  std::atomic<bool> device0Returned{false};
  LogicalResult result = runOnThreads(
      context, 2,
      [&](Communicator &comm) -> LogicalResult {
        if (comm.deviceId() == 1) {
          while (!device0Returned)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          return comm.barrier();
        }
        LogicalResult waited = comm.barrier();
        device0Returned = true;
        return waited;
      },
      options);
  EXPECT_TRUE(failed(result));
  EXPECT_NE(firstLine().find("device 0: timed out after 0.05 s waiting in "
                             "barrier"),
            std::string::npos)
      << diagnostics;
  EXPECT_NE(diagnostics.find("device 1: stopped in barrier: device 0 failed"),
            std::string::npos)
      << diagnostics;
}

TEST_F(ThreadsFailureTest, NoDevicesIsAnError) {
  EXPECT_TRUE(failed(runOnThreads(
      context, 0, [](Communicator &) { return success(); }, testOptions())));
  EXPECT_NE(diagnostics.find("at least one device"), std::string::npos);
}

} // namespace

//===- ThreadsBackendTest.cpp - threads equals sim equals reference -------===//
//
// Every example of examples/ imported, propagated and partitioned as
// `shardc simulate` does, then run on the threads backend: the outputs must
// equal the simulator's bit for bit (same kernels, same reduction order) and
// the unsharded reference within 1e-5. Also: one backend serving several
// runs (the pool is reused), and BLAS thread counts per device.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

#include "shardc/Import/JsonImporter.h"
#include "shardc/Interpreter/BlasThreads.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Runtime/DeviceLayout.h"
#include "shardc/Runtime/ShardedExecution.h"
#include "shardc/Support/HalfFloat.h"
#include "shardc/Support/NumericCheck.h"
#include "shardc/Support/RandomTensor.h"
#include "shardc/Transforms/Passes.h"
#include "shardc/Transforms/Pipelines.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <thread>

using namespace mlir;
using namespace shardc;
using namespace shardc::testing;

namespace {

std::vector<std::string> exampleFiles() {
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(SHARDC_EXAMPLES_DIR, ec), end;
       it != end && !ec; it.increment(ec))
    if (llvm::sys::path::extension(it->path()) == ".json")
      files.push_back(it->path());
  llvm::sort(files);
  return files;
}

func::FuncOp entryFunction(ModuleOp module) {
  auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
  for (func::FuncOp f : funcs)
    if (f.getSymName() == "main")
      return f;
  return funcs.size() == 1 ? funcs.front() : nullptr;
}

/// One example, imported, with its reference outputs and partitioned.
struct PreparedExample {
  OwningOpRef<ModuleOp> module;
  func::FuncOp spmd;
  MeshOp mesh;
  SmallVector<Tensor> inputs;
  SmallVector<Tensor> reference;
};

class ThreadsBackendTest : public RuntimeTestBase {
protected:
  /// Imports `path`, computes the reference on random inputs and
  /// partitions it with the pipeline of `shardc simulate`.
  bool prepare(StringRef path, PreparedExample &out) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer) {
      ADD_FAILURE() << "cannot read " << path.str();
      return false;
    }
    out.module = importJsonGraph((*buffer)->getBuffer(), path, &context);
    if (!out.module) {
      ADD_FAILURE() << diagnostics;
      return false;
    }
    // The reference runs the program the commands run: composites expanded.
    PassManager decompose(&context, ModuleOp::getOperationName());
    decompose.addPass(createShardcDecompose());
    if (failed(decompose.run(*out.module))) {
      ADD_FAILURE() << diagnostics;
      return false;
    }
    func::FuncOp global = entryFunction(*out.module);
    if (!global) {
      ADD_FAILURE() << "no entry function in " << path.str();
      return false;
    }
    // Integer inputs (token ids) hold small ids, in every table's range.
    for (auto [i, arg] : llvm::enumerate(global.getArguments())) {
      auto type = cast<RankedTensorType>(arg.getType());
      out.inputs.push_back(cantFail(tryRandomTensor(
          type.getShape(), /*seed=*/7, "arg" + std::to_string(i),
          defaultMaxTensorBytes(),
          executableDType(type.getElementType()).value_or(DType::F32))));
    }
    FailureOr<SmallVector<Tensor>> reference =
        interpretFunction(global, out.inputs);
    if (failed(reference)) {
      ADD_FAILURE() << diagnostics;
      return false;
    }
    out.reference = std::move(*reference);

    PassManager pm(&context, ModuleOp::getOperationName());
    buildPartitionPipeline(pm);
    if (failed(pm.run(*out.module))) {
      ADD_FAILURE() << diagnostics;
      return false;
    }
    out.spmd = entryFunction(*out.module);
    auto meshes = llvm::to_vector(out.module->getOps<MeshOp>());
    if (meshes.size() != 1) {
      ADD_FAILURE() << path.str() << " has " << meshes.size() << " meshes";
      return false;
    }
    out.mesh = meshes.front();
    return true;
  }
};

TEST_F(ThreadsBackendTest, EveryExampleMatchesSimBitForBit) {
  std::vector<std::string> files = exampleFiles();
  ASSERT_GE(files.size(), 5u);
  for (const std::string &path : files) {
    SCOPED_TRACE(path);
    PreparedExample ex;
    if (!prepare(path, ex))
      continue;
    FailureOr<ShardedRun> sim = runOnSimulatedMesh(ex.spmd, ex.mesh, ex.inputs);
    ASSERT_TRUE(succeeded(sim)) << diagnostics;

    std::unique_ptr<MeshBackend> backend =
        createThreadsBackend(ex.mesh, testOptions());
    ASSERT_TRUE(backend) << diagnostics;
    EXPECT_EQ(backend->kind(), BackendKind::Threads);
    EXPECT_EQ(static_cast<int64_t>(backend->localDevices().size()),
              backend->numDevices());
    FailureOr<std::vector<Tensor>> threads =
        runGlobalOnBackend(*backend, ex.spmd, ex.mesh, ex.inputs);
    ASSERT_TRUE(succeeded(threads)) << diagnostics;
    ASSERT_EQ(threads->size(), ex.reference.size());
    for (size_t i = 0; i < threads->size(); ++i) {
      EXPECT_EQ(maxAbsDifference((*threads)[i], sim->outputs[i]), 0.0f)
          << "output #" << i << " differs from the simulator";
      auto [rel, abs] = compareToReference((*threads)[i], ex.reference[i]);
      // A bf16 example (megatron_mlp_bf16) rounds its partial sums.
      DType dtype = ex.reference[i].dtype();
      EXPECT_LE(rel, isHalfDType(dtype) ? halfTolerance(dtype) : 1e-5)
          << "output #" << i << " (max abs err " << abs << ")";
    }
  }
}

TEST_F(ThreadsBackendTest, OneBackendServesManyRuns) {
  PreparedExample ex;
  ASSERT_TRUE(prepare(SHARDC_EXAMPLES_DIR "/megatron_mlp.json", ex));
  std::unique_ptr<MeshBackend> backend =
      createThreadsBackend(ex.mesh, testOptions());
  ASSERT_TRUE(backend);
  FailureOr<DeviceTensors> args = layOutArguments(ex.spmd, ex.mesh, ex.inputs);
  ASSERT_TRUE(succeeded(args)) << diagnostics;
  FailureOr<DeviceTensors> first = backend->run(ex.spmd, *args);
  ASSERT_TRUE(succeeded(first)) << diagnostics;
  for (int round = 0; round < 20; ++round) {
    FailureOr<DeviceTensors> again = backend->run(ex.spmd, *args);
    ASSERT_TRUE(succeeded(again)) << diagnostics;
    for (size_t d = 0; d < first->size(); ++d)
      for (size_t i = 0; i < (*first)[d].size(); ++i)
        EXPECT_EQ(maxAbsDifference((*again)[d][i], (*first)[d][i]), 0.0f);
  }
  // The arguments were only read.
  FailureOr<DeviceTensors> fresh = layOutArguments(ex.spmd, ex.mesh, ex.inputs);
  ASSERT_TRUE(succeeded(fresh));
  for (size_t d = 0; d < args->size(); ++d)
    for (size_t i = 0; i < (*args)[d].size(); ++i)
      EXPECT_EQ(maxAbsDifference((*args)[d][i], (*fresh)[d][i]), 0.0f);
  FailureOr<std::vector<Tensor>> gathered = backend->gatherBlocks([&] {
    std::vector<Tensor> blocks;
    for (auto &device : *first)
      blocks.push_back(device.front().clone());
    return blocks;
  }());
  ASSERT_TRUE(succeeded(gathered));
  EXPECT_EQ(static_cast<int64_t>(gathered->size()), backend->numDevices());
}

TEST_F(ThreadsBackendTest, BlasThreadsPerDeviceDefaultToEveryBackendsCount) {
  int cores = std::max(1u, std::thread::hardware_concurrency());
  ThreadsOptions options;
  // Whatever the machine and the mesh: the count of the other backends, so
  // that results are the same bits.
  EXPECT_EQ(resolveBlasThreads(options, 1), kDeviceBlasThreads);
  EXPECT_EQ(resolveBlasThreads(options, cores), kDeviceBlasThreads);
  EXPECT_EQ(resolveBlasThreads(options, 4 * cores), kDeviceBlasThreads);
  options.blasThreadsPerDevice = 3;
  EXPECT_EQ(resolveBlasThreads(options, 8), 3);

  // The setting applies during a run and is restored after it.
  int before = getBlasThreads();
  std::vector<int> seen(2, 0);
  ASSERT_TRUE(succeeded(runOnThreads(
      context, 2,
      [&](Communicator &comm) {
        seen[comm.deviceId()] = getBlasThreads();
        return success();
      },
      options)));
  EXPECT_EQ(seen, (std::vector<int>{3, 3}));
  EXPECT_EQ(getBlasThreads(), before);
}

} // namespace

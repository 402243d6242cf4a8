//===- TrainBenchDriver.cpp - time a training step on the threads backend -===//
//
// shardc-train-bench: the C++ half of bench/train_bench.py. Reads a GLOBAL
// program (a forward+backward step with sharding annotations on a 1-D
// mesh), sets the mesh to --devices, partitions it with the pipeline of
// `shardc simulate` (propagate, partition, cleanup), lays random inputs out
// once, then times --steps runs of the SPMD program on the threads backend
// after --warmup untimed ones. GFLOP/s count the global program's
// matmul/dot_general FLOPs (2*m*n*k each) per step.
//
// The last line of output is machine-readable:
//   RESULT devices=2 blas_threads=1 steps=10 gflop=42.95 best_s=...
//   median_s=... gflops=... collectives=1
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Interpreter/BlasThreads.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Interpreter/Kernels.h"
#include "shardc/Runtime/DeviceLayout.h"
#include "shardc/Runtime/ShardedExecution.h"
#include "shardc/Runtime/ThreadsBackend.h"
#include "shardc/Support/RandomTensor.h"
#include "shardc/Transforms/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>

using namespace mlir;
using namespace shardc;
namespace cl = llvm::cl;

static cl::opt<std::string> programPath(cl::Positional, cl::Required,
                                        cl::desc("<global program .mlir>"));
static cl::opt<int64_t> devices("devices", cl::desc("Mesh size (1-D mesh)"),
                                cl::init(1));
static cl::opt<int> blasThreads(
    "blas-threads",
    cl::desc("BLAS threads per device (0: 1, the count of every backend)"),
    cl::init(0));
static cl::list<std::string>
    autodiff("autodiff",
             cl::desc("Differentiate the program first with respect to these "
                      "inputs (--shardc-autodiff; propagation runs before it, "
                      "as in shardc simulate --autodiff)"),
             cl::CommaSeparated);
static cl::opt<int> steps("steps", cl::desc("Timed steps"), cl::init(10));
static cl::opt<int> warmup("warmup", cl::desc("Untimed steps first"),
                           cl::init(2));
static cl::opt<bool>
    check("check",
          cl::desc("Also run the unsharded program on the reference "
                   "interpreter and compare the outputs (1e-5 relative)"),
          cl::init(false));
static cl::opt<bool> printSpmd("print-spmd",
                               cl::desc("Print the partitioned program"),
                               cl::init(false));

static double flopsOf(func::FuncOp func) {
  double total = 0;
  func.walk([&](Operation *op) {
    if (op->getNumResults() != 1)
      return;
    auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!result)
      return;
    double k = 0;
    if (auto mm = dyn_cast<MatmulOp>(op))
      k = mm.getLhs().getType().getShape().back();
    else if (auto dg = dyn_cast<DotGeneralOp>(op)) {
      k = 1;
      for (int64_t d : dg.getLhsContractingDims())
        k *= dg.getLhs().getType().getDimSize(d);
    }
    total += 2 * double(result.getNumElements()) * k;
  });
  return total;
}

static func::FuncOp entryFunction(ModuleOp module) {
  auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
  for (func::FuncOp f : funcs)
    if (f.getSymName() == "main")
      return f;
  return funcs.size() == 1 ? funcs.front() : nullptr;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(
      argc, argv, "shardc-train-bench: time a step on the threads backend\n");
  MLIRContext context;
  context.loadDialect<ShardcDialect, func::FuncDialect>();
  shardc::registerKernelModels(context);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(programPath, sourceMgr, &context);
  if (!module)
    return 1;
  auto meshes = llvm::to_vector(module->getOps<MeshOp>());
  func::FuncOp global = entryFunction(*module);
  if (meshes.size() != 1 || meshes.front().getAxisSizes().size() != 1 ||
      !global) {
    llvm::errs() << "shardc-train-bench: error: the program needs one "
                    "function @main and one 1-D mesh\n";
    return 1;
  }
  if (devices < 1 || steps < 1 || warmup < 0 || blasThreads < 0) {
    llvm::errs() << "shardc-train-bench: error: --devices and --steps must "
                    "be positive, --warmup and --blas-threads not negative\n";
    return 1;
  }
  MeshOp mesh = meshes.front();
  mesh.setAxisSizes({devices.getValue()});
  if (!autodiff.empty()) {
    PassManager grad(&context, ModuleOp::getOperationName());
    ShardcAutodiffOptions options;
    options.wrt.assign(autodiff.begin(), autodiff.end());
    // Propagated before differentiating, as the CLI and engine do; the
    // partition pipeline below shards the whole program.
    buildAutodiffPipeline(grad, options, /*propagateFirst=*/true,
                          ShardingStage::None);
    if (failed(grad.run(*module)))
      return 1;
    global = entryFunction(*module);
  }
  double flops = flopsOf(global);

  SmallVector<Tensor> inputs;
  for (auto [i, arg] : llvm::enumerate(global.getArguments()))
    inputs.push_back(
        randomTensor(cast<RankedTensorType>(arg.getType()).getShape(),
                     /*seed=*/1, "arg" + std::to_string(i)));
  SmallVector<Tensor> reference;
  if (check) {
    OwningOpRef<ModuleOp> copy = module->clone();
    FailureOr<SmallVector<Tensor>> out =
        interpretFunction(entryFunction(*copy), inputs);
    if (failed(out))
      return 1;
    reference = std::move(*out);
  }

  PassManager pm(&context, ModuleOp::getOperationName());
  buildPartitionPipeline(pm);
  if (failed(pm.run(*module)))
    return 1;
  func::FuncOp spmd = entryFunction(*module);
  int collectives = 0;
  spmd.walk([&](Operation *op) { collectives += isa<CollectiveOpInterface>(op); });
  if (printSpmd)
    module->print(llvm::outs());

  ThreadsOptions options;
  options.blasThreadsPerDevice = blasThreads;
  std::unique_ptr<MeshBackend> backend = createThreadsBackend(mesh, options);
  if (!backend)
    return 1;
  FailureOr<DeviceTensors> args = layOutArguments(spmd, mesh, inputs);
  if (failed(args))
    return 1;
  FailureOr<DeviceTensors> results = failure();
  for (int i = 0; i < warmup; ++i)
    if (failed(results = backend->run(spmd, *args)))
      return 1;
  std::vector<double> seconds;
  for (int i = 0; i < steps; ++i) {
    auto start = std::chrono::steady_clock::now();
    results = backend->run(spmd, *args);
    auto stop = std::chrono::steady_clock::now();
    if (failed(results))
      return 1;
    seconds.push_back(std::chrono::duration<double>(stop - start).count());
  }
  if (check) {
    FailureOr<std::vector<Tensor>> outputs =
        assembleResults(spmd, mesh, *results);
    if (failed(outputs))
      return 1;
    for (size_t i = 0; i < outputs->size(); ++i) {
      auto [rel, abs] = compareToReference((*outputs)[i], reference[i]);
      llvm::outs() << "output #" << i << " max_rel_err=" << rel
                   << " max_abs_err=" << abs << "\n";
      if (!(rel <= 1e-5)) {
        llvm::errs() << "shardc-train-bench: error: output #" << i
                     << " differs from the reference\n";
        return 1;
      }
    }
  }
  std::vector<double> sorted = seconds;
  llvm::sort(sorted);
  double best = sorted.front(), median = sorted[sorted.size() / 2];
  llvm::outs() << llvm::format(
      "RESULT devices=%lld blas_threads=%d steps=%d gflop=%.2f best_s=%.4f "
      "median_s=%.4f gflops=%.1f collectives=%d\n",
      (long long)devices.getValue(), resolveBlasThreads(options, devices),
      steps.getValue(), flops / 1e9, best, median, flops / median / 1e9,
      collectives);
  return 0;
}

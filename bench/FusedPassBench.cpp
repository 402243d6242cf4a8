//===- FusedPassBench.cpp - time a fused elementwise pass ---------------===//
//
// shardc-fused-pass-bench: a kernel microbenchmark of the interpreter's
// fused elementwise passes (lib/Interpreter/ElementwiseFusion.h). Reads a
// function @main of elementwise ops (bench/adam_update.mlir: the Adam
// update of a training step, the largest fused pass of the GPT step),
// fills its arguments with random values (non-negative ones for arguments
// named in --non-negative, such as Adam's second moment), and times --runs
// runs of it on the reference interpreter after --warmup untimed ones, in
// the thread's CPU seconds.
// With --plain-adam it also times a plain C++ loop doing the same Adam
// update on tensors of the same size (the program's first argument's),
// the speed a hand-written pass reaches on this machine.
//
// The last line is machine-readable:
//   RESULT elements=... best_ms=... median_ms=... plain_adam_best_ms=...
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Interpreter/Kernels.h"
#include "shardc/Runtime/RetainFreedMemory.h"
#include "shardc/Support/RandomTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <vector>

using namespace mlir;
using namespace shardc;
namespace cl = llvm::cl;

static cl::opt<std::string> programPath(cl::Positional, cl::Required,
                                        cl::desc("<program .mlir with @main>"));
static cl::opt<int> runs("runs", cl::desc("Timed runs"), cl::init(10));
static cl::opt<int> warmup("warmup", cl::desc("Untimed runs first"),
                           cl::init(2));
static cl::list<unsigned>
    nonNegative("non-negative",
                cl::desc("Arguments (by position) filled with values in "
                         "[0, 1] instead of [-1, 1)"),
                cl::CommaSeparated);
static cl::opt<bool> plainAdam(
    "plain-adam",
    cl::desc("Also time a plain loop doing the Adam update on tensors of the "
             "first argument's size"),
    cl::init(false));

/// The thread's CPU time: on a machine shared with other jobs, the wall
/// time of a run also counts the time it waited for a core.
struct Clock {
  using time_point = double;
  static double now() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
  }
};

static double secondsSince(double start) { return Clock::now() - start; }

/// The Adam update of bench/adam_update.mlir as one loop over restrict
/// pointers (so the compiler vectorizes it): what the fused pass would cost
/// with every intermediate in a register.
static void plainAdamStep(const float *__restrict p, const float *__restrict g,
                          const float *__restrict m, const float *__restrict v,
                          float *__restrict pn, float *__restrict mn,
                          float *__restrict vn, int64_t n) {
  const float b1 = 0.9f, c1 = 0.1f, b2 = 0.999f, c2 = 0.001f, eps = 1e-8f,
              rootCorrection = 0.0316f, stepSize = 0.01f;
  for (int64_t i = 0; i < n; ++i) {
    float m2 = b1 * m[i] + c1 * g[i];
    float v2 = b2 * v[i] + c2 * (g[i] * g[i]);
    float d = std::sqrt(v2) / rootCorrection + eps;
    mn[i] = m2;
    vn[i] = v2;
    pn[i] = p[i] - stepSize * (m2 / d);
  }
}

static double timePlainAdam(int64_t n) {
  std::vector<float> p(n, 0.5f), g(n, 0.25f), m(n, 0.125f), v(n, 0.0625f);
  std::vector<float> pn(n), mn(n), vn(n);
  double best = 1e30;
  for (int r = 0; r < warmup + runs; ++r) {
    auto start = Clock::now();
    plainAdamStep(p.data(), g.data(), m.data(), v.data(), pn.data(), mn.data(),
                  vn.data(), n);
    double s = secondsSince(start);
    if (r >= warmup)
      best = std::min(best, s);
    // Keeps the outputs live.
    std::swap(p, pn);
  }
  return best;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(
      argc, argv, "shardc-fused-pass-bench: time a fused elementwise pass\n");
  if (runs < 1 || warmup < 0) {
    llvm::errs() << "shardc-fused-pass-bench: error: --runs must be positive "
                    "and --warmup not negative\n";
    return 1;
  }
  // As the backends do: freed tensors stay in the heap, so every run
  // reuses the previous run's memory instead of faulting fresh pages in.
  retainFreedMemory();
  MLIRContext context;
  context.loadDialect<ShardcDialect, func::FuncDialect>();
  shardc::registerKernelModels(context);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(programPath, sourceMgr, &context);
  if (!module)
    return 1;
  auto main = module->lookupSymbol<func::FuncOp>("main");
  if (!main || main.getNumArguments() == 0) {
    llvm::errs() << "shardc-fused-pass-bench: error: the program needs a "
                    "function @main with arguments\n";
    return 1;
  }
  SmallVector<Tensor> inputs;
  int64_t elements = 0;
  for (auto [i, arg] : llvm::enumerate(main.getArguments())) {
    auto type = cast<RankedTensorType>(arg.getType());
    bool positive = llvm::is_contained(nonNegative, i);
    Tensor tensor =
        randomTensor(type.getShape(), /*seed=*/1, "arg" + std::to_string(i));
    if (positive)
      for (float &x : tensor.values())
        x = std::fabs(x);
    inputs.push_back(std::move(tensor));
    if (i == 0)
      elements = type.getNumElements();
  }
  std::vector<double> seconds;
  for (int r = 0; r < warmup + runs; ++r) {
    auto start = Clock::now();
    FailureOr<SmallVector<Tensor>> out = interpretFunction(main, inputs);
    double s = secondsSince(start);
    if (failed(out))
      return 1;
    if (r >= warmup)
      seconds.push_back(s);
  }
  std::sort(seconds.begin(), seconds.end());
  double best = seconds.front(), median = seconds[seconds.size() / 2];
  llvm::outs() << llvm::format("fused program: best %.2f ms, median %.2f ms "
                               "over %d runs of %lld elements\n",
                               best * 1e3, median * 1e3, runs.getValue(),
                               static_cast<long long>(elements));
  double plain = 0;
  if (plainAdam) {
    plain = timePlainAdam(elements);
    llvm::outs() << llvm::format("plain Adam loop: best %.2f ms (the fused "
                                 "program takes %.2fx its time)\n",
                                 plain * 1e3, best / plain);
  }
  llvm::outs() << llvm::format("RESULT elements=%lld best_ms=%.3f "
                               "median_ms=%.3f plain_adam_best_ms=%.3f\n",
                               static_cast<long long>(elements), best * 1e3,
                               median * 1e3, plain * 1e3);
  return 0;
}

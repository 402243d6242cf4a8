//===- shardc-difftest.cpp - differential testing of the pipeline ---------===//
//
// Generates random programs with random partial sharding annotations, runs
// propagate + partition + cleanup on each, executes the SPMD result on a
// simulated mesh, and compares it with the reference interpreter running
// the unsharded program on the same inputs (what `shardc simulate` does for
// one model). A compiler error on a valid program, a mismatch, or replicas
// that disagree are all failures; each is written out as a reproducer.
//
//===----------------------------------------------------------------------===//

#include "Generator.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ShardcOps.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Runtime/ShardedExecution.h"
#include "shardc/Support/RandomTensor.h"
#include "shardc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<int64_t> numCases("cases", cl::desc("Number of random cases"),
                                 cl::init(500));
static cl::opt<uint64_t> baseSeed("seed", cl::desc("Base random seed"),
                                  cl::init(1));
static cl::opt<std::string>
    reproDir("reproducer-dir",
             cl::desc("Where failing cases are written as .mlir"),
             cl::init("."));
static cl::opt<bool> verbose("verbose", cl::desc("Log every case"),
                             cl::init(false));
// Random chains of exp/tanh/matmul amplify the float rounding differences
// that come from summing partial products in a different order, so the
// bound is looser than `shardc simulate`'s default 1e-5.
static cl::opt<double>
    tolerance("tolerance", cl::desc("Largest accepted max|sim-ref| / max|ref|"),
              cl::init(1e-4));

namespace {
struct CaseResult {
  bool failed = false;
  std::string reason;
  int64_t collectives = 0;
  double worstRel = 0;
};

func::FuncOp mainOf(ModuleOp m) {
  for (auto f : m.getOps<func::FuncOp>())
    return f;
  return nullptr;
}

/// One case: the steps of `shardc simulate`. Diagnostics go to the caller's
/// handler; any error there fails the case even if a step claims success.
CaseResult runCase(ModuleOp original, uint64_t inputSeed) {
  CaseResult r;
  auto fail = [&](std::string why) {
    r.failed = true;
    r.reason = std::move(why);
    return r;
  };
  OwningOpRef<ModuleOp> module = original.clone();
  func::FuncOp func = mainOf(*module);

  SmallVector<shardc::Tensor> inputs;
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    auto name = func.getArgAttrOfType<StringAttr>(
        i, shardc::ShardcDialect::getNameAttrName());
    auto t = shardc::tryRandomTensor(
        cast<RankedTensorType>(arg.getType()).getShape(), inputSeed,
        name.getValue());
    if (!t)
      return fail("random input: " + llvm::toString(t.takeError()));
    inputs.push_back(std::move(*t));
  }

  OwningOpRef<ModuleOp> reference = original.clone();
  auto expected = shardc::interpretFunction(mainOf(*reference), inputs);
  if (failed(expected))
    return fail("reference interpreter failed");

  PassManager pm(original->getContext(), ModuleOp::getOperationName());
  pm.addPass(shardc::createShardcPropagate());
  pm.addPass(shardc::createShardcPartition());
  pm.addNestedPass<func::FuncOp>(shardc::createShardcCleanup());
  if (failed(pm.run(*module)))
    return fail("propagate/partition pipeline failed");
  func = mainOf(*module);
  auto meshes = llvm::to_vector(module->getOps<shardc::MeshOp>());
  if (meshes.size() != 1 || !func)
    return fail("pipeline output lost the mesh or the function");
  shardc::MeshOp mesh = meshes.front();
  auto run = shardc::runOnSimulatedMesh(func, mesh, inputs);
  if (failed(run))
    return fail("simulation failed");
  r.collectives = run->report.collectives.size();
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    double rel =
        shardc::compareToReference(run->outputs[i], (*expected)[i]).first;
    r.worstRel = std::max(r.worstRel, rel);
    if (!(rel <= tolerance)) {
      std::string msg;
      llvm::raw_string_ostream(msg)
          << "output " << i << " differs from the unsharded program: "
          << "max_rel_err " << rel << " > " << tolerance.getValue();
      return fail(msg);
    }
  }
  return r;
}

void writeReproducer(ModuleOp module, uint64_t seed, int64_t n,
                     std::string &path) {
  (void)llvm::sys::fs::create_directories(reproDir.getValue());
  SmallString<256> p(reproDir.getValue());
  llvm::sys::path::append(p, "difftest-case-" + std::to_string(seed) + "-" +
                                 std::to_string(n) + ".mlir");
  path = p.str().str();
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    path += " (not written: " + ec.message() + ")";
    return;
  }
  // Named locations keep "v7" in the diagnostics when the file is re-run.
  module->print(os, OpPrintingFlags().enableDebugInfo());
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv,
                              "shardc differential tester: random programs "
                              "through propagate + partition + simulate\n");

  DialectRegistry registry;
  registry.insert<shardc::ShardcDialect, func::FuncDialect>();
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  // Cases are tiny; a thread pool would only add overhead.
  ctx.disableMultithreading();

  std::string diags;
  bool sawError = false;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      sawError = true;
    llvm::raw_string_ostream os(diags);
    os << diag.getLocation() << ": ";
    switch (diag.getSeverity()) {
    case DiagnosticSeverity::Error:
      os << "error: ";
      break;
    case DiagnosticSeverity::Warning:
      os << "warning: ";
      break;
    case DiagnosticSeverity::Remark:
      os << "remark: ";
      break;
    case DiagnosticSeverity::Note:
      os << "note: ";
      break;
    }
    os << diag << "\n";
    for (Diagnostic &note : diag.getNotes())
      os << "  " << note.getLocation() << ": note: " << note << "\n";
    return success();
  });

  auto start = std::chrono::steady_clock::now();
  int64_t failedCases = 0, invalid = 0, collectives = 0;
  for (int64_t n = 0; n < numCases; ++n) {
    OwningOpRef<ModuleOp> module;
    int numOps = 0;
    uint64_t caseSeed = 0;
    // The generator should only build valid programs; if one is not,
    // count it (a generator bug to look at) and draw another.
    for (uint64_t attempt = 0;; ++attempt) {
      caseSeed = shardc::splitmix64Mix(baseSeed * 0x100000001b3ULL +
                                       uint64_t(n) * 1000003ULL + attempt);
      shardc::DiffRng rng(caseSeed);
      diags.clear();
      sawError = false;
      module = shardc::generateModule(ctx, rng, numOps);
      if (succeeded(verify(*module)) && !sawError)
        break;
      ++invalid;
      if (verbose) {
        llvm::errs() << "case " << n << ": generated module is invalid:\n"
                     << diags;
        module->print(llvm::errs());
      }
    }

    diags.clear();
    sawError = false;
    CaseResult r = runCase(*module, caseSeed);
    collectives += r.collectives;
    if (!r.failed && sawError) {
      r.failed = true;
      r.reason = "an error was emitted though every step succeeded";
    }
    if (verbose)
      llvm::outs() << "case " << n << ": ops=" << numOps
                   << " collectives=" << r.collectives
                   << " max_rel_err=" << r.worstRel
                   << (r.failed ? " FAILED" : " ok") << "\n";
    if (!r.failed)
      continue;
    ++failedCases;
    std::string path;
    writeReproducer(*module, baseSeed, n, path);
    llvm::outs() << "FAILED case " << n << " (seed " << baseSeed
                 << ", case seed " << caseSeed << "): " << r.reason << "\n";
    if (!diags.empty())
      llvm::outs() << "diagnostics:\n" << diags;
    llvm::outs() << "reproducer: " << path << "\n";
  }
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (verbose || invalid)
    llvm::outs() << "difftest: " << invalid
                 << " generated modules were invalid and regenerated\n";
  if (verbose)
    llvm::outs() << llvm::format("difftest: %.2fs\n", secs);
  llvm::outs() << "difftest: " << numCases << " cases, " << collectives
               << " collectives inserted, " << failedCases << " failed\n";
  llvm::outs() << (numCases - failedCases) << " passed, " << failedCases
               << " failed\n";
  return failedCases ? 1 : 0;
}

//===- shardc-difftest.cpp - differential testing of the pipeline ---------===//
//
// Generates random programs with random sharding annotations (Generator.h),
// checks each against the unsharded program (CaseRunner.h), and writes every
// failing case out as a reproducer. A compiler error on a valid program, a
// mismatch, replicas that disagree, a backend that disagrees with the
// simulator, or an invalid program that is not rejected cleanly are all
// failures.
//
//===----------------------------------------------------------------------===//

#include "CaseRunner.h"
#include "Generator.h"
#include "OpCatalog.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Interpreter/Kernels.h"
#include "shardc/Support/RandomTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <map>

using namespace mlir;
namespace cl = llvm::cl;

/// Every option of the tool; --help hides the LLVM options linked in.
static cl::OptionCategory difftestCategory("shardc-difftest options");

static cl::opt<int64_t> numCases("cases", cl::desc("Number of random cases"),
                                 cl::cat(difftestCategory), cl::init(500));
static cl::opt<uint64_t> baseSeed("seed", cl::desc("Base random seed"),
                                  cl::cat(difftestCategory), cl::init(1));
static cl::opt<int64_t>
    onlyCase("only-case",
             cl::desc("Run only this case number (a reproducer's)"),
             cl::cat(difftestCategory), cl::init(-1));
static cl::opt<std::string>
    reproDir("reproducer-dir",
             cl::desc("Where failing cases are written as .mlir"),
             cl::cat(difftestCategory), cl::init("."));
static cl::opt<bool> verbose("verbose", cl::desc("Log every case"),
                             cl::cat(difftestCategory), cl::init(false));
static cl::opt<bool> listOps(
    "list-ops",
    cl::desc("Only generate the cases and list the registered ops the "
             "generator drew and those it never drew (the op catalog test "
             "fails on an op no case reaches)"),
    cl::cat(difftestCategory), cl::init(false));
static cl::opt<bool> printCases("print-cases",
                                cl::desc("Print every generated case"),
                                cl::cat(difftestCategory), cl::init(false));
// Random chains of exp/tanh/matmul amplify the float rounding differences
// that come from summing partial products in a different order, so the
// bound is looser than `shardc simulate`'s default 1e-5.
static cl::opt<double>
    tolerance("tolerance",
              cl::desc("Largest accepted max_rel_err per output (docs/cli.md, "
                       "How results are checked)"),
              cl::cat(difftestCategory), cl::init(1e-4));
// A backward pass composes the forward ops' derivatives, and a gradient
// that is large where a forward value nearly cancelled (x / (x^2 + c))
// carries that value's absolute rounding error as a relative one. Partitioning
// bugs give errors of order one either way.
static cl::opt<double> backwardTolerance(
    "backward-tolerance",
    cl::desc("--tolerance for backward passes and training steps"),
    cl::cat(difftestCategory), cl::init(1e-3));
// For the test that the check still catches wrong results: every case
// must then fail (docs/development.md, Differential testing).
static cl::opt<double> perturbSharded(
    "perturb-sharded",
    cl::desc("Move the first element of every sharded output by this many "
             "times the scale it is judged on (a deliberately wrong result)"),
    cl::cat(difftestCategory), cl::init(0));
// Off by default: a NaN or infinity in the reference counts as a mismatch
// until the comparison takes identical non-finite values as equal.
static cl::opt<bool>
    nonFinite("non-finite",
              cl::desc("Also draw inputs holding NaN and infinities"),
              cl::cat(difftestCategory), cl::init(false));
static cl::opt<double> threadsFraction(
    "threads-fraction",
    cl::desc("Fraction of cases also run on the threads backend"),
    cl::cat(difftestCategory), cl::init(0.1));
static cl::opt<double> unevenFraction(
    "uneven-fraction",
    cl::desc("Fraction of cases drawing dims their shardings' axes do not "
             "divide (padded)"),
    cl::cat(difftestCategory), cl::init(0.3));

namespace {

/// The header of a reproducer: what the .mlir alone does not say.
std::string describeCase(const shardc::GeneratedCase &c, uint64_t caseSeed,
                         int64_t n) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "// shardc-difftest --seed " << baseSeed << " --only-case " << n
     << (nonFinite ? " --non-finite" : "") << " --uneven-fraction "
     << unevenFraction << " (threads fraction " << threadsFraction << ")\n"
     << "// kind: " << shardc::stringifyProgramKind(c.kind) << ", input seed "
     << caseSeed << (c.threads ? ", threads too" : "") << "\n// inputs:";
  for (auto [i, d] : llvm::enumerate(c.domains))
    os << " in" << i << "=" << shardc::stringifyInputDomain(d);
  os << "\n";
  if (!c.wrt.empty()) {
    os << "// wrt:";
    for (const std::string &w : c.wrt)
      os << " " << w;
    os << "\n";
  }
  if (c.kind == shardc::ProgramKind::TrainStep) {
    os << "// optimizer: " << (c.train.adam ? "adam" : "sgd") << " lr "
       << c.train.learningRate << ", zero-axes:";
    for (const std::string &a : c.train.zeroAxes)
      os << " " << a;
    os << "\n";
  }
  if (!c.collectiveName.empty())
    os << "// collective: " << c.collectiveName << "\n";
  return s;
}

void writeReproducer(const shardc::GeneratedCase &c, uint64_t caseSeed,
                     int64_t n, std::string &path) {
  (void)llvm::sys::fs::create_directories(reproDir.getValue());
  SmallString<256> p(reproDir.getValue());
  llvm::sys::path::append(p, "difftest-case-" + std::to_string(baseSeed) + "-" +
                                 std::to_string(n) + ".mlir");
  path = p.str().str();
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    path += " (not written: " + ec.message() + ")";
    return;
  }
  os << describeCase(c, caseSeed, n);
  // Named locations keep "v7" in the diagnostics when the file is re-run.
  ModuleOp module = c.module.get();
  module->print(os, OpPrintingFlags().enableDebugInfo());
}

/// Collects what the diagnostics say into `log`: the runner fails a case
/// on errors a step emitted even when it claimed success.
std::unique_ptr<ScopedDiagnosticHandler>
logDiagnostics(MLIRContext &ctx, shardc::DiagnosticLog &log) {
  return std::make_unique<ScopedDiagnosticHandler>(
      &ctx, [&log](Diagnostic &diag) {
        if (diag.getSeverity() == DiagnosticSeverity::Error)
          log.errorLocs.push_back(diag.getLocation());
        llvm::raw_string_ostream os(log.text);
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
}

/// What a run met, for its summary.
struct RunStats {
  int64_t maxReductions = 0, linearOnSummands = 0;
  int64_t failedCases = 0, invalid = 0, collectives = 0, onThreads = 0, ran = 0,
          unevenCases = 0, unevenShardings = 0;
  std::map<shardc::ProgramKind, int64_t> kinds;
};

/// Case `n` of the run. The generator should only build valid programs; if
/// one is not, it is counted (a generator bug to look at) and another is
/// drawn.
shardc::GeneratedCase generateValidCase(MLIRContext &ctx, int64_t n,
                                        const shardc::GeneratorOptions &options,
                                        shardc::DiagnosticLog &log,
                                        RunStats &stats, uint64_t &caseSeed) {
  for (uint64_t attempt = 0;; ++attempt) {
    caseSeed = shardc::splitmix64Mix(baseSeed * 0x100000001b3ULL +
                                     uint64_t(n) * 1000003ULL + attempt);
    shardc::DiffRng rng(caseSeed);
    log.clear();
    shardc::GeneratedCase c = shardc::generateCase(ctx, rng, options);
    if (succeeded(verify(*c.module)) && log.errorLocs.empty())
      return c;
    ++stats.invalid;
    if (verbose) {
      llvm::errs() << "case " << n << ": generated module is invalid:\n"
                   << log.text;
      c.module->print(llvm::errs());
    }
  }
}

/// Runs case `n`; a failure is reported with its reproducer.
void checkCase(const shardc::GeneratedCase &c, uint64_t caseSeed, int64_t n,
               shardc::DiagnosticLog &log, RunStats &stats) {
  log.clear();
  bool differentiated = c.kind == shardc::ProgramKind::Autodiff ||
                        c.kind == shardc::ProgramKind::TrainStep;
  shardc::CaseResult r = shardc::runCase(
      c, caseSeed, differentiated ? backwardTolerance : tolerance, log,
      perturbSharded);
  ++stats.ran;
  ++stats.kinds[c.kind];
  stats.onThreads += r.ranThreads;
  stats.unevenCases += c.unevenShardings > 0;
  stats.unevenShardings += c.unevenShardings;
  stats.collectives += r.collectives;
  stats.maxReductions += r.maxReductions;
  stats.linearOnSummands += r.linearOnSummands;
  if (verbose)
    llvm::outs() << "case " << n << ": " << shardc::stringifyProgramKind(c.kind)
                 << " ops=" << c.numOps << " collectives=" << r.collectives
                 << (r.ranThreads ? " threads" : "")
                 << " max_rel_err=" << r.worstRel
                 << (r.failed ? " FAILED" : " ok") << "\n";
  if (!r.failed)
    return;
  ++stats.failedCases;
  std::string path;
  writeReproducer(c, caseSeed, n, path);
  llvm::outs() << "FAILED case " << n << " (seed " << baseSeed << ", case seed "
               << caseSeed << ", " << shardc::stringifyProgramKind(c.kind)
               << "): " << r.reason << "\n";
  if (!log.text.empty())
    llvm::outs() << "diagnostics:\n" << log.text;
  llvm::outs() << "reproducer: " << path << "\n";
}

void printSummary(const RunStats &stats, double secs) {
  if (verbose || stats.invalid)
    llvm::outs() << "difftest: " << stats.invalid
                 << " generated modules were invalid and regenerated\n";
  llvm::outs() << "difftest: kinds:";
  for (shardc::ProgramKind k :
       {shardc::ProgramKind::Forward, shardc::ProgramKind::Autodiff,
        shardc::ProgramKind::TrainStep, shardc::ProgramKind::GlobalCollective})
    llvm::outs() << " " << shardc::stringifyProgramKind(k) << "="
                 << (stats.kinds.count(k) ? stats.kinds.at(k) : 0);
  llvm::outs() << ", on threads too: " << stats.onThreads << "\n";
  if (verbose)
    llvm::outs() << llvm::format("difftest: %.2fs\n", secs);
  llvm::outs() << "difftest: " << stats.maxReductions
               << " all_reduce max after a split reduce_max, "
               << stats.linearOnSummands
               << " elementwise ops on pending sums\n";
  llvm::outs() << "difftest: " << stats.unevenCases
               << " cases with uneven dims (" << stats.unevenShardings
               << " annotations split a dim unevenly)\n";
  llvm::outs() << "difftest: " << stats.ran << " cases, " << stats.collectives
               << " collectives inserted, " << stats.failedCases << " failed\n";
  llvm::outs() << (stats.ran - stats.failedCases) << " passed, "
               << stats.failedCases << " failed\n";
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(difftestCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "shardc differential tester: random programs "
                              "through propagate + partition + simulate\n");

  DialectRegistry registry;
  registry.insert<shardc::ShardcDialect, func::FuncDialect>();
  shardc::registerKernelModels(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  // Cases are tiny; a thread pool would only add overhead.
  ctx.disableMultithreading();
  shardc::DiagnosticLog log;
  auto handler = logDiagnostics(ctx, log);

  shardc::GeneratorOptions options;
  options.nonFinite = nonFinite;
  options.threadsFraction = threadsFraction;
  options.unevenFraction = unevenFraction;

  auto start = std::chrono::steady_clock::now();
  RunStats stats;
  shardc::OpCatalog catalog(ctx);
  int64_t first = onlyCase >= 0 ? onlyCase.getValue() : 0;
  int64_t last = onlyCase >= 0 ? onlyCase + 1 : numCases.getValue();
  for (int64_t n = first; n < last; ++n) {
    uint64_t caseSeed = 0;
    shardc::GeneratedCase c =
        generateValidCase(ctx, n, options, log, stats, caseSeed);
    if (listOps) {
      catalog.count(*c.module);
      continue;
    }
    if (printCases) {
      llvm::outs() << describeCase(c, caseSeed, n);
      c.module.get()->print(llvm::outs());
    }
    checkCase(c, caseSeed, n, log, stats);
  }
  if (listOps)
    return catalog.print(llvm::outs()) ? 0 : 1;
  printSummary(stats, std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count());
  return stats.failedCases ? 1 : 0;
}

//===- shardc.cpp - the shardc command-line driver ------------------------===//
//
// `shardc <subcommand> [options] <model>`; every subcommand lives in its own
// file and reports user errors as diagnostics with exit code 1.
//
//===----------------------------------------------------------------------===//

#include "JobDiagnostics.h"
#include "LongLineExcerpts.h"
#include "SharedOptions.h"
#include "ToolCommon.h"

#include "shardc/Engine/Setup.h"
#include "shardc/Import/ModelDiagnostics.h"
#include "shardc/Import/ModelLoader.h"
#include "shardc/Import/ShardingPlan.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <malloc.h>

using namespace mlir;
namespace cl = llvm::cl;

namespace shardc {
cl::SubCommand compileCommand(
    "compile",
    "Import a model, run passes on it, print it.\n\n"
    "  example: shardc compile examples/mlp_2d_mesh.json --emit=mlir\n"
    "           shardc compile model.mlir "
    "--pass-pipeline='builtin.module(canonicalize)' -o out.json\n");
cl::SubCommand
    runCommand("run",
               "Execute the unsharded model with the reference interpreter.\n\n"
               "  example: shardc run examples/mlp_2d_mesh.json --inputs "
               "x=x.npy w0=w0.npy w1=w1.npy --out-dir out\n"
               "           shardc run examples/mlp_2d_mesh.json --seed 0 "
               "--out-dir out   (missing inputs are random)\n");
cl::SubCommand simulateCommand(
    "simulate",
    "Propagate, partition, and run the SPMD program on a simulated mesh;\n"
    "compare with the unsharded program and report bytes, memory and time.\n\n"
    "  example: shardc simulate examples/mlp_2d_mesh.json --seed 0 "
    "--report-json report.json --trace trace.json\n");
cl::SubCommand explainCommand(
    "explain",
    "Print each value's sharding, where it came from, and the reshards the\n"
    "partitioner will insert with their bytes.\n\n"
    "  example: shardc explain examples/megatron_mlp.json\n"
    "           shardc explain examples/mlp_2d_mesh.json --show-layout h\n");
cl::SubCommand execCommand(
    "exec",
    "Compile the model into a sharded engine and run its forward pass on a\n"
    "backend (sim, threads, or mpi under mpirun); check it against the\n"
    "unsharded program.\n\n"
    "  example: shardc exec examples/mlp_2d_mesh.json --backend threads "
    "--seed 0\n"
    "           mpirun -n 8 shardc exec examples/mlp_2d_mesh.json --backend "
    "mpi --seed 0\n");
cl::SubCommand trainCommand(
    "train",
    "Train a model whose first output is a scalar loss: autodiff, shard,\n"
    "run the steps on a backend, and check the final parameters against\n"
    "the same steps run unsharded.\n\n"
    "  example: shardc train examples/mlp_train.json --backend threads "
    "--steps 50\n");
cl::SubCommand pipelineCommand(
    "pipeline",
    "Run one training step pipelined over a mesh axis: stages, micro-batches\n"
    "and a GPipe or 1F1B schedule, on a backend; check the parameters after\n"
    "the step against the unsharded full-batch SGD step.\n\n"
    "  example: shardc pipeline examples/mlp8_pipeline.json --pipeline-axis "
    "pipe --microbatches 8 --schedule 1f1b --seed 0\n");
cl::SubCommand estimateCommand(
    "estimate",
    "Estimate a training step on a machine without running it: memory per\n"
    "device by role, step time, FLOP/s and MFU (docs/estimate.md).\n\n"
    "  example: shardc estimate examples/gpt_tiny.json --machine "
    "machines/dgx-a100-80gb.json --precision=bf16-mixed\n");
} // namespace shardc

static cl::OptionCategory sharedCategory("Input options");

static cl::opt<std::string>
    inputPath(cl::Positional, cl::desc("<model.mlir|model.json|model.onnx|->"),
              cl::sub(shardc::compileCommand), cl::sub(shardc::runCommand),
              cl::sub(shardc::simulateCommand), cl::sub(shardc::explainCommand),
              cl::sub(shardc::execCommand), cl::sub(shardc::trainCommand),
              cl::sub(shardc::pipelineCommand),
              cl::sub(shardc::estimateCommand));

static cl::opt<std::string>
    inputFormat("input-format",
                cl::desc("Format of the input: mlir, json or onnx (default: by "
                         "extension; required for stdin)"),
                cl::init(""), cl::cat(sharedCategory),
                cl::sub(shardc::compileCommand), cl::sub(shardc::runCommand),
                cl::sub(shardc::simulateCommand),
                cl::sub(shardc::explainCommand), cl::sub(shardc::execCommand),
                cl::sub(shardc::trainCommand), cl::sub(shardc::pipelineCommand),
                cl::sub(shardc::estimateCommand));

static cl::list<std::string> bufferNames(
    "buffers",
    cl::desc("Float initializers of an .onnx model that are buffers "
             "(torch's register_buffer): constants, not trained, not read "
             "from or written to checkpoints; names or plan patterns "
             "(layers.*.rope) (docs/onnx.md#buffers)"),
    cl::CommaSeparated, cl::value_desc("name,..."), cl::cat(sharedCategory),
    cl::sub(shardc::compileCommand), cl::sub(shardc::runCommand),
    cl::sub(shardc::simulateCommand), cl::sub(shardc::explainCommand),
    cl::sub(shardc::execCommand), cl::sub(shardc::trainCommand),
    cl::sub(shardc::pipelineCommand), cl::sub(shardc::estimateCommand));

static cl::opt<std::string> planPath(
    "plan",
    cl::desc("A sharding plan (docs/plans.md): a mesh and name patterns "
             "with their PartitionSpecs, applied before propagation"),
    cl::init(""), cl::cat(sharedCategory), cl::sub(shardc::compileCommand),
    cl::sub(shardc::runCommand), cl::sub(shardc::simulateCommand),
    cl::sub(shardc::explainCommand), cl::sub(shardc::execCommand),
    cl::sub(shardc::trainCommand), cl::sub(shardc::estimateCommand));

const std::string &shardc::getInputPath() { return inputPath; }
const std::string &shardc::getInputFormat() { return inputFormat; }
const std::string &shardc::getPlanPath() { return planPath; }
llvm::ArrayRef<std::string> shardc::getBufferNames() { return bufferNames; }

struct shardc::ToolSession::Handler {
  Handler(llvm::SourceMgr &mgr, MLIRContext *ctx)
      : diag(mgr, ctx, llvm::errs()), longLines(mgr, ctx, diag, llvm::errs()) {
  }
  ModelDiagnosticHandler diag;
  // Registered second, so it sees each diagnostic first.
  shardc::LongLineDiagnosticHandler longLines;
};

shardc::ToolSession::ToolSession() {
  shardc::setUpContext(context);
  context.disableMultithreading();
  handler = std::make_unique<Handler>(sourceMgr, &context);
}

shardc::ToolSession::~ToolSession() = default;

OwningOpRef<ModuleOp>
shardc::ToolSession::loadInputModel(func::FuncOp *entry,
                                    bool expandComposites) {
  if (inputPath.empty()) {
    llvm::errs() << "shardc: error: no input model given (a .mlir, .json or "
                    ".onnx path, or - for stdin)\n";
    return nullptr;
  }
  auto format = resolveModelFormat(inputPath, inputFormat);
  if (!format) {
    llvm::errs() << "shardc: error: " << llvm::toString(format.takeError())
                 << "\n";
    return nullptr;
  }
  OwningOpRef<ModuleOp> module =
      loadModel(inputPath, *format, sourceMgr, &context,
                OnnxImportOptions{{bufferNames.begin(), bufferNames.end()}});
  // Every command works on a model's function: a file without one is an
  // error, not an empty success.
  if (!module)
    return nullptr;
  if (!planPath.empty()) {
    llvm::Expected<ShardingPlan> plan = readShardingPlan(planPath);
    llvm::Error applied =
        plan ? applyShardingPlan(*module, *plan, planPath) : plan.takeError();
    if (applied) {
      llvm::errs() << "shardc: error: " << llvm::toString(std::move(applied))
                   << "\n";
      return nullptr;
    }
  }
  func::FuncOp func = getEntryFunction(*module);
  if (!func)
    return nullptr;
  if (expandComposites) {
    // The composites with a gradient rule of their own stay until the
    // training pipeline has differentiated them (docs/autodiff.md);
    // applyAutodiff and the pipelines expand them before anything runs.
    PassManager pm(&context, ModuleOp::getOperationName());
    shardc::ShardcDecomposeOptions keepDifferentiable;
    keepDifferentiable.keepDifferentiable = true;
    pm.addPass(shardc::createShardcDecompose(keepDifferentiable));
    if (failed(pm.run(*module)))
      return nullptr;
  }
  if (entry)
    *entry = func;
  return module;
}

/// `--inputs a=x.npy b=y.npy` (space separated, as users type it) becomes
/// `--inputs=a=x.npy --inputs=b=y.npy`, which the option parser understands.
static std::vector<std::string> expandInputsLists(int argc, char **argv) {
  std::vector<std::string> out;
  for (int i = 0; i < argc; ++i) {
    StringRef arg(argv[i]);
    if (arg != "--inputs" && arg != "-inputs") {
      out.push_back(arg.str());
      continue;
    }
    int j = i + 1;
    for (; j < argc && !StringRef(argv[j]).starts_with("-") &&
           StringRef(argv[j]).contains('=');
         ++j)
      out.push_back("--inputs=" + std::string(argv[j]));
    if (j == i + 1)
      out.push_back(arg.str()); // let the parser report the missing value
    i = j - 1;
  }
  return out;
}

/// LLVM's and MLIR's libraries register a few hundred options of their own
/// (debug counters, IR printing, ...) at the top level. `shardc --help`
/// lists shardc's subcommands and options only; --help-hidden shows them
/// all. shardc's own options belong to its subcommands.
static void hideLibraryOptions() {
  static const llvm::StringRef kept[] = {"help", "help-hidden", "help-list",
                                         "help-list-hidden", "version"};
  for (auto &entry : cl::getRegisteredOptions(cl::SubCommand::getTopLevel()))
    if (!llvm::is_contained(kept, entry.first))
      entry.second->setHiddenFlag(cl::Hidden);
}

static void printVersion(llvm::raw_ostream &os) {
  os << "shardc " << SHARDC_VERSION << "\n"
     << "  built with MLIR " << LLVM_VERSION_STRING << "\n";
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // A compile allocates a few hundred thousand small IR objects and frees
  // few: growing the heap 64 MiB at a time and never trimming it saves a
  // third of the page faults and brk calls (~10% of a large compile's wall
  // time, bench/compile-time.md). glibc's defaults suit long-running servers.
  mallopt(M_TOP_PAD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  shardc::startCapturingJobDiagnostics();
  std::vector<std::string> args = expandInputsLists(argc, argv);
  std::vector<const char *> argPtrs;
  for (const std::string &a : args)
    argPtrs.push_back(a.c_str());

  hideLibraryOptions();
  cl::SetVersionPrinter(printVersion);
  // Given an error stream, the parser returns on a bad command line
  // instead of exiting, so that the ranks of an mpirun job still meet.
  if (!cl::ParseCommandLineOptions(
          static_cast<int>(argPtrs.size()), argPtrs.data(),
          "shardc: a GSPMD-style sharding compiler\n\n"
          "  shardc compile examples/mlp_2d_mesh.json --emit=mlir\n"
          "  shardc run examples/mlp_2d_mesh.json --seed 0 --out-dir out\n"
          "  shardc simulate examples/mlp_2d_mesh.json --seed 0\n"
          "  shardc explain examples/megatron_mlp.json\n"
          "  shardc exec examples/mlp_2d_mesh.json --backend threads --seed 0\n"
          "  shardc train examples/mlp_train.json --backend threads --steps "
          "50\n"
          "  shardc pipeline examples/mlp8_pipeline.json --pipeline-axis pipe "
          "--microbatches 8\n\n"
          "Run `shardc <subcommand> --help` for a subcommand's options.\n",
          &llvm::errs()))
    return shardc::finishJobDiagnostics(1);

  if (shardc::compileCommand)
    return shardc::finishJobDiagnostics(shardc::runCompileCommand());
  if (shardc::runCommand)
    return shardc::finishJobDiagnostics(shardc::runRunCommand());
  if (shardc::simulateCommand)
    return shardc::finishJobDiagnostics(shardc::runSimulateCommand());
  if (shardc::explainCommand)
    return shardc::finishJobDiagnostics(shardc::runExplainCommand());
  if (shardc::execCommand)
    return shardc::finishJobDiagnostics(shardc::runExecCommand());
  if (shardc::trainCommand)
    return shardc::finishJobDiagnostics(shardc::runTrainCommand());
  if (shardc::pipelineCommand)
    return shardc::finishJobDiagnostics(shardc::runPipelineCommand());
  if (shardc::estimateCommand)
    return shardc::finishJobDiagnostics(shardc::runEstimateCommand());
  llvm::errs() << "shardc: error: no subcommand given; see `shardc --help`\n";
  return shardc::finishJobDiagnostics(1);
}

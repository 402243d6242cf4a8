//===- ToolCommon.h - what the shardc subcommands share ---------*- C++ -*-===//

#ifndef SHARDC_TOOLS_TOOLCOMMON_H
#define SHARDC_TOOLS_TOOLCOMMON_H

#include "shardc/Analysis/CostModel.h"
#include "shardc/Dialect/FunctionInterface.h"
#include "shardc/Driver/OutputFile.h"
#include "shardc/Support/Tensor.h"
#include "shardc/Transforms/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"

#include <optional>
#include <string>
#include <vector>

namespace shardc {

/// "[16, 64]".
std::string shapeString(llvm::ArrayRef<int64_t> shape);

/// Every input of `func`, from --inputs files or the --seed generator;
/// reports the first problem by input name (to stderr) and fails. The
/// inputs named in `fedElsewhere` (train --data) get zeros as placeholders.
mlir::FailureOr<llvm::SmallVector<Tensor>>
gatherInputs(mlir::func::FuncOp func,
             llvm::ArrayRef<std::string> fedElsewhere = {});

/// --seed (0 when absent).
uint64_t getSeed();

/// True if --autodiff or --train-step was given (compile, run, simulate,
/// explain and exec take them).
bool isAutodiffRequested();

/// --precision (train and --train-step), checked: "f32", "bf16-mixed" or
/// "f16-mixed"; fails after a diagnostic on any other value.
mlir::FailureOr<std::string> getPrecision();

/// --recompute (train and --train-step), checked: "none", "selective" or
/// "full"; fails after a diagnostic on any other value.
mlir::FailureOr<std::string> getRecompute();

/// --layer-inputs (full recompute's layer inputs), "" when not given.
llvm::StringRef getLayerInputs();

/// The axes of --zero-axes (train and --train-step).
llvm::ArrayRef<std::string> getZeroAxes();

/// The --auto-shard options: none without --auto-shard; fails after a
/// message on a bad --memory-budget or --auto-shard-time-limit, or either
/// without --auto-shard.
mlir::FailureOr<std::optional<ShardcAutoShardOptions>> getAutoShardOptions();

/// The machine --machine, --link-latency, --link-bandwidth and --flops
/// describe (the alpha-beta preset by default); fails after a message.
mlir::FailureOr<MachineModel> getCommandMachine();

/// Makes the partition passes in `pm` price on that machine (the
/// auto-sharder gets it through getAutoShardOptions); fails after a
/// message.
mlir::LogicalResult priceOnCommandMachine(mlir::OpPassManager &pm);

/// Adds the autodiff pipeline to `pm` when --autodiff was given, with the
/// arguments it names (`--autodiff=w0,w1`; plain `--autodiff` takes the
/// shardc.param inputs, else all), or the train pipeline when --train-step
/// was, each with `propagateFirst` and followed by `then`; without either,
/// just `then`. With --auto-shard, the plan is made before `then` (or
/// written alone when `then` is None). Fails after a message on conflicting
/// options.
mlir::LogicalResult addCommandPipeline(mlir::OpPassManager &pm,
                                       bool propagateFirst, ShardingStage then,
                                       bool explain);

/// Runs the autodiff or train pipeline (with no sharding after it) on
/// `module` when --autodiff or --train-step was given; fails after a
/// diagnostic.
mlir::LogicalResult applyAutodiff(mlir::ModuleOp module, bool propagateFirst);

class ToolSession;

/// The global program `simulate` and `explain` work on: the model named on
/// the command line, its composites expanded, then made the backward pass
/// or the training step that --autodiff, --train-step and --zero-axes ask
/// for (propagated first, unless --auto-shard plans it afterwards). Null
/// after a diagnostic, also for a program partitioned already. `entry` gets
/// the entry function when given; `beforeDifferentiating`, when given, sees
/// the model as loaded (explain reads its propagation remarks there).
mlir::OwningOpRef<mlir::ModuleOp>
loadGlobalProgram(ToolSession &session, llvm::StringRef command,
                  mlir::func::FuncOp *entry = nullptr,
                  llvm::function_ref<mlir::LogicalResult(mlir::ModuleOp)>
                      beforeDifferentiating = {});

/// Subcommand entry points; each returns the process exit code.
int runCompileCommand();
int runRunCommand();
int runSimulateCommand();
int runExplainCommand();
int runExecCommand();
int runTrainCommand();
/// shardc pipeline (PipelineCommand.cpp).
int runPipelineCommand();
/// shardc estimate (EstimateCommand.cpp).
int runEstimateCommand();

/// Whether `name` got its value from a file, --inputs or --checkpoint (else
/// it was generated); gatherInputs decides it.
bool isInputGivenByFile(llvm::StringRef name);

extern llvm::cl::SubCommand compileCommand;
extern llvm::cl::SubCommand runCommand;
extern llvm::cl::SubCommand simulateCommand;
extern llvm::cl::SubCommand explainCommand;
extern llvm::cl::SubCommand execCommand;
extern llvm::cl::SubCommand trainCommand;
extern llvm::cl::SubCommand pipelineCommand;
extern llvm::cl::SubCommand estimateCommand;

} // namespace shardc

#endif // SHARDC_TOOLS_TOOLCOMMON_H

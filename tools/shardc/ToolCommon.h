//===- ToolCommon.h - what the shardc subcommands share ---------*- C++ -*-===//

#ifndef SHARDC_TOOLS_TOOLCOMMON_H
#define SHARDC_TOOLS_TOOLCOMMON_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "shardc/Support/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"

#include <string>
#include <vector>

namespace shardc {

/// The function a command works on: @main, or the module's only function.
/// Emits an error and returns null when there is no such function.
mlir::func::FuncOp getEntryFunction(mlir::ModuleOp module);

/// The user-facing name of input `i` (its shardc.name, its SSA name, or
/// "arg<i>").
std::string getInputName(mlir::func::FuncOp func, unsigned i);

/// The names outputs are written under: the name of the returned value,
/// made unique ("z", "z_1"), or "output<i>" for unnamed values.
std::vector<std::string> getOutputNames(mlir::func::FuncOp func);

/// "[16, 64]".
std::string shapeString(llvm::ArrayRef<int64_t> shape);

/// Every input of `func`, from --inputs files or the --seed generator;
/// reports the first problem by input name (to stderr) and fails.
mlir::FailureOr<llvm::SmallVector<Tensor>>
gatherInputs(mlir::func::FuncOp func);

/// True if --autodiff was given (compile, run and simulate take it).
bool isAutodiffRequested();

/// Adds --shardc-autodiff to `pm` when --autodiff was given, with the
/// arguments it names (`--autodiff=w0,w1`; plain `--autodiff` takes the
/// shardc.param inputs, else all). With `propagateFirst`, sharding
/// propagation runs before it, so that every cotangent is laid out like its
/// forward value (a program about to be sharded wants that).
void addAutodiffPass(mlir::PassManager &pm, bool propagateFirst);

/// Runs addAutodiffPass's passes on `module` when --autodiff was given;
/// fails after a diagnostic.
mlir::LogicalResult applyAutodiff(mlir::ModuleOp module, bool propagateFirst);

/// Adds propagation (and partitioning) to `pm`.
void addShardingPipeline(mlir::PassManager &pm, bool partition, bool explain);

/// Subcommand entry points; each returns the process exit code.
int runCompileCommand();
int runRunCommand();
int runSimulateCommand();
int runExplainCommand();

extern llvm::cl::SubCommand compileCommand;
extern llvm::cl::SubCommand runCommand;
extern llvm::cl::SubCommand simulateCommand;
extern llvm::cl::SubCommand explainCommand;

} // namespace shardc

#endif // SHARDC_TOOLS_TOOLCOMMON_H

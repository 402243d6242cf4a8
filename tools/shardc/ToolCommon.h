//===- ToolCommon.h - what the shardc subcommands share ---------*- C++ -*-===//

#ifndef SHARDC_TOOLS_TOOLCOMMON_H
#define SHARDC_TOOLS_TOOLCOMMON_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
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

/// Subcommand entry points; each returns the process exit code.
int runCompileCommand();
int runRunCommand();

extern llvm::cl::SubCommand compileCommand;
extern llvm::cl::SubCommand runCommand;

} // namespace shardc

#endif // SHARDC_TOOLS_TOOLCOMMON_H

//===- RunCommand.cpp - `shardc run` --------------------------------------===//
//
// Executes the unsharded model with the reference interpreter: inputs from
// .npy files or a seeded generator, one <output name>.npy per output.
//
//===----------------------------------------------------------------------===//

#include "SharedOptions.h"
#include "ToolCommon.h"
#include "shardc/Driver/ReferenceCheck.h"

#include "shardc/Dialect/ValueNames.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Support/Npy.h"
#include "shardc/Support/RandomTensor.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> outDir("out-dir",
                                   cl::desc("Directory for <output>.npy files"),
                                   cl::init("."), cl::sub(shardc::runCommand));

int shardc::runRunCommand() {
  ToolSession session;
  func::FuncOp func;
  OwningOpRef<ModuleOp> module =
      session.loadInputModel(&func, /*expandComposites=*/true);
  if (!module || failed(applyAutodiff(*module, /*propagateFirst=*/false)))
    return 1;
  FailureOr<SmallVector<Tensor>> args = gatherInputs(func);
  if (failed(args))
    return 1;
  FailureOr<SmallVector<Tensor>> results = interpretFunction(func, *args);
  if (failed(results))
    return 1;
  if (std::error_code ec =
          llvm::sys::fs::create_directories(outDir.getValue())) {
    llvm::errs() << "shardc: error: cannot create '" << outDir
                 << "': " << ec.message() << "\n";
    return 1;
  }
  std::vector<std::string> names = getResultNames(func);
  for (auto [name, tensor] : llvm::zip(names, *results)) {
    SmallString<128> path(outDir.getValue());
    llvm::sys::path::append(path, name + ".npy");
    if (llvm::Error err = writeNpy(path, tensor)) {
      llvm::errs() << "shardc: error: " << llvm::toString(std::move(err))
                   << "\n";
      return 1;
    }
    llvm::outs() << "wrote " << path << " " << shapeString(tensor.getShape())
                 << "\n";
  }
  // NaN and infinities are the model's to compute: a warning, not an error.
  warnAboutNonFiniteOutputs(func, *args, *results, names);
  return 0;
}

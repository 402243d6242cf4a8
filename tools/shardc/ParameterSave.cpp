//===- ParameterSave.cpp - `--save` of simulate and exec ------------------===//

#include "ParameterSave.h"

#include "ToolCommon.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Export/CheckpointWriter.h"

#include "llvm/Support/CommandLine.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> savePath(
    "save",
    cl::desc("Write the model's parameters (after the step, with "
             "--train-step) to a checkpoint: .npz (np.load) or .safetensors"),
    cl::value_desc("file"), cl::init(""), cl::sub(shardc::simulateCommand),
    cl::sub(shardc::execCommand));

LogicalResult shardc::saveParametersIfAsked(func::FuncOp func,
                                            ArrayRef<Tensor> args,
                                            ArrayRef<Tensor> results) {
  if (savePath.empty())
    return success();
  // A training step returns each parameter's next value, marked with its
  // name.
  llvm::StringMap<unsigned> next;
  for (unsigned r = 0; r < func.getNumResults(); ++r)
    if (auto name = func.getResultAttrOfType<StringAttr>(
            r, ShardcDialect::getNextAttrName()))
      next[name.getValue()] = r;
  std::map<std::string, Tensor> params;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (!func.getArgAttr(i, ShardcDialect::getParamAttrName()))
      continue;
    std::string name = getArgumentName(func, i);
    auto it = next.find(name);
    Tensor t = (it != next.end() ? results[it->second] : args[i]).clone();
    if (llvm::Error e = t.reshape(getCheckpointShape(func, i))) {
      llvm::errs() << "shardc: error: parameter '" << name
                   << "': " << llvm::toString(std::move(e)) << "\n";
      return failure();
    }
    params.emplace(std::move(name), std::move(t));
  }
  if (params.empty()) {
    llvm::errs() << "shardc: error: --save: the model has no parameters "
                    "(inputs marked param) to write\n";
    return failure();
  }
  if (llvm::Error e = writeCheckpoint(savePath, params)) {
    llvm::errs() << "shardc: error: " << llvm::toString(std::move(e)) << "\n";
    return failure();
  }
  llvm::outs() << "wrote " << params.size() << " parameters to " << savePath
               << "\n";
  return success();
}

//===- ToolCommon.cpp - what the shardc subcommands share -----------------===//

#include "ToolCommon.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Transforms/Passes.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> autodiff(
    "autodiff",
    cl::desc("First rewrite the model into its backward pass "
             "(--shardc-autodiff): outputs, then the gradient of each input "
             "named (--autodiff=w0,w1), else of each \"param\" input, else "
             "of all; one cotangent input <output>.grad per output"),
    cl::ValueOptional, cl::value_desc("input,..."), cl::init(""),
    cl::sub(shardc::compileCommand), cl::sub(shardc::runCommand),
    cl::sub(shardc::simulateCommand), cl::sub(shardc::execCommand));

bool shardc::isAutodiffRequested() { return autodiff.getNumOccurrences() > 0; }

void shardc::addAutodiffPass(PassManager &pm, bool propagateFirst) {
  if (!isAutodiffRequested())
    return;
  if (propagateFirst)
    pm.addPass(createShardcPropagate());
  ShardcAutodiffOptions options;
  SmallVector<StringRef> names;
  StringRef(autodiff).split(names, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef name : names)
    options.wrt.push_back(name.trim().str());
  pm.addPass(createShardcAutodiff(options));
}

LogicalResult shardc::applyAutodiff(ModuleOp module, bool propagateFirst) {
  if (!isAutodiffRequested())
    return success();
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  addAutodiffPass(pm, propagateFirst);
  return pm.run(module);
}

//===- shardc-opt.cpp - the mlir-opt of shardc, for lit tests -------------===//
//
// MlirOptMain, with one addition: a text input nested deeper than
// kMaxMlirNestingDepth is rejected before MLIR's recursive parser can
// overflow the stack on it (`shardc` checks its inputs the same way).
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Interpreter/Kernels.h"
#include "shardc/Support/NestingDepth.h"
#include "shardc/Transforms/Passes.h"
#include "shardc/Transforms/Pipelines.h"

#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::DialectRegistry registry;
  registry.insert<shardc::ShardcDialect, mlir::func::FuncDialect>();
  shardc::registerKernelModels(registry);
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  shardc::registerShardcPasses();
  shardc::registerShardcPipelines();
  auto [inputPath, outputPath] = mlir::registerAndParseCLIOptions(
      argc, argv, "shardc optimizer driver\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  // These print and return without reading any input.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(mlir::MlirOptMain(
        llvm::outs(), llvm::MemoryBuffer::getMemBuffer(""), registry, config));

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputPath, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (!mlir::isBytecode(*input)) {
    if (std::optional<size_t> at = shardc::findExcessNesting(
            input->getBuffer(), shardc::kMaxMlirNestingDepth,
            shardc::NestingSyntax::Mlir)) {
      llvm::SourceMgr sourceMgr;
      const char *where = input->getBufferStart() + *at;
      sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
      sourceMgr.PrintMessage(
          llvm::SMLoc::getFromPointer(where), llvm::SourceMgr::DK_Error,
          "nesting deeper than " + llvm::Twine(shardc::kMaxMlirNestingDepth) +
              " levels (of brackets, braces, parentheses and angle brackets)");
      return 1;
    }
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputPath, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}

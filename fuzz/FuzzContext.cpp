//===- FuzzContext.cpp - the MLIR context the fuzz harnesses share --------===//

#include "FuzzContext.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"

#include <memory>

using namespace mlir;

namespace {
struct FuzzContext {
  FuzzContext() {
    // The dialects of shardc::setUpContext (shardc/Engine/Setup.h), which
    // the tool calls; the pipeline needs no kernels.
    DialectRegistry registry;
    registry.insert<shardc::ShardcDialect, func::FuncDialect>();
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    context.disableMultithreading();
    context.getDiagEngine().registerHandler(
        [](Diagnostic &) { return success(); });
  }
  MLIRContext context;
};
} // namespace

MLIRContext &shardc::fuzz::nextFuzzContext() {
  constexpr unsigned inputsPerContext = 500;
  static std::unique_ptr<FuzzContext> current;
  static unsigned uses = 0;
  if (!current || ++uses == inputsPerContext) {
    current.reset();
    current = std::make_unique<FuzzContext>();
    uses = 0;
  }
  return current->context;
}

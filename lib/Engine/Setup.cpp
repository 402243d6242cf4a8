//===- Setup.cpp - one call that makes a context ready for shardc ---------===//

#include "shardc/Engine/Setup.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Interpreter/Kernels.h"
#include "shardc/Transforms/Passes.h"
#include "shardc/Transforms/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Transforms/Passes.h"

#include <mutex>

void shardc::registerShardcDialects(mlir::DialectRegistry &registry) {
  registry.insert<ShardcDialect, mlir::func::FuncDialect>();
  registerKernelModels(registry);
}

void shardc::registerShardcPassesAndPipelines() {
  // The pass registry is global and rejects a second registration of a
  // pipeline name, while embedders may set up many contexts.
  static std::once_flag once;
  std::call_once(once, [] {
    registerShardcPasses();
    registerShardcPipelines();
    mlir::registerCanonicalizerPass();
    mlir::registerCSEPass();
  });
}

void shardc::setUpContext(mlir::MLIRContext &context) {
  mlir::DialectRegistry registry;
  registerShardcDialects(registry);
  registerShardcPassesAndPipelines();
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  // The diagnostics of these contexts are read by users: an error emitted
  // on an op names the value and the place, and the op's IR dumped after it
  // ("see current operation:") is text they never wrote. shardc-opt, the
  // tool for working on passes, keeps MLIR's default.
  context.printOpOnDiagnostic(false);
}

//===- RuntimeTestUtils.h - what the runtime tests share --------*- C++ -*-===//

#ifndef SHARDC_UNITTESTS_RUNTIME_RUNTIMETESTUTILS_H
#define SHARDC_UNITTESTS_RUNTIME_RUNTIMETESTUTILS_H

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Interpreter/Kernels.h"
#include "shardc/Runtime/ThreadsBackend.h"
#include "shardc/Support/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <string>

namespace shardc::testing {

/// A context with the shardc and func dialects whose diagnostics (those the
/// threads backend re-emits on the calling thread) are recorded, in order.
class RuntimeTestBase : public ::testing::Test {
protected:
  RuntimeTestBase()
      : handler(&context, [this](mlir::Diagnostic &diag) {
          bool isError = diag.getSeverity() == mlir::DiagnosticSeverity::Error;
          diagnostics += (isError ? "error: " : "") + diag.str() + "\n";
          return mlir::success();
        }) {
    context.loadDialect<ShardcDialect, mlir::func::FuncDialect>();
    shardc::registerKernelModels(context);
  }

  /// Every wait is bounded, so a bug fails the test instead of hanging it.
  static ThreadsOptions testOptions() {
    ThreadsOptions options;
    options.timeoutSeconds = 60;
    return options;
  }

  mlir::OwningOpRef<mlir::ModuleOp> parse(llvm::StringRef text) {
    auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    EXPECT_TRUE(module) << diagnostics;
    return module;
  }

  mlir::MLIRContext context;
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace shardc::testing

#endif // SHARDC_UNITTESTS_RUNTIME_RUNTIMETESTUTILS_H

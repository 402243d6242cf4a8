//===- TestHelpers.h - parsing snippets, diagnostics ------------*- C++ -*-===//

#ifndef SHARDC_UNITTESTS_INTERPRETER_TESTHELPERS_H
#define SHARDC_UNITTESTS_INTERPRETER_TESTHELPERS_H

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Interpreter/Kernels.h"
#include "shardc/Support/RandomTensor.h"
#include "shardc/Support/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <string>

namespace shardc::testing {

/// "tensor<3x4xf32>", "tensor<f32>".
inline std::string tensorType(llvm::ArrayRef<int64_t> shape,
                              llvm::StringRef element = "f32") {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + element.str() + ">";
}

/// A context with the shardc and func dialects, which records every error
/// message instead of printing it.
class InterpreterTestBase : public ::testing::Test {
protected:
  InterpreterTestBase()
      : handler(&context, [this](mlir::Diagnostic &diag) {
          bool isError = diag.getSeverity() == mlir::DiagnosticSeverity::Error;
          diagnostics += (isError ? "error: " : "") + diag.str() + "\n";
          return mlir::success();
        }) {
    context.loadDialect<ShardcDialect, mlir::func::FuncDialect>();
    shardc::registerKernelModels(context);
  }

  /// Parses (and verifies) `text`; fails the test if it does not parse.
  mlir::OwningOpRef<mlir::ModuleOp> parse(llvm::StringRef text) {
    auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    EXPECT_TRUE(module) << "could not parse:\n"
                        << text.str() << "\n"
                        << diagnostics;
    return module;
  }

  /// Parses `text` without running the verifier: for IR that only a
  /// hostile or buggy producer would hand the interpreter.
  mlir::OwningOpRef<mlir::ModuleOp> parseUnverified(llvm::StringRef text) {
    mlir::ParserConfig config(&context, /*verifyAfterParse=*/false);
    auto module = mlir::parseSourceString<mlir::ModuleOp>(text, config);
    EXPECT_TRUE(module) << diagnostics;
    return module;
  }

  /// The function `name` (default: the first one) of `module`.
  static mlir::func::FuncOp getFunc(mlir::ModuleOp module,
                                    llvm::StringRef name = "") {
    for (auto f : module.getOps<mlir::func::FuncOp>())
      if (name.empty() || f.getSymName() == name)
        return f;
    return {};
  }

  /// The first op of the body of the first function.
  static mlir::Operation *firstOp(mlir::ModuleOp module) {
    mlir::func::FuncOp f = getFunc(module);
    return f ? &f.getBody().front().front() : nullptr;
  }

  mlir::MLIRContext context;
  mlir::ScopedDiagnosticHandler handler;
  std::string diagnostics;
};

/// Uniform values in [lo, hi).
inline Tensor randomIn(llvm::ArrayRef<int64_t> shape, llvm::StringRef name,
                       float lo = -1.0f, float hi = 1.0f) {
  Tensor t = randomTensor(shape, 1234, name);
  for (float &v : t.values())
    v = lo + (v + 1.0f) * 0.5f * (hi - lo);
  return t;
}

/// Row-major linear offset of `index` in `shape`.
inline int64_t linearIndex(llvm::ArrayRef<int64_t> index,
                           llvm::ArrayRef<int64_t> shape) {
  int64_t off = 0;
  for (size_t i = 0; i < shape.size(); ++i)
    off = off * shape[i] + index[i];
  return off;
}

/// Advances `index` over `shape` in row-major order; false after the last.
inline bool nextIndex(llvm::MutableArrayRef<int64_t> index,
                      llvm::ArrayRef<int64_t> shape) {
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (++index[d] < shape[d])
      return true;
    index[d] = 0;
  }
  return false;
}

/// EXPECTs `actual` to match `expected` within a relative tolerance.
inline void expectClose(const Tensor &actual, const Tensor &expected,
                        float rtol = 1e-5f, float atol = 1e-5f,
                        llvm::StringRef what = "") {
  ASSERT_EQ(actual.shape(), expected.shape()) << what.str();
  EXPECT_TRUE(allClose(actual, expected, rtol, atol))
      << what.str() << ": max |difference| "
      << maxAbsDifference(actual, expected);
}

/// Evaluates single ops written as MLIR text.
class KernelTestBase : public InterpreterTestBase {
protected:
  /// Wraps `opText` (which reads %a, %b, ... and has result type `result`)
  /// in a function over `args`, parses it and evaluates the op.
  mlir::FailureOr<Tensor> evalOp(llvm::ArrayRef<const Tensor *> args,
                                 llvm::StringRef opText,
                                 llvm::ArrayRef<int64_t> result,
                                 uint64_t maxBytes = defaultMaxTensorBytes()) {
    std::string text = "shardc.mesh @mesh [\"x\"=2]\nfunc.func @f(";
    for (auto [i, t] : llvm::enumerate(args))
      text += (i ? ", %" : "%") + std::string(1, char('a' + i)) + ": " +
              tensorType(t->shape());
    text += ") -> " + tensorType(result) + " {\n  %r = " + opText.str() +
            "\n  return %r : " + tensorType(result) + "\n}\n";
    modules.push_back(parse(text));
    if (!modules.back())
      return mlir::failure();
    return evaluateTensorOp(firstOp(*modules.back()), args, maxBytes);
  }

  /// Evaluates and fails the test if the kernel fails.
  Tensor mustEval(llvm::ArrayRef<const Tensor *> args, llvm::StringRef opText,
                  llvm::ArrayRef<int64_t> result) {
    mlir::FailureOr<Tensor> t = evalOp(args, opText, result);
    EXPECT_TRUE(mlir::succeeded(t)) << opText.str() << "\n" << diagnostics;
    return mlir::succeeded(t) ? std::move(*t) : Tensor();
  }

  llvm::SmallVector<mlir::OwningOpRef<mlir::ModuleOp>> modules;
};

inline std::string dimList(llvm::ArrayRef<int64_t> dims) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(dims))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

} // namespace shardc::testing

#endif // SHARDC_UNITTESTS_INTERPRETER_TESTHELPERS_H

//===- AutodiffTest.cpp - --shardc-autodiff against finite differences ----===//
//
// For every differentiable op: a small function is differentiated by the
// pass and run by the reference interpreter, and each gradient is compared
// with central finite differences of L(args) = sum_k sum(ct_k * f_k(args))
// computed on the original function. Inputs keep away from kinks (relu,
// max, reduce_max) and from the edges of log/sqrt/rsqrt/div.
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Interpreter/Kernels.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Support/RandomTensor.h"
#include "shardc/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <cmath>
#include <functional>
#include <string>

using namespace mlir;
using namespace shardc;

namespace {

std::string tensorType(ArrayRef<int64_t> shape) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + "f32>";
}

/// Uniform in [lo, hi), from a seed derived from `name`.
Tensor uniform(ArrayRef<int64_t> shape, StringRef name, float lo, float hi) {
  Tensor t = randomTensor(shape, 99, name);
  for (float &v : t.values())
    v = lo + (v + 1.0f) * 0.5f * (hi - lo);
  return t;
}

/// Magnitudes in [lo, hi) with random signs: away from 0 (relu's kink).
Tensor awayFromZero(ArrayRef<int64_t> shape, StringRef name, float lo = 0.2f,
                    float hi = 1.0f) {
  Tensor t = uniform(shape, name, lo, hi);
  Tensor sign = randomTensor(shape, 7, name);
  for (int64_t i = 0; i < t.numElements(); ++i)
    if (sign.data()[i] < 0)
      t.data()[i] = -t.data()[i];
  return t;
}

/// Distinct values at least 0.1 apart, in a scrambled order (no ties for
/// max and reduce_max, even after a finite-difference step).
Tensor spread(ArrayRef<int64_t> shape) {
  Tensor t = uniform(shape, "spread", 0, 1);
  int64_t n = t.numElements();
  for (int64_t i = 0; i < n; ++i)
    t.data()[i] = 0.1f * static_cast<float>((i * 7 + 3) % n) - 0.05f * n;
  return t;
}

class AutodiffTest : public ::testing::Test {
protected:
  AutodiffTest()
      : handler(&ctx, [this](Diagnostic &diag) {
          diagnostics += diag.str() + "\n";
          return success();
        }) {
    ctx.loadDialect<ShardcDialect, func::FuncDialect>();
    shardc::registerKernelModels(ctx);
  }

  OwningOpRef<ModuleOp> parse(StringRef text) {
    auto module = parseSourceString<ModuleOp>(text, &ctx);
    EXPECT_TRUE(module) << text.str() << "\n" << diagnostics;
    return module;
  }

  LogicalResult differentiate(ModuleOp module, ArrayRef<std::string> wrt = {}) {
    PassManager pm(&ctx);
    ShardcAutodiffOptions options;
    options.wrt.assign(wrt.begin(), wrt.end());
    pm.addPass(createShardcAutodiff(options));
    return pm.run(module);
  }

  static func::FuncOp mainOf(ModuleOp module) {
    return *module.getOps<func::FuncOp>().begin();
  }

  /// Wraps `body` (which ends by returning) in `@main(args) -> results`.
  static std::string function(StringRef args, StringRef results,
                              StringRef body) {
    return ("shardc.mesh @mesh [\"x\"=2]\nfunc.func @main(" + args + ") -> (" +
            results + ") {\n" + body + "\n}\n")
        .str();
  }

  /// Differentiates `text` with respect to every argument and checks every
  /// gradient against central differences with step `eps`.
  void checkGradients(const std::string &text, ArrayRef<Tensor> inputs,
                      double eps = 1e-2, double rtol = 1e-2) {
    OwningOpRef<ModuleOp> forward = parse(text);
    OwningOpRef<ModuleOp> backward = parse(text);
    ASSERT_TRUE(forward && backward);
    ASSERT_TRUE(succeeded(differentiate(*backward))) << diagnostics;
    func::FuncOp f = mainOf(*forward), vjp = mainOf(*backward);
    unsigned numArgs = f.getNumArguments(), numResults = f.getNumResults();
    ASSERT_EQ(inputs.size(), numArgs);
    ASSERT_EQ(vjp.getNumArguments(), numArgs + numResults);
    ASSERT_EQ(vjp.getNumResults(), numResults + numArgs);

    SmallVector<Tensor> args;
    for (const Tensor &t : inputs)
      args.push_back(t.clone());
    SmallVector<Tensor> cotangents;
    for (auto [i, type] : llvm::enumerate(f.getResultTypes()))
      cotangents.push_back(uniform(cast<RankedTensorType>(type).getShape(),
                                   "ct" + std::to_string(i), -1, 1));
    SmallVector<Tensor> vjpArgs;
    for (const Tensor &t : args)
      vjpArgs.push_back(t.clone());
    for (const Tensor &t : cotangents)
      vjpArgs.push_back(t.clone());
    FailureOr<SmallVector<Tensor>> got = interpretFunction(vjp, vjpArgs);
    ASSERT_TRUE(succeeded(got)) << diagnostics;

    auto loss = [&]() -> double {
      FailureOr<SmallVector<Tensor>> out = interpretFunction(f, args);
      EXPECT_TRUE(succeeded(out)) << diagnostics;
      if (failed(out))
        return NAN;
      double l = 0;
      for (auto [y, ct] : llvm::zip(*out, cotangents))
        for (int64_t k = 0; k < y.numElements(); ++k)
          l += double(y.data()[k]) * double(ct.data()[k]);
      return l;
    };

    // The forward results are unchanged.
    FailureOr<SmallVector<Tensor>> plain = interpretFunction(f, args);
    ASSERT_TRUE(succeeded(plain));
    for (unsigned r = 0; r < numResults; ++r)
      for (int64_t k = 0; k < (*plain)[r].numElements(); ++k)
        ASSERT_EQ((*got)[r].data()[k], (*plain)[r].data()[k]);

    for (unsigned i = 0; i < numArgs; ++i) {
      const Tensor &grad = (*got)[numResults + i];
      ASSERT_EQ(grad.shape(), args[i].shape()) << "gradient of arg " << i;
      double worst = 0, scale = 0;
      for (int64_t k = 0; k < grad.numElements(); ++k) {
        float saved = args[i].data()[k];
        args[i].data()[k] = saved + static_cast<float>(eps);
        double up = loss();
        args[i].data()[k] = saved - static_cast<float>(eps);
        double down = loss();
        args[i].data()[k] = saved;
        double numeric = (up - down) / (2 * eps);
        worst = std::max(worst, std::abs(numeric - grad.data()[k]));
        scale = std::max(scale, std::abs(numeric));
      }
      EXPECT_LE(worst, rtol * std::max(scale, 1.0))
          << "gradient of arg " << i << " of\n"
          << text << "differs from finite differences by " << worst
          << " (largest component " << scale << ")";
    }
  }

  MLIRContext ctx;
  ScopedDiagnosticHandler handler;
  std::string diagnostics;
};

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

TEST_F(AutodiffTest, UnaryOps) {
  struct UnaryCase {
    const char *op;
    std::function<Tensor()> input;
  };
  std::vector<UnaryCase> cases = {
      {"relu",
       [] {
         return awayFromZero({3, 4}, "relu");
       }},
      {"gelu",
       [] {
         return uniform({3, 4}, "gelu", -3, 3);
       }},
      {"exp",
       [] {
         return uniform({3, 4}, "exp", -1, 1);
       }},
      {"log",
       [] {
         return uniform({3, 4}, "log", 0.5f, 2);
       }},
      {"neg",
       [] {
         return uniform({3, 4}, "neg", -1, 1);
       }},
      {"tanh",
       [] {
         return uniform({3, 4}, "tanh", -2, 2);
       }},
      {"sqrt",
       [] {
         return uniform({3, 4}, "sqrt", 0.5f, 2);
       }},
      {"rsqrt",
       [] {
         return uniform({3, 4}, "rsqrt", 0.5f, 2);
       }},
      {"sigmoid",
       [] {
         return uniform({3, 4}, "sigmoid", -3, 3);
       }},
  };
  for (const UnaryCase &c : cases) {
    SCOPED_TRACE(c.op);
    std::string t = tensorType({3, 4});
    SmallVector<Tensor> in;
    in.push_back(c.input());
    checkGradients(function("%a: " + t, t,
                            "%r = shardc." + std::string(c.op) + " %a : " + t +
                                "\nreturn %r : " + t),
                   in);
  }
}

TEST_F(AutodiffTest, StepHasZeroGradient) {
  // f = a * step(b): d/db is 0 (away from b = 0), d/da is step(b).
  std::string t = tensorType({2, 5});
  SmallVector<Tensor> in;
  in.push_back(uniform({2, 5}, "a", -1, 1));
  in.push_back(awayFromZero({2, 5}, "b"));
  checkGradients(function("%a: " + t + ", %b: " + t, t,
                          "%s = shardc.step %b : " + t +
                              "\n%r = shardc.mul %a, %s : " + t +
                              "\nreturn %r : " + t),
                 in);
}

TEST_F(AutodiffTest, BinaryOps) {
  std::string t = tensorType({3, 4});
  for (const char *op : {"add", "sub", "mul", "div", "max"}) {
    SCOPED_TRACE(op);
    SmallVector<Tensor> in;
    in.push_back(uniform({3, 4}, "lhs", -0.3f, 0.3f));
    // Away from 0 (div), and at least 0.2 from lhs (max's kink).
    Tensor rhs = uniform({3, 4}, "rhs", 0.5f, 2);
    for (int64_t i = 0; i < rhs.numElements(); i += 2)
      rhs.data()[i] = -rhs.data()[i];
    in.push_back(std::move(rhs));
    checkGradients(function("%a: " + t + ", %b: " + t, t,
                            "%r = shardc." + std::string(op) +
                                " %a, %b : " + t + "\nreturn %r : " + t),
                   in);
  }
}

TEST_F(AutodiffTest, MaxSplitsTiesEvenly) {
  // max(a, a) = a: each operand takes half of the cotangent, which adds up
  // to the exact gradient 1.
  std::string t = tensorType({4});
  SmallVector<Tensor> in;
  in.push_back(uniform({4}, "a", -1, 1));
  checkGradients(
      function("%a: " + t, t,
               "%r = shardc.max %a, %a : " + t + "\nreturn %r : " + t),
      in);
}

//===----------------------------------------------------------------------===//
// Contractions and reductions
//===----------------------------------------------------------------------===//

TEST_F(AutodiffTest, Matmul) {
  SmallVector<Tensor> in;
  in.push_back(uniform({3, 4}, "a", -1, 1));
  in.push_back(uniform({4, 5}, "b", -1, 1));
  checkGradients(function("%a: tensor<3x4xf32>, %b: tensor<4x5xf32>",
                          "tensor<3x5xf32>",
                          "%r = shardc.matmul %a, %b : (tensor<3x4xf32>, "
                          "tensor<4x5xf32>) -> tensor<3x5xf32>\n"
                          "return %r : tensor<3x5xf32>"),
                 in);
}

TEST_F(AutodiffTest, BatchedMatmul) {
  SmallVector<Tensor> in;
  in.push_back(uniform({2, 3, 4}, "a", -1, 1));
  in.push_back(uniform({2, 4, 5}, "b", -1, 1));
  checkGradients(function("%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>",
                          "tensor<2x3x5xf32>",
                          "%r = shardc.matmul %a, %b : (tensor<2x3x4xf32>, "
                          "tensor<2x4x5xf32>) -> tensor<2x3x5xf32>\n"
                          "return %r : tensor<2x3x5xf32>"),
                 in);
}

TEST_F(AutodiffTest, DotGeneralAttentionScores) {
  // einsum('bqd,bkd->bqk')
  SmallVector<Tensor> in;
  in.push_back(uniform({2, 3, 4}, "q", -1, 1));
  in.push_back(uniform({2, 5, 4}, "k", -1, 1));
  checkGradients(
      function("%q: tensor<2x3x4xf32>, %k: tensor<2x5x4xf32>",
               "tensor<2x3x5xf32>",
               "%r = shardc.dot_general %q, %k batch = [0] x [0], contract = "
               "[2] x [2] : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> "
               "tensor<2x3x5xf32>\nreturn %r : tensor<2x3x5xf32>"),
      in);
}

TEST_F(AutodiffTest, DotGeneralScrambledDims) {
  // Batch and contracting dims in the middle and at the front, several
  // contracting dims listed out of order: both cotangents need a transpose.
  // lhs [c0=3, b=2, c1=4, m=5], rhs [c1=4, n=3, b=2, c0=3]
  SmallVector<Tensor> in;
  in.push_back(uniform({3, 2, 4, 5}, "lhs", -1, 1));
  in.push_back(uniform({4, 3, 2, 3}, "rhs", -1, 1));
  checkGradients(
      function("%a: tensor<3x2x4x5xf32>, %b: tensor<4x3x2x3xf32>",
               "tensor<2x5x3xf32>",
               "%r = shardc.dot_general %a, %b batch = [1] x [2], contract = "
               "[2, 0] x [0, 3] : (tensor<3x2x4x5xf32>, tensor<4x3x2x3xf32>) "
               "-> tensor<2x5x3xf32>\nreturn %r : tensor<2x5x3xf32>"),
      in);
}

TEST_F(AutodiffTest, ReduceSum) {
  for (const char *dims : {"[1]", "[0, 2]", "[0, 1, 2]"}) {
    SCOPED_TRACE(dims);
    std::string result = std::string(dims) == "[1]"      ? "tensor<3x5xf32>"
                         : std::string(dims) == "[0, 2]" ? "tensor<4xf32>"
                                                         : "tensor<f32>";
    SmallVector<Tensor> in;
    in.push_back(uniform({3, 4, 5}, "a", -1, 1));
    checkGradients(
        function("%a: tensor<3x4x5xf32>", result,
                 "%r = shardc.reduce_sum %a dims = " + std::string(dims) +
                     " : (tensor<3x4x5xf32>) -> " + result +
                     "\nreturn %r : " + result),
        in);
  }
}

TEST_F(AutodiffTest, ReduceMax) {
  SmallVector<Tensor> in;
  in.push_back(spread({3, 4, 2}));
  checkGradients(function("%a: tensor<3x4x2xf32>", "tensor<3x2xf32>",
                          "%r = shardc.reduce_max %a dims = [1] : "
                          "(tensor<3x4x2xf32>) -> tensor<3x2xf32>\n"
                          "return %r : tensor<3x2xf32>"),
                 in, /*eps=*/1e-3);
}

TEST_F(AutodiffTest, ReduceMaxSharesTies) {
  // Two equal maxima of a row share its cotangent: the row's gradient sums
  // to the cotangent, as the derivative of the max along that direction.
  OwningOpRef<ModuleOp> m = parse(
      function("%a: tensor<4xf32>", "tensor<f32>",
               "%r = shardc.reduce_max %a dims = [0] : (tensor<4xf32>) -> "
               "tensor<f32>\nreturn %r : tensor<f32>"));
  ASSERT_TRUE(m && succeeded(differentiate(*m))) << diagnostics;
  SmallVector<Tensor> args;
  args.push_back(
      llvm::cantFail(Tensor::fromValues({4}, {1.0f, 3.0f, 3.0f, -2.0f})));
  args.push_back(Tensor::scalar(2.0f));
  FailureOr<SmallVector<Tensor>> out = interpretFunction(mainOf(*m), args);
  ASSERT_TRUE(succeeded(out)) << diagnostics;
  EXPECT_EQ((*out)[1].values(), ArrayRef<float>({0.0f, 1.0f, 1.0f, 0.0f}));
}

//===----------------------------------------------------------------------===//
// Layout ops, constants, constraints
//===----------------------------------------------------------------------===//

TEST_F(AutodiffTest, Transpose) {
  SmallVector<Tensor> in;
  in.push_back(uniform({2, 3, 4}, "a", -1, 1));
  checkGradients(function("%a: tensor<2x3x4xf32>", "tensor<4x2x3xf32>",
                          "%r = shardc.transpose %a permutation = [2, 0, 1] : "
                          "(tensor<2x3x4xf32>) -> tensor<4x2x3xf32>\n"
                          "return %r : tensor<4x2x3xf32>"),
                 in);
}

TEST_F(AutodiffTest, Reshape) {
  SmallVector<Tensor> in;
  in.push_back(uniform({2, 3, 4}, "a", -1, 1));
  // Squared, so that the gradient depends on where each element goes.
  checkGradients(function("%a: tensor<2x3x4xf32>", "tensor<6x4xf32>",
                          "%s = shardc.mul %a, %a : tensor<2x3x4xf32>\n"
                          "%r = shardc.reshape %s : (tensor<2x3x4xf32>) -> "
                          "tensor<6x4xf32>\nreturn %r : tensor<6x4xf32>"),
                 in);
}

TEST_F(AutodiffTest, BroadcastInDim) {
  {
    SCOPED_TRACE("new dim");
    SmallVector<Tensor> in;
    in.push_back(uniform({4}, "b", -1, 1));
    checkGradients(function("%b: tensor<4xf32>", "tensor<3x4xf32>",
                            "%r = shardc.broadcast_in_dim %b dims = [1] : "
                            "(tensor<4xf32>) -> tensor<3x4xf32>\n"
                            "return %r : tensor<3x4xf32>"),
                   in);
  }
  {
    SCOPED_TRACE("expanded size-1 dim, kept size-1 dim and a new dim");
    SmallVector<Tensor> in;
    in.push_back(uniform({3, 1, 1}, "b", -1, 1));
    checkGradients(function("%b: tensor<3x1x1xf32>", "tensor<3x4x2x1xf32>",
                            "%r = shardc.broadcast_in_dim %b dims = [0, 1, 3] "
                            ": (tensor<3x1x1xf32>) -> tensor<3x4x2x1xf32>\n"
                            "return %r : tensor<3x4x2x1xf32>"),
                   in);
  }
}

TEST_F(AutodiffTest, Constant) {
  // a * c + c: the constant scales the gradient and has none itself.
  std::string t = tensorType({2, 3});
  SmallVector<Tensor> in;
  in.push_back(uniform({2, 3}, "a", -1, 1));
  checkGradients(
      function("%a: " + t, t,
               "%c = shardc.constant dense<[[1.0, -2.0, 3.0], [0.5, 4.0, "
               "-1.5]]> : " +
                   t + "\n%m = shardc.mul %a, %c : " + t +
                   "\n%r = shardc.add %m, %c : " + t + "\nreturn %r : " + t),
      in);
}

TEST_F(AutodiffTest, ShardingConstraint) {
  std::string t = tensorType({4, 2});
  std::string text = function(
      "%a: " + t, t,
      "%c = shardc.sharding_constraint %a <@mesh, [{\"x\"}, {}]> : " + t +
          "\n%r = shardc.mul %c, %c : " + t + "\nreturn %r : " + t);
  SmallVector<Tensor> in;
  in.push_back(uniform({4, 2}, "a", -1, 1));
  checkGradients(text, in);
  // The cotangent is pinned like the value.
  OwningOpRef<ModuleOp> m = parse(text);
  ASSERT_TRUE(m && succeeded(differentiate(*m)));
  int constraints = 0;
  m->walk([&](ShardingConstraintOp op) {
    ++constraints;
    EXPECT_EQ(op.getSharding().getDimAxes(0), (SmallVector<StringRef>{"x"}));
  });
  EXPECT_EQ(constraints, 2);
}

//===----------------------------------------------------------------------===//
// The pass as a whole
//===----------------------------------------------------------------------===//

TEST_F(AutodiffTest, TwoLayerMlp) {
  SmallVector<Tensor> in;
  in.push_back(uniform({4, 3}, "x", -1, 1));
  in.push_back(uniform({3, 5}, "w0", -1, 1));
  in.push_back(uniform({5, 2}, "w1", -1, 1));
  checkGradients(function("%x: tensor<4x3xf32>, %w0: tensor<3x5xf32>, %w1: "
                          "tensor<5x2xf32>",
                          "tensor<4x2xf32>",
                          "%h = shardc.matmul %x, %w0 : (tensor<4x3xf32>, "
                          "tensor<3x5xf32>) -> tensor<4x5xf32>\n"
                          "%u = shardc.gelu %h : tensor<4x5xf32>\n"
                          "%z = shardc.matmul %u, %w1 : (tensor<4x5xf32>, "
                          "tensor<5x2xf32>) -> tensor<4x2xf32>\n"
                          "return %z : tensor<4x2xf32>"),
                 in);
}

TEST_F(AutodiffTest, MultiUseAccumulates) {
  // a feeds three ops, and is returned itself; two results.
  std::string t = tensorType({2, 3});
  SmallVector<Tensor> in;
  in.push_back(uniform({2, 3}, "a", 0.5f, 1.5f));
  in.push_back(uniform({2, 3}, "b", -1, 1));
  checkGradients(
      function("%a: " + t + ", %b: " + t, t + ", " + t + ", " + t,
               "%m = shardc.mul %a, %a : " + t + "\n%e = shardc.exp %a : " + t +
                   "\n%s = shardc.add %m, %e : " + t +
                   "\n%l = shardc.log %a : " + t +
                   "\n%y = shardc.mul %s, %b : " + t +
                   "\nreturn %y, %l, %a : " + t + ", " + t + ", " + t),
      in);
}

TEST_F(AutodiffTest, UnusedParameterGetsZeroGradient) {
  std::string t = tensorType({2, 2});
  OwningOpRef<ModuleOp> m = parse(function(
      "%a: " + t + " {shardc.name = \"a\", shardc.param}, %unused: " + t +
          " {shardc.name = \"unused\", shardc.param}, %data: " + t +
          " {shardc.name = \"data\"}",
      t, "%r = shardc.mul %a, %data : " + t + "\nreturn %r : " + t));
  ASSERT_TRUE(m && succeeded(differentiate(*m))) << diagnostics;
  func::FuncOp f = mainOf(*m);
  // Only the params are differentiated: two gradients.
  ASSERT_EQ(f.getNumResults(), 3u);
  SmallVector<Tensor> args;
  for (StringRef n : {"a", "unused", "data", "ct"})
    args.push_back(uniform({2, 2}, n, -1, 1));
  FailureOr<SmallVector<Tensor>> out = interpretFunction(f, args);
  ASSERT_TRUE(succeeded(out)) << diagnostics;
  for (float v : (*out)[2].values())
    EXPECT_EQ(v, 0.0f);
  EXPECT_TRUE(isa<ConstantOp>(
      f.getBody().front().getTerminator()->getOperand(2).getDefiningOp()));
}

TEST_F(AutodiffTest, WrtSelectsArguments) {
  std::string t = tensorType({2, 2});
  std::string text =
      function("%a: " + t + " {shardc.name = \"a\"}, %b: " + t +
                   " {shardc.name = \"b\"}",
               t, "%r = shardc.mul %a, %b : " + t + "\nreturn %r : " + t);
  OwningOpRef<ModuleOp> m = parse(text);
  ASSERT_TRUE(m && succeeded(differentiate(*m, {"b"}))) << diagnostics;
  func::FuncOp f = mainOf(*m);
  ASSERT_EQ(f.getNumResults(), 2u);
  // d(a*b)/db = a: one mul of the cotangent with a, and no gradient for a.
  Operation *grad =
      f.getBody().front().getTerminator()->getOperand(1).getDefiningOp();
  ASSERT_TRUE(isa_and_present<MulOp>(grad));
  EXPECT_EQ(grad->getOperand(1), f.getArgument(0));
  int ops = 0;
  f.walk([&](MulOp) { ++ops; });
  EXPECT_EQ(ops, 2);
}

TEST_F(AutodiffTest, UnknownWrtNamesAreAnError) {
  std::string t = tensorType({2});
  OwningOpRef<ModuleOp> m =
      parse(function("%a: " + t + " {shardc.name = \"a\"}", t,
                     "%r = shardc.neg %a : " + t + "\nreturn %r : " + t));
  ASSERT_TRUE(m);
  EXPECT_TRUE(failed(differentiate(*m, {"a", "w9", "bias"})));
  EXPECT_NE(diagnostics.find("has no input named 'w9', 'bias' (wrt); its "
                             "inputs are: a"),
            std::string::npos)
      << diagnostics;
}

//===----------------------------------------------------------------------===//
// Composites' own gradient rules
//===----------------------------------------------------------------------===//

/// A composite differentiated by its own rule (then expanded) and its
/// expansion differentiated op by op compute the same gradients, to f32
/// rounding: the rule is the backward pass of a fused kernel, not another
/// function.
class CompositeGradientTest : public AutodiffTest {
protected:
  void checkAgainstExpansion(const std::string &text, ArrayRef<Tensor> inputs) {
    OwningOpRef<ModuleOp> byRule = parse(text);
    OwningOpRef<ModuleOp> byExpansion = parse(text);
    ASSERT_TRUE(byRule && byExpansion);
    {
      PassManager pm(&ctx);
      pm.addPass(createShardcAutodiff());
      pm.addPass(createShardcDecompose());
      ASSERT_TRUE(succeeded(pm.run(*byRule))) << diagnostics;
    }
    {
      PassManager pm(&ctx);
      pm.addPass(createShardcDecompose());
      pm.addPass(createShardcAutodiff());
      ASSERT_TRUE(succeeded(pm.run(*byExpansion))) << diagnostics;
    }
    func::FuncOp rule = mainOf(*byRule), expansion = mainOf(*byExpansion);
    SmallVector<Tensor> args;
    for (const Tensor &t : inputs)
      args.push_back(t.clone());
    for (auto [i, type] : llvm::enumerate(rule.getResultTypes()))
      if (i < rule.getNumResults() - inputs.size())
        args.push_back(uniform(cast<RankedTensorType>(type).getShape(),
                               "ct" + std::to_string(i), -1, 1));
    SmallVector<Tensor> args2;
    for (const Tensor &t : args)
      args2.push_back(t.clone());
    FailureOr<SmallVector<Tensor>> got = interpretFunction(rule, args);
    FailureOr<SmallVector<Tensor>> want = interpretFunction(expansion, args2);
    ASSERT_TRUE(succeeded(got) && succeeded(want)) << diagnostics;
    ASSERT_EQ(got->size(), want->size());
    for (auto [r, pair] : llvm::enumerate(llvm::zip(*got, *want))) {
      auto &[a, b] = pair;
      double worst = 0, scale = 0;
      for (int64_t k = 0; k < a.numElements(); ++k) {
        worst = std::max(worst, std::abs(double(a.data()[k]) - b.data()[k]));
        scale = std::max(scale, std::abs(double(b.data()[k])));
      }
      EXPECT_LE(worst, 1e-5 * std::max(scale, 1.0)) << "result " << r << " of\n"
                                                    << text;
    }
  }
};

TEST_F(CompositeGradientTest, SoftmaxAndLogSoftmax) {
  std::string t = tensorType({3, 5, 4});
  for (StringRef op : {"softmax", "log_softmax"})
    for (int axis : {-1, 1}) {
      SCOPED_TRACE((op + " axis " + Twine(axis)).str());
      checkAgainstExpansion(
          function("%x: " + t, t,
                   ("%y = shardc." + op + " %x axis = " + Twine(axis) + " : " +
                    t + "\nreturn %y : " + t)
                       .str()),
          {spread({3, 5, 4})});
    }
}

TEST_F(CompositeGradientTest, Norms) {
  std::string t = tensorType({4, 6}), row = tensorType({6});
  std::string norm = "%y = shardc.layer_norm %x, %g, %b axes = [-1] epsilon = "
                     "1.0e-05 : (" +
                     t + ", " + row + ", " + row + ") -> " + t;
  checkAgainstExpansion(
      function("%x: " + t + ", %g: " + row + ", %b: " + row, t,
               norm + "\nreturn %y : " + t),
      {spread({4, 6}), uniform({6}, "g", 0.5, 1.5), uniform({6}, "b", -1, 1)});
  std::string rms = "%y = shardc.rms_norm %x, %g axes = [1] epsilon = "
                    "1.0e-06 : (" +
                    t + ", " + row + ") -> " + t;
  checkAgainstExpansion(
      function("%x: " + t + ", %g: " + row, t, rms + "\nreturn %y : " + t),
      {spread({4, 6}), uniform({6}, "g", 0.5, 1.5)});
  // Over two dims, the first not last.
  std::string t3 = tensorType({3, 4, 5}), plane = tensorType({3, 5});
  checkAgainstExpansion(
      function("%x: " + t3 + ", %g: " + plane + ", %b: " + plane, t3,
               "%y = shardc.layer_norm %x, %g, %b axes = [0, 2] epsilon = "
               "1.0e-05 : (" +
                   t3 + ", " + plane + ", " + plane + ") -> " + t3 +
                   "\nreturn %y : " + t3),
      {spread({3, 4, 5}), uniform({3, 5}, "g", 0.5, 1.5),
       uniform({3, 5}, "b", -1, 1)});
}

TEST_F(CompositeGradientTest, Mean) {
  std::string t = tensorType({3, 4, 5}), r = tensorType({4});
  checkAgainstExpansion(function("%x: " + t, r,
                                 "%y = shardc.mean %x dims = [0, -1] : (" + t +
                                     ") -> " + r + "\nreturn %y : " + r),
                        {spread({3, 4, 5})});
}

} // namespace

//===- ElementwiseOps.td - elementwise ops, one line each --*- tablegen -*-===//
//
// Included by ShardcOps.td after the tensor op classes: every unary and
// binary elementwise op, each defined by its ODS entry alone (formula,
// kernel expression, gradient, FLOPs, value domain); lib/Dialect/
// ElementwiseOps.cpp and the interpreter's ElementwiseKernels.cpp serve
// them all.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_ELEMENTWISEOPS_TD
#define SHARDC_DIALECT_ELEMENTWISEOPS_TD

/// An elementwise op defined by its ODS line alone:
/// * `formula`: the documented formula;
/// * `kernel`: a C++ expression over the operand array `x` (or `a`, `b`),
///   instantiated by the interpreter on Eigen arrays;
/// * `gradient`: C++ statements over a `GradientBuilder gb`, the result
///   cotangent `g`, the operand(s) and the result `y` (see the classes);
/// * `flops`: FLOPs per element (the cost);
/// * `exactBelow`, `exactScalar`: when set, elements below `exactBelow` are
///   recomputed with the scalar expression `exactScalar` of `v` (where the
///   vectorized path is inexact, e.g. Eigen's exp below -87.3).
/// The kernel is instantiated in one place, shardc/Dialect/
/// ElementwiseKernel.h: the interpreter runs it on tensors, the op's `fold`
/// on constant operands (the ONNX importer's shape arithmetic, the
/// canonicalizer), so a folded constant has the bits a run would compute.
class Shardc_ElementwiseOp<string mnemonic, Trait arity, string kernelParams,
                           string kernel, string exactBelow, string exactScalar,
                           int flops, bit integers = 0>
    : Shardc_Op<mnemonic, [Pure, SameOperandsAndResultType,
        Shardc_TensorOpTrait, arity,
        Shardc_ShardingRuleOpInterface, Shardc_DifferentiableOpInterface,
        Shardc_CostOpInterface, Shardc_ValueDomainOpInterface]> {
  // Bit masks of operands a pending partial sum passes through jointly
  // (ShardingRuleOpInterface::getPartialSumOperandSets); set with `let` on
  // the ops linear in some operands.
  list<int> partialSumOperandSets = [];
  // Where the op is defined (ValueDomainOpInterface), set with `let` where
  // it differs from the defaults: per operand, a C++ `::shardc::
  // OperandDomain` expression (`positive()`, `nonZero()`, `bounded(m)`;
  // operands past the list: any finite value); whether the result is
  // correctly rounded; where it jumps (`::shardc::Continuity`).
  list<string> operandDomains = [];
  bit correctlyRounded = 0;
  string continuity = "Continuous";
  // The gradient rule as a formula, for the dialect reference: over the
  // result cotangent `g`, the operands and the result `y` (the rule itself
  // is `gradient`, which builds it).
  string gradientFormula = "";
  // With `integers`: the kernel on signed integer arrays `a`, `b`, where
  // the float kernel on wrapping unsigned bits (add, sub, mul) is not the
  // op (div, max, min); and what the reference says of it.
  string integerKernel = "";
  string integerNote = "";
  let hasFolder = 1;
  code foldDefinition = [{
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor adaptor) {
      return ::shardc::foldElementwise(getOperation(), adaptor.getOperands());
    }
  }];
  // The gradient rule is defined out of the class (extraClassDefinition, in
  // ShardcOps.cpp.inc), where every op class is declared: a rule may build
  // another op of the family by its class (`gb.build<CosOp>`).
  code cotangentsDecl = [{
    ::mlir::LogicalResult buildOperandCotangents(
        ::mlir::OpBuilder &builder, ::mlir::Location loc, ::mlir::Value g,
        ::llvm::ArrayRef<bool> wanted,
        ::llvm::SmallVectorImpl<::mlir::Value> &out);
  }];
  code elementwiseDecl = [{
    /// The op's kernel on whole arrays (Eigen arrays in the interpreter).
    template <typename Array>
    static auto computeElements(}] # kernelParams # [{) {
      return }] # kernel # [{;
    }
    /// Whether the kernel also runs on i32 and i64 (index arithmetic,
    /// computed in unsigned arithmetic so that overflow wraps, or by
    /// computeIntegerElements where kHasIntegerKernel).
    static constexpr bool kAcceptsIntegers = }] #
        !if(integers, "true", "false") # [{;
    static constexpr bool kHasIntegerKernel = }] #
        !if(!empty(integerKernel), "false", "true") # [{;
    template <typename Array>
    static auto computeIntegerElements(}] # kernelParams # [{) {
      return }] # !if(!empty(integerKernel), kernel, integerKernel) # [{;
    }
    /// Whether elements below kExactBelow are recomputed by
    /// computeExactElement after computeElements.
    static constexpr bool kHasExactBelow = }] #
        !if(!empty(exactBelow), "false", "true") # [{;
    static constexpr float kExactBelow = }] #
        !if(!empty(exactBelow), "0.0f", exactBelow) # [{;
    static float computeExactElement(float v) {
      return }] # !if(!empty(exactScalar), "v", exactScalar) # [{;
    }
    ::shardc::ShardingRule getShardingRule() {
      return ::shardc::getElementwiseShardingRule(getOperation());
    }
    void getPartialSumOperandSets(::llvm::SmallVectorImpl<unsigned> &sets) {
      sets.append(std::initializer_list<unsigned>{}] #
          !interleave(partialSumOperandSets, ", ") # [{});
    }
    double getFlops(::llvm::ArrayRef<double> factorSizes) {
      return ::shardc::getIterationSpaceFlops(}] # flops # [{, factorSizes);
    }
    static ::shardc::OperandDomain getOperandDomain(unsigned operand) {
      using ::shardc::OperandDomain;
      // The last entry answers for operands past the declared ones.
      const OperandDomain domains[] = {}] #
          !interleave(!listconcat(operandDomains, ["OperandDomain()"]), ", ") #
          [{};
      return domains[std::min<size_t>(operand, std::size(domains) - 1)];
    }
    static bool isCorrectlyRounded() { return }] #
        !if(correctlyRounded, "true", "false") # [{; }
    static ::shardc::Continuity getContinuity() {
      return ::shardc::Continuity::}] # continuity # [{;
    }
  }];
}

class Shardc_UnaryElementwiseOp<string mnemonic, string formula, string kernel,
                                code gradient, int flops = 1,
                                string exactBelow = "", string exactScalar = "">
    : Shardc_ElementwiseOp<mnemonic, Shardc_UnaryElementwiseTrait,
                           "const Array &x", kernel, exactBelow, exactScalar,
                           flops> {
  let summary = "Elementwise " # mnemonic # ": " # formula # ".";
  // What the op computes; the rest of its reference (gradient, sharding
  // rule, JSON spelling) is the family's.
  string opDescription = [{
    Applies `}] # formula # [{` to every element. The result has the operand's
    type.

    ```mlir
    %1 = shardc.}] # mnemonic # [{ %0 : tensor<16x64xf32>
    ```

    Constraints: operand and result types are identical.
  }];
  let description = opDescription # [{
    Gradient (`g` the result's cotangent, `y` the result): }] #
      gradientFormula # [{.

    Sharding rule: `([f0, f1]) -> ([f0, f1])`: each dim is one parallel
    factor of operand and result.

    In a JSON graph: one input; the result has its type.
  }];
  let arguments = (ins Shardc_FloatTensor:$input);
  let results = (outs Shardc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  // `gradient` returns the operand's cotangent (null: zero everywhere) from
  // `gb`, `g`, the operand `x` and the result `y`.
  let extraClassDeclaration = elementwiseDecl # cotangentsDecl;
  let extraClassDefinition = shardcOpDefinition # foldDefinition # [{
    ::mlir::LogicalResult $cppClass::buildOperandCotangents(
        ::mlir::OpBuilder &builder, ::mlir::Location loc, ::mlir::Value g,
        ::llvm::ArrayRef<bool> wanted,
        ::llvm::SmallVectorImpl<::mlir::Value> &out) {
      out.assign(1, ::mlir::Value());
      if (wanted.empty() || !wanted[0])
        return ::mlir::success();
      ::shardc::GradientBuilder gb(builder, loc);
      ::mlir::Value x = getInput(), y = getResult();
      (void)x;
      (void)y;
      out[0] = [&]() -> ::mlir::Value {
        }] # gradient # [{
      }();
      return ::mlir::success();
    }
  }];
}

def Shardc_ReluOp : Shardc_UnaryElementwiseOp<"relu", "max(x, 0)",
    "x.max(0.0f)",
    // relu'(x) = step(x): 0 at the kink, as in JAX and PyTorch.
    [{ return gb.mul(g, gb.step(x)); }]> {
  let gradientFormula = "`g * step(x)` (0 at the kink, as in JAX and PyTorch)";
  let correctlyRounded = 1;
  let continuity = "DerivativeJumps";
}
def Shardc_GeluOp : Shardc_UnaryElementwiseOp<"gelu",
    "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (tanh approximation)",
    // As jax.nn.gelu(approximate=True); 0.797... is sqrt(2/pi).
    "0.5f * x * (1.0f + (0.7978845608028654f * (x + 0.044715f * x.cube())).tanh())",
    // The derivative of the kernel's formula, with t = tanh(c (x + a x^3)):
    // 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2).
    [{
      constexpr double c = 0.7978845608028654, a = 0.044715;
      ::mlir::Value x2 = gb.mul(x, x);
      ::mlir::Value inner = gb.add(x, gb.mul(gb.splat(x, a), gb.mul(x, x2)));
      ::mlir::Value t = gb.tanh(gb.mul(gb.splat(x, c), inner));
      ::mlir::Value one = gb.splat(x, 1.0), half = gb.splat(x, 0.5);
      ::mlir::Value left = gb.mul(half, gb.add(one, t));
      ::mlir::Value sech2 = gb.sub(one, gb.mul(t, t));
      ::mlir::Value poly =
          gb.add(gb.splat(x, c), gb.mul(gb.splat(x, 3 * a * c), x2));
      ::mlir::Value right = gb.mul(gb.mul(half, x), gb.mul(sech2, poly));
      return gb.mul(g, gb.add(left, right));
    }]> {
  let gradientFormula =
      "`g * (0.5 (1 + t) + 0.5 x (1 - t²) c (1 + 3a x²))`, `t = tanh(c (x" #
      " + a x³))`, `c = sqrt(2/π)`, `a = 0.044715`: the derivative of the" #
      " kernel's tanh approximation";
  // 1 + tanh(...) cancels for very negative arguments.
  let operandDomains = ["OperandDomain::bounded(3)"];
}
// Eigen's SIMD exp clamps its argument at -88.4 (exp(-inf) came out as
// 2.9e-39) while the scalar path at a tensor's tail is right: an element's
// result depended on its position. Below -87.33654 exp is subnormal, so
// those elements are recomputed with std::exp.
def Shardc_ExpOp : Shardc_UnaryElementwiseOp<"exp", "e^x", "x.exp()",
    [{ return gb.mul(g, y); }], 1, "-87.33654f", "std::exp(v)"> {
  let gradientFormula = "`g * y`";
  let operandDomains = ["OperandDomain::bounded(4)"];
}
// Eigen's SIMD log reads a subnormal as the smallest normal float;
// subnormals, 0 and negative values take std::log (-inf, NaN).
def Shardc_LogOp : Shardc_UnaryElementwiseOp<"log", "ln(x)", "x.log()",
    [{ return gb.div(g, x); }], 1,
    "std::numeric_limits<float>::min()", "std::log(v)"> {
  let gradientFormula = "`g / x`";
  let operandDomains = ["OperandDomain::positive()"];
}
def Shardc_NegOp : Shardc_UnaryElementwiseOp<"neg", "-x", "-x",
    [{ return gb.neg(g); }]> {
  let gradientFormula = "`-g`";
  let partialSumOperandSets = [0b1];
  let correctlyRounded = 1;
}
def Shardc_TanhOp : Shardc_UnaryElementwiseOp<"tanh", "tanh(x)", "x.tanh()",
    // tanh' = 1 - tanh^2, from the result.
    [{ return gb.mul(g, gb.sub(gb.splat(x, 1.0), gb.mul(y, y))); }]> {
  let gradientFormula = "`g * (1 - y²)`";
  // Saturated, tanh' = 1 - tanh^2 is a difference of nearly equal numbers.
  let operandDomains = ["OperandDomain::bounded(3)"];
}
// Not Eigen's sqrt/rsqrt: with EIGEN_FAST_MATH (its default) their SIMD path
// is an rsqrt estimate and a Newton step, off by an ulp for many inputs, NaN
// for +inf, and unlike the scalar path at a tensor's tail, so results
// depended on an element's position.
def Shardc_SqrtOp : Shardc_UnaryElementwiseOp<"sqrt", "sqrt(x)",
    "x.unaryExpr([](float v) { return std::sqrt(v); })",
    // sqrt'(x) = 0.5 / sqrt(x): g * 0.5 / y.
    [{ return gb.div(gb.mul(g, gb.splat(g, 0.5)), y); }]> {
  let gradientFormula = "`g * 0.5 / y`";
  let operandDomains = ["OperandDomain::positive()"];
  let correctlyRounded = 1;
}
def Shardc_RsqrtOp : Shardc_UnaryElementwiseOp<"rsqrt", "1/sqrt(x)",
    "x.unaryExpr([](float v) { return 1.0f / std::sqrt(v); })",
    // rsqrt'(x) = -0.5 x^(-3/2) = -0.5 y / x.
    [{ return gb.mul(g, gb.div(gb.mul(gb.splat(x, -0.5), y), x)); }]> {
  let gradientFormula = "`g * (-0.5 y / x)`";
  let operandDomains = ["OperandDomain::positive()"];
}
// 1 / (1 + e^-x) = e^x to float precision below -87.3, where Eigen's
// logistic (built on its exp) is wrong as exp is.
def Shardc_SigmoidOp : Shardc_UnaryElementwiseOp<"sigmoid", "1/(1+e^-x)",
    "x.logistic()",
    // sigmoid' = y (1 - y).
    [{ return gb.mul(g, gb.mul(y, gb.sub(gb.splat(x, 1.0), y))); }], 1,
    "-87.33654f", "std::exp(v)"> {
  let gradientFormula = "`g * y (1 - y)`";
  // Saturated, its value (near 0) or derivative y (1 - y) loses its bits.
  let operandDomains = ["OperandDomain::bounded(3)"];
}
def Shardc_StepOp : Shardc_UnaryElementwiseOp<"step", "x > 0 ? 1 : 0",
    // 0 at 0 and for NaN: the comparison is false there.
    "(x > 0.0f).template cast<float>()",
    // Zero almost everywhere (and undefined at 0): no cotangent.
    [{ return {}; }]> {
  let gradientFormula = "none (zero almost everywhere)";
  let opDescription = [{
    The Heaviside step: 1 where the element is greater than 0, else 0. At 0
    itself the result is 0, and a NaN gives 0 (the comparison is false). The
    result has the operand's type.

    Gradient rules build their masks from it: `relu'(x)` is `step(x)` (so
    `relu'(0) = 0`, as in JAX and PyTorch), and `max(a, b)` routes its
    cotangent with `step(a - b)` and `step(b - a)`. Its own derivative is 0
    almost everywhere, and that is its gradient.

    ```mlir
    %m = shardc.step %h : tensor<16x128xf32>
    ```

    Constraints: operand and result types are identical.
  }];
  let correctlyRounded = 1;
  let continuity = "ValueJumps";
}

def Shardc_AbsOp : Shardc_UnaryElementwiseOp<"abs", "|x|", "x.abs()",
    // abs'(x) = sign(x), 0 at 0 (as JAX and PyTorch).
    [{ return gb.mul(g, gb.sub(gb.step(x), gb.step(gb.neg(x)))); }]> {
  let gradientFormula =
      "`g * (step(x) - step(-x))` (the sign, 0 at 0, as in JAX and " #
      "PyTorch)";
  let correctlyRounded = 1;
  let continuity = "DerivativeJumps";
}
// std::erf element by element, not Eigen's erf (unsupported/SpecialFunctions):
// its SIMD and scalar paths are different approximations, so an element's
// result would depend on its position, as exp's did.
def Shardc_ErfOp : Shardc_UnaryElementwiseOp<"erf",
    "erf(x) = 2/sqrt(pi) * integral of e^(-t^2) from 0 to x",
    "x.unaryExpr([](float v) { return std::erf(v); })",
    // erf'(x) = 2/sqrt(pi) e^(-x^2); 1.128... is 2/sqrt(pi).
    [{
      ::mlir::Value e = gb.exp(gb.neg(gb.mul(x, x)));
      return gb.mul(g, gb.mul(gb.splat(x, 1.1283791670955126), e));
    }]> {
  let gradientFormula = "`g * 2/sqrt(π) e^(-x²)`";
}
// std::sin and std::cos element by element, as erf: Eigen's SIMD sin and
// cos are approximations of their own, and an element's result must not
// depend on its position in the tensor.
def Shardc_SinOp : Shardc_UnaryElementwiseOp<"sin", "sin(x)",
    "x.unaryExpr([](float v) { return std::sin(v); })",
    [{ return gb.mul(g, gb.build<CosOp>({x})); }]> {
  let gradientFormula = "`g * cos(x)`";
  // A last-bit difference in a large argument is one of order one in the
  // result.
  let operandDomains = ["OperandDomain::bounded(4)"];
}
def Shardc_CosOp : Shardc_UnaryElementwiseOp<"cos", "cos(x)",
    "x.unaryExpr([](float v) { return std::cos(v); })",
    [{ return gb.neg(gb.mul(g, gb.build<SinOp>({x}))); }]> {
  let gradientFormula = "`-(g * sin(x))`";
  // As sin.
  let operandDomains = ["OperandDomain::bounded(4)"];
}
// std::tan element by element, as sin: an element's result must not depend
// on its position in the tensor.
def Shardc_TanOp : Shardc_UnaryElementwiseOp<"tan", "tan(x)",
    "x.unaryExpr([](float v) { return std::tan(v); })",
    // tan' = 1 + tan^2, from the result.
    [{ return gb.mul(g, gb.add(gb.splat(x, 1.0), gb.mul(y, y))); }]> {
  let gradientFormula = "`g * (1 + y²)`";
  // Within 1 of 0, away from the poles at ±π/2, where the result and its
  // rounding grow without bound.
  let operandDomains = ["OperandDomain::bounded(1)"];
}
// Computed as max(x, 0) + log1p(e^-|x|): e^x overflows above 88.7 and
// log(1 + e^x) rounds to 0 below -16.6, where the result is still e^x.
// std functions element by element, as erf, so that an element's result
// does not depend on its position in the tensor.
def Shardc_SoftplusOp : Shardc_UnaryElementwiseOp<"softplus", "ln(1 + e^x)",
    "x.unaryExpr([](float v) { return std::max(v, 0.0f) + " #
    "std::log1p(std::exp(-std::fabs(v))); })",
    // softplus' = sigmoid.
    [{ return gb.mul(g, gb.build<SigmoidOp>({x})); }]> {
  let gradientFormula = "`g * sigmoid(x)`";
}
def Shardc_StopGradientOp : Shardc_UnaryElementwiseOp<"stop_gradient", "x",
    "x",
    // Treated as a constant by autodiff: no cotangent reaches the operand.
    [{ return {}; }], 0> {
  let gradientFormula = "none: autodiff treats the result as a constant";
  let opDescription = [{
    Returns its operand unchanged; autodiff treats the result as a constant
    (like `jax.lax.stop_gradient` and `torch.Tensor.detach`): the gradient
    rule gives the operand no cotangent, so nothing upstream of it is
    differentiated through this use. A softmax subtracts its row maximum
    through it, so that the shift carries no gradient.

    ```mlir
    %m = shardc.stop_gradient %rowmax : tensor<16x1xf32>
    ```

    Constraints: operand and result types are identical.
  }];
  let correctlyRounded = 1;
}

/// `integers`: the op also computes on i32 and i64 (index arithmetic).
class Shardc_BinaryElementwiseOp<string mnemonic, string formula, string kernel,
                                 code gradient, int flops = 1,
                                 bit integers = 0>
    : Shardc_ElementwiseOp<mnemonic, Shardc_BinaryElementwiseTrait,
                           "const Array &a, const Array &b", kernel, "", "",
                           flops, integers> {
  let summary = "Elementwise " # mnemonic # ": " # formula # ".";
  // What the op computes; the rest of its reference (gradient, sharding
  // rule, JSON spelling) is the family's.
  string opDescription = [{
    Computes `}] # formula # [{` element by element. Both operands and the
    result have the same type; there is no implicit broadcasting (use
    `shardc.broadcast_in_dim`).}] # !if(integers, [{ Besides floats, the
    operands may be i32 or i64 tensors (index arithmetic: offsets of ids,
    positions), where overflow wraps around; integer operands get no
    cotangent.}] # integerNote, "") # [{

    ```mlir
    %2 = shardc.}] # mnemonic # [{ %0, %1 : tensor<16x64xf32>
    ```

    Constraints: operand and result types are identical.
  }];
  let description = opDescription # [{
    Gradient (`g` the result's cotangent, `y` the result; the cotangents of
    `lhs`, `rhs`): }] # gradientFormula # [{.

    Sharding rule: `([f0, f1], [f0, f1]) -> ([f0, f1])`: each dim is one
    parallel factor of both operands and the result.

    In a JSON graph: two inputs of one element type whose shapes broadcast
    (NumPy rules; the importer inserts the `broadcast_in_dim`s); the
    result has the broadcast shape.
  }];
  let arguments = (ins !if(integers, Shardc_NumericTensor, Shardc_FloatTensor):$lhs,
                       !if(integers, Shardc_NumericTensor, Shardc_FloatTensor):$rhs);
  let results = (outs !if(integers, Shardc_NumericTensor, Shardc_FloatTensor):$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
  // `gradient` sets `lhsGrad` where `wantLhs` and `rhsGrad` where `wantRhs`
  // (left null: zero), from `gb`, `g`, the operands `a`, `b` and the result
  // `y`; it runs only when at least one is wanted.
  let extraClassDeclaration = elementwiseDecl # cotangentsDecl;
  let extraClassDefinition = shardcOpDefinition # foldDefinition # [{
    ::mlir::LogicalResult $cppClass::buildOperandCotangents(
        ::mlir::OpBuilder &builder, ::mlir::Location loc, ::mlir::Value g,
        ::llvm::ArrayRef<bool> wanted,
        ::llvm::SmallVectorImpl<::mlir::Value> &out) {
      out.assign(2, ::mlir::Value());
      bool wantLhs = wanted.size() > 0 && wanted[0];
      bool wantRhs = wanted.size() > 1 && wanted[1];
      if (!wantLhs && !wantRhs)
        return ::mlir::success();
      ::shardc::GradientBuilder gb(builder, loc);
      ::mlir::Value a = getLhs(), b = getRhs(), y = getResult();
      ::mlir::Value &lhsGrad = out[0], &rhsGrad = out[1];
      (void)a;
      (void)b;
      (void)y;
      }] # gradient # [{
      return ::mlir::success();
    }
  }];
}

// add, sub, mul, div, max and min also do index arithmetic (integers = 1);
// an integer result never has a cotangent, so their gradients only see
// floats.
def Shardc_AddOp : Shardc_BinaryElementwiseOp<"add", "lhs + rhs", "a + b", [{
      if (wantLhs)
        lhsGrad = g;
      if (wantRhs)
        rhsGrad = g;
    }], 1, 1> {
  let gradientFormula = "`g`, `g`";
  // Σa + Σb = Σ(a + b): two pending sums over the same axes add locally.
  let partialSumOperandSets = [0b11];
  let correctlyRounded = 1;
}
def Shardc_SubOp : Shardc_BinaryElementwiseOp<"sub", "lhs - rhs", "a - b", [{
      if (wantLhs)
        lhsGrad = g;
      if (wantRhs)
        rhsGrad = gb.neg(g);
    }], 1, 1> {
  let gradientFormula = "`g`, `-g`";
  let partialSumOperandSets = [0b11];
  let correctlyRounded = 1;
}
def Shardc_MulOp : Shardc_BinaryElementwiseOp<"mul", "lhs * rhs", "a * b", [{
      if (wantLhs)
        lhsGrad = gb.mul(g, b);
      if (wantRhs)
        rhsGrad = gb.mul(g, a);
    }], 1, 1> {
  let gradientFormula = "`g * rhs`, `g * lhs`";
  // (Σa) b = Σ(a b) for b replicated over the summed axes; not both summed.
  let partialSumOperandSets = [0b01, 0b10];
  let correctlyRounded = 1;
}
// y = a / b: da = g / b, db = -g a / b^2 = -da * y.
// On integers (shape arithmetic: a hidden size over a head count) it
// truncates toward zero; the two quotients C++ leaves undefined get values
// (x / 0 = -1; the most negative value / -1 = itself, the wrapped negation).
def Shardc_DivOp : Shardc_BinaryElementwiseOp<"div", "lhs / rhs", "a / b", [{
      ::mlir::Value da = gb.div(g, b);
      if (wantLhs)
        lhsGrad = da;
      if (wantRhs)
        rhsGrad = gb.neg(gb.mul(da, y));
    }], 1, 1> {
  let integerKernel =
      "a.binaryExpr(b, [](auto u, auto v) -> decltype(u) { " #
      "using T = decltype(u); using U = std::make_unsigned_t<T>; " #
      "if (v == 0) return T(-1); " #
      "if (v == T(-1)) return static_cast<T>(U(0) - static_cast<U>(u)); " #
      "return u / v; })";
  let integerNote = [{ Integer division truncates toward zero;
    `x / 0` is -1, and the most negative value divided by -1 is itself.}];
  let gradientFormula = "`da = g / rhs`, `-da * y`";
  let partialSumOperandSets = [0b01];
  let operandDomains = ["OperandDomain()", "OperandDomain::nonZero()"];
  let correctlyRounded = 1;
}
// Eigen's max: where an operand is NaN, the result is what Eigen's max
// gives (kept as is: sharded and unsharded programs run the same code).
// The larger operand takes g; on a tie each takes g/2 (as JAX and
// PyTorch do): wa = 0.5 (1 + step(a - b) - step(b - a)), wb = 1 - wa.
def Shardc_MaxOp : Shardc_BinaryElementwiseOp<"max", "max(lhs, rhs)",
    "a.max(b)", [{
      ::mlir::Value d = gb.sub(a, b);
      ::mlir::Value sign = gb.sub(gb.step(d), gb.step(gb.neg(d)));
      ::mlir::Value half = gb.splat(g, 0.5);
      ::mlir::Value ga = gb.mul(gb.mul(g, half), gb.add(gb.splat(g, 1.0), sign));
      if (wantLhs)
        lhsGrad = ga;
      if (wantRhs)
        rhsGrad = gb.sub(g, ga);
    }], 1, 1> {
  let integerKernel = "a.max(b)";
  let gradientFormula =
      "`ga = 0.5 g (1 + step(lhs - rhs) - step(rhs - lhs))`, `g - ga`: " #
      "the larger operand takes `g`, a tie splits it evenly";
  let correctlyRounded = 1;
  let continuity = "DerivativeJumps";
}
// The mirror of max: the smaller operand takes g, a tie splits it.
def Shardc_MinOp : Shardc_BinaryElementwiseOp<"min", "min(lhs, rhs)",
    "a.min(b)", [{
      ::mlir::Value d = gb.sub(b, a);
      ::mlir::Value sign = gb.sub(gb.step(d), gb.step(gb.neg(d)));
      ::mlir::Value half = gb.splat(g, 0.5);
      ::mlir::Value ga = gb.mul(gb.mul(g, half), gb.add(gb.splat(g, 1.0), sign));
      if (wantLhs)
        lhsGrad = ga;
      if (wantRhs)
        rhsGrad = gb.sub(g, ga);
    }], 1, 1> {
  let integerKernel = "a.min(b)";
  let gradientFormula =
      "`ga = 0.5 g (1 + step(rhs - lhs) - step(lhs - rhs))`, `g - ga`: as" #
      " `max`, to the smaller operand";
  let correctlyRounded = 1;
  let continuity = "DerivativeJumps";
}
// std::pow element by element, not Eigen's pow, whose SIMD path differs from
// the scalar one in the last bit (results would depend on position).
// y = a^b: da = g b a^(b-1), db = g y ln(a) (defined for a > 0; NaN where
// a < 0, as ln is).
def Shardc_PowOp : Shardc_BinaryElementwiseOp<"pow", "lhs ^ rhs",
    "a.binaryExpr(b, [](float u, float v) { return std::pow(u, v); })", [{
      if (wantLhs)
        lhsGrad = gb.mul(g, gb.mul(b, gb.build<PowOp>({a, gb.sub(b, gb.splat(b, 1.0))})));
      if (wantRhs)
        rhsGrad = gb.mul(g, gb.mul(y, gb.log(a)));
    }]> {
  let gradientFormula =
      "`g * rhs * pow(lhs, rhs - 1)`, `g * y * log(lhs)` (defined where " #
      "`lhs > 0`)";
  // A positive base; an exponent in [-2, 2] keeps the result finite.
  let operandDomains = ["OperandDomain::positive()",
                          "OperandDomain::bounded(2)"];
}

#endif // SHARDC_DIALECT_ELEMENTWISEOPS_TD

//===- ShardcOps.td - shardc operations --------------------*- tablegen -*-===//

#ifndef SHARDC_DIALECT_SHARDCOPS_TD
#define SHARDC_DIALECT_SHARDCOPS_TD

include "shardc/Dialect/ShardcDialect.td"
include "shardc/Dialect/ShardcAttrs.td"
include "shardc/Dialect/ShardingRuleInterface.td"
include "shardc/Dialect/DifferentiableOpInterface.td"
include "shardc/Dialect/CollectiveOpInterface.td"
include "shardc/Dialect/CostOpInterface.td"
include "shardc/Dialect/DecomposableOpInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Mesh
//===----------------------------------------------------------------------===//

def Shardc_MeshOp : Shardc_Op<"mesh", [Symbol]> {
  let summary = "A logical device mesh: named, ordered axes with sizes.";
  let description = [{
    Declares a device mesh. Devices are numbered by the row-major
    linearization of their mesh coordinates: the first axis is the most
    major. On `["y"=4, "x"=2]` device `(y, x)` has id `2*y + x`.

    ```mlir
    shardc.mesh @mesh ["y"=4, "x"=2]
    ```

    Constraints:
    * at least one axis; axis names are non-empty and unique;
    * every axis size is at least 1;
    * the device count (product of sizes) is at most 2^20.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       StrArrayAttr:$axis_names,
                       DenseI64ArrayAttr:$axis_sizes);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    size_t getNumAxes() { return getAxisNames().size(); }
    /// Total number of devices.
    int64_t getNumDevices();
    /// Index of axis `name`, or -1.
    int64_t getAxisIndex(::llvm::StringRef name);
    /// Size of axis `name`, or -1 when it does not exist.
    int64_t getAxisSize(::llvm::StringRef name);
    ::llvm::SmallVector<::llvm::StringRef> getAxisNameList();
  }];
}

//===----------------------------------------------------------------------===//
// Tensor operations
//===----------------------------------------------------------------------===//
// Every tensor op has the `TensorOp` trait, a sharding rule, a gradient rule
// and a cost (on the op), and a kernel (an external model the interpreter
// attaches; see KernelOpInterface.td). unittests/Dialect/OpCompleteness
// checks that every registered op with the trait has all of them.

def Shardc_TensorOpTrait : NativeOpTrait<"TensorOp"> {
  let cppNamespace = "::shardc::OpTrait";
}
def Shardc_UnaryElementwiseTrait : NativeOpTrait<"UnaryElementwise"> {
  let cppNamespace = "::shardc::OpTrait";
}
def Shardc_BinaryElementwiseTrait : NativeOpTrait<"BinaryElementwise"> {
  let cppNamespace = "::shardc::OpTrait";
}

/// A tensor op whose rule, gradient and cost are defined in its family file
/// (lib/Dialect/<Family>Ops.cpp).
class Shardc_TensorOp<string mnemonic, list<Trait> traits = []>
    : Shardc_Op<mnemonic, !listconcat(traits, [Pure, Shardc_TensorOpTrait,
        DeclareOpInterfaceMethods<Shardc_ShardingRuleOpInterface>,
        DeclareOpInterfaceMethods<Shardc_DifferentiableOpInterface>,
        DeclareOpInterfaceMethods<Shardc_CostOpInterface>])>;

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
class Shardc_ElementwiseOp<string mnemonic, Trait arity, string kernelParams,
                           string kernel, string exactBelow, string exactScalar,
                           int flops, bit integers = 0>
    : Shardc_Op<mnemonic, [Pure, SameOperandsAndResultType,
        Shardc_TensorOpTrait, arity,
        Shardc_ShardingRuleOpInterface, Shardc_DifferentiableOpInterface,
        Shardc_CostOpInterface]> {
  // Bit masks of operands a pending partial sum passes through jointly
  // (ShardingRuleOpInterface::getPartialSumOperandSets); set with `let` on
  // the ops linear in some operands.
  list<int> partialSumOperandSets = [];
  code elementwiseDecl = [{
    /// The op's kernel on whole arrays (Eigen arrays in the interpreter).
    template <typename Array>
    static auto computeElements(}] # kernelParams # [{) {
      return }] # kernel # [{;
    }
    /// Whether elements below kExactBelow are recomputed by
    /// computeExactElement after computeElements.
    /// Whether the kernel also runs on i32 and i64 (index arithmetic,
    /// computed in unsigned arithmetic so that overflow wraps).
    static constexpr bool kAcceptsIntegers = }] #
        !if(integers, "true", "false") # [{;
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
  }];
}

class Shardc_UnaryElementwiseOp<string mnemonic, string formula, string kernel,
                                code gradient, int flops = 1,
                                string exactBelow = "", string exactScalar = "">
    : Shardc_ElementwiseOp<mnemonic, Shardc_UnaryElementwiseTrait,
                           "const Array &x", kernel, exactBelow, exactScalar,
                           flops> {
  let summary = "Elementwise " # mnemonic # ": " # formula # ".";
  let description = [{
    Applies `}] # formula # [{` to every element. The result has the operand's
    type.

    ```mlir
    %1 = shardc.}] # mnemonic # [{ %0 : tensor<16x64xf32>
    ```

    Constraints: operand and result types are identical.
  }];
  let arguments = (ins Shardc_FloatTensor:$input);
  let results = (outs Shardc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  // `gradient` returns the operand's cotangent (null: zero everywhere) from
  // `gb`, `g`, the operand `x` and the result `y`.
  let extraClassDeclaration = elementwiseDecl # [{
    ::mlir::LogicalResult buildOperandCotangents(
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
    [{ return gb.mul(g, gb.step(x)); }]>;
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
    }]>;
// Eigen's SIMD exp clamps its argument at -88.4 (exp(-inf) came out as
// 2.9e-39) while the scalar path at a tensor's tail is right: an element's
// result depended on its position. Below -87.33654 exp is subnormal, so
// those elements are recomputed with std::exp.
def Shardc_ExpOp : Shardc_UnaryElementwiseOp<"exp", "e^x", "x.exp()",
    [{ return gb.mul(g, y); }], 1, "-87.33654f", "std::exp(v)">;
// Eigen's SIMD log reads a subnormal as the smallest normal float;
// subnormals, 0 and negative values take std::log (-inf, NaN).
def Shardc_LogOp : Shardc_UnaryElementwiseOp<"log", "ln(x)", "x.log()",
    [{ return gb.div(g, x); }], 1,
    "std::numeric_limits<float>::min()", "std::log(v)">;
def Shardc_NegOp : Shardc_UnaryElementwiseOp<"neg", "-x", "-x",
    [{ return gb.neg(g); }]> {
  let partialSumOperandSets = [0b1];
}
def Shardc_TanhOp : Shardc_UnaryElementwiseOp<"tanh", "tanh(x)", "x.tanh()",
    // tanh' = 1 - tanh^2, from the result.
    [{ return gb.mul(g, gb.sub(gb.splat(x, 1.0), gb.mul(y, y))); }]>;
// Not Eigen's sqrt/rsqrt: with EIGEN_FAST_MATH (its default) their SIMD path
// is an rsqrt estimate and a Newton step, off by an ulp for many inputs, NaN
// for +inf, and unlike the scalar path at a tensor's tail, so results
// depended on an element's position.
def Shardc_SqrtOp : Shardc_UnaryElementwiseOp<"sqrt", "sqrt(x)",
    "x.unaryExpr([](float v) { return std::sqrt(v); })",
    // sqrt'(x) = 0.5 / sqrt(x): g * 0.5 / y.
    [{ return gb.div(gb.mul(g, gb.splat(g, 0.5)), y); }]>;
def Shardc_RsqrtOp : Shardc_UnaryElementwiseOp<"rsqrt", "1/sqrt(x)",
    "x.unaryExpr([](float v) { return 1.0f / std::sqrt(v); })",
    // rsqrt'(x) = -0.5 x^(-3/2) = -0.5 y / x.
    [{ return gb.mul(g, gb.div(gb.mul(gb.splat(x, -0.5), y), x)); }]>;
// 1 / (1 + e^-x) = e^x to float precision below -87.3, where Eigen's
// logistic (built on its exp) is wrong as exp is.
def Shardc_SigmoidOp : Shardc_UnaryElementwiseOp<"sigmoid", "1/(1+e^-x)",
    "x.logistic()",
    // sigmoid' = y (1 - y).
    [{ return gb.mul(g, gb.mul(y, gb.sub(gb.splat(x, 1.0), y))); }], 1,
    "-87.33654f", "std::exp(v)">;
def Shardc_StepOp : Shardc_UnaryElementwiseOp<"step", "x > 0 ? 1 : 0",
    // 0 at 0 and for NaN: the comparison is false there.
    "(x > 0.0f).template cast<float>()",
    // Zero almost everywhere (and undefined at 0): no cotangent.
    [{ return {}; }]> {
  let description = [{
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
}

def Shardc_AbsOp : Shardc_UnaryElementwiseOp<"abs", "|x|", "x.abs()",
    // abs'(x) = sign(x), 0 at 0 (as JAX and PyTorch).
    [{ return gb.mul(g, gb.sub(gb.step(x), gb.step(gb.neg(x)))); }]>;
// std::erf element by element, not Eigen's erf (unsupported/SpecialFunctions):
// its SIMD and scalar paths are different approximations, so an element's
// result would depend on its position, as exp's did.
def Shardc_ErfOp : Shardc_UnaryElementwiseOp<"erf",
    "erf(x) = 2/sqrt(pi) * integral of e^(-t^2) from 0 to x",
    "x.unaryExpr([](float v) { return std::erf(v); })",
    // erf'(x) = 2/sqrt(pi) e^(-x^2); 1.128... is 2/sqrt(pi).
    [{
      ::mlir::Value e = gb.op("exp", {gb.neg(gb.mul(x, x))});
      return gb.mul(g, gb.mul(gb.splat(x, 1.1283791670955126), e));
    }]>;
def Shardc_StopGradientOp : Shardc_UnaryElementwiseOp<"stop_gradient", "x",
    "x",
    // Treated as a constant by autodiff: no cotangent reaches the operand.
    [{ return {}; }], 0> {
  let description = [{
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
}

/// `integers`: the op also computes on i32 and i64 (index arithmetic).
class Shardc_BinaryElementwiseOp<string mnemonic, string formula, string kernel,
                                 code gradient, int flops = 1,
                                 bit integers = 0>
    : Shardc_ElementwiseOp<mnemonic, Shardc_BinaryElementwiseTrait,
                           "const Array &a, const Array &b", kernel, "", "",
                           flops, integers> {
  let summary = "Elementwise " # mnemonic # ": " # formula # ".";
  let description = [{
    Computes `}] # formula # [{` element by element. Both operands and the
    result have the same type; there is no implicit broadcasting (use
    `shardc.broadcast_in_dim`).}] # !if(integers, [{ Besides floats, the
    operands may be i32 or i64 tensors (index arithmetic: offsets of ids,
    positions), where overflow wraps around; integer operands get no
    cotangent.}], "") # [{

    ```mlir
    %2 = shardc.}] # mnemonic # [{ %0, %1 : tensor<16x64xf32>
    ```

    Constraints: operand and result types are identical.
  }];
  let arguments = (ins !if(integers, Shardc_NumericTensor, Shardc_FloatTensor):$lhs,
                       !if(integers, Shardc_NumericTensor, Shardc_FloatTensor):$rhs);
  let results = (outs !if(integers, Shardc_NumericTensor, Shardc_FloatTensor):$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
  // `gradient` sets `lhsGrad` where `wantLhs` and `rhsGrad` where `wantRhs`
  // (left null: zero), from `gb`, `g`, the operands `a`, `b` and the result
  // `y`; it runs only when at least one is wanted.
  let extraClassDeclaration = elementwiseDecl # [{
    ::mlir::LogicalResult buildOperandCotangents(
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

// add, sub and mul also do index arithmetic (integers = 1); an integer
// result never has a cotangent, so their gradients only see floats.
def Shardc_AddOp : Shardc_BinaryElementwiseOp<"add", "lhs + rhs", "a + b", [{
      if (wantLhs)
        lhsGrad = g;
      if (wantRhs)
        rhsGrad = g;
    }], 1, 1> {
  // Σa + Σb = Σ(a + b): two pending sums over the same axes add locally.
  let partialSumOperandSets = [0b11];
}
def Shardc_SubOp : Shardc_BinaryElementwiseOp<"sub", "lhs - rhs", "a - b", [{
      if (wantLhs)
        lhsGrad = g;
      if (wantRhs)
        rhsGrad = gb.neg(g);
    }], 1, 1> {
  let partialSumOperandSets = [0b11];
}
def Shardc_MulOp : Shardc_BinaryElementwiseOp<"mul", "lhs * rhs", "a * b", [{
      if (wantLhs)
        lhsGrad = gb.mul(g, b);
      if (wantRhs)
        rhsGrad = gb.mul(g, a);
    }], 1, 1> {
  // (Σa) b = Σ(a b) for b replicated over the summed axes; not both summed.
  let partialSumOperandSets = [0b01, 0b10];
}
// y = a / b: da = g / b, db = -g a / b^2 = -da * y.
def Shardc_DivOp : Shardc_BinaryElementwiseOp<"div", "lhs / rhs", "a / b", [{
      ::mlir::Value da = gb.div(g, b);
      if (wantLhs)
        lhsGrad = da;
      if (wantRhs)
        rhsGrad = gb.neg(gb.mul(da, y));
    }]> {
  let partialSumOperandSets = [0b01];
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
    }]>;
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
    }]>;
// std::pow element by element, not Eigen's pow, whose SIMD path differs from
// the scalar one in the last bit (results would depend on position).
// y = a^b: da = g b a^(b-1), db = g y ln(a) (defined for a > 0; NaN where
// a < 0, as ln is).
def Shardc_PowOp : Shardc_BinaryElementwiseOp<"pow", "lhs ^ rhs",
    "a.binaryExpr(b, [](float u, float v) { return std::pow(u, v); })", [{
      if (wantLhs)
        lhsGrad = gb.mul(g, gb.mul(b, gb.op("pow", {a, gb.sub(b, gb.splat(b, 1.0))})));
      if (wantRhs)
        rhsGrad = gb.mul(g, gb.mul(y, gb.op("log", {a})));
    }]>;

def Shardc_MatmulOp : Shardc_TensorOp<"matmul", [InferTypeOpAdaptor]> {
  let summary = "Matrix product, optionally batched over equal leading dims.";
  let description = [{
    `result[b..., i, j] = sum_k lhs[b..., i, k] * rhs[b..., k, j]`.

    ```mlir
    %h = shardc.matmul %x, %w0 : (tensor<16x64xf32>, tensor<64x128xf32>) -> tensor<16x128xf32>
    ```

    Constraints:
    * both operands have the same rank, at least 2, and the same element type;
    * leading (batch) dimensions are equal;
    * `lhs` dim `-1` equals `rhs` dim `-2` (the contracting size);
    * the result type is `[b..., lhs[-2], rhs[-1]]` (it is inferred).
  }];
  let arguments = (ins Shardc_FloatTensor:$lhs, Shardc_FloatTensor:$rhs);
  let results = (outs Shardc_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

// A list of dims that may be left out, meaning none (a dot_general without
// batch dims); serializations may omit it.
def Shardc_DimsDefaultEmpty : DefaultValuedAttr<DenseI64ArrayAttr, "{}">;

def Shardc_DotGeneralOp : Shardc_TensorOp<"dot_general", [InferTypeOpAdaptor]> {
  let summary = "General tensor contraction with batch and contracting dims (einsum-like).";
  let description = [{
    Contracts `lhs` and `rhs` over the paired contracting dimensions, with the
    paired batch dimensions kept in lockstep. Result dimensions are: the batch
    dimensions (in the order given), then the remaining `lhs` dimensions, then
    the remaining `rhs` dimensions, each in operand order (StableHLO's
    convention). `einsum('bqd,bkd->bqk')` is:

    ```mlir
    %s = shardc.dot_general %q, %k batch = [0] x [0], contract = [2] x [2]
        : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x8xf32>
    ```

    Constraints:
    * the batch lists have equal length, and so do the contracting lists;
    * every listed dimension is in range and used once per operand;
    * paired dimensions have equal sizes; element types agree;
    * the result type is the one described above (it is inferred).
  }];
  let arguments = (ins Shardc_FloatTensor:$lhs, Shardc_FloatTensor:$rhs,
                       Shardc_DimsDefaultEmpty:$lhs_batch_dims,
                       Shardc_DimsDefaultEmpty:$rhs_batch_dims,
                       Shardc_DimsDefaultEmpty:$lhs_contracting_dims,
                       Shardc_DimsDefaultEmpty:$rhs_contracting_dims);
  let results = (outs Shardc_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `batch` `=` $lhs_batch_dims `x` $rhs_batch_dims `,`
    `contract` `=` $lhs_contracting_dims `x` $rhs_contracting_dims
    attr-dict `:` functional-type(operands, results)
  }];
}

/// getPartialSumOperandSets of an op linear in its single operand: a
/// pending sum over axes no factor uses passes through (Σx moved, reduced or
/// summed over dims is the sum of the moved, reduced or summed summands).
defvar Shardc_LinearInOperandDecl = [{
    void getPartialSumOperandSets(::llvm::SmallVectorImpl<unsigned> &sets) {
      sets.push_back(0b1);
    }
}];

class Shardc_ReduceOp<string mnemonic, string kind>
    : Shardc_TensorOp<mnemonic, [InferTypeOpAdaptor]> {
  let summary = "Reduces (" # kind # ") over the listed dimensions, dropping them.";
  let description = [{
    Combines the elements along each dimension in `dims` with `}] # kind # [{`;
    the result has those dimensions removed (like `jnp.}] # kind # [{(x, axis=dims)`).

    ```mlir
    %s = shardc.}] # mnemonic # [{ %x dims = [1] : (tensor<16x64xf32>) -> tensor<16xf32>
    ```

    Constraints: dims are in range, unique; the result type is inferred.
  }];
  let arguments = (ins Shardc_FloatTensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Shardc_FloatTensor:$result);
  let assemblyFormat = "$input `dims` `=` $dims attr-dict `:` functional-type(operands, results)";
}

def Shardc_ReduceSumOp : Shardc_ReduceOp<"reduce_sum", "sum"> {
  let extraClassDeclaration = Shardc_LinearInOperandDecl;
}
def Shardc_ReduceMaxOp : Shardc_ReduceOp<"reduce_max", "max">;

def Shardc_TransposeOp : Shardc_TensorOp<"transpose", [InferTypeOpAdaptor]> {
  let summary = "Permutes dimensions: result dim i is operand dim permutation[i].";
  let description = [{
    ```mlir
    %t = shardc.transpose %w permutation = [1, 0] : (tensor<64x128xf32>) -> tensor<128x64xf32>
    ```

    Constraints: `permutation` is a permutation of `[0, rank)`; the result
    type is inferred.
  }];
  let arguments = (ins Shardc_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = "$input `permutation` `=` $permutation attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = Shardc_LinearInOperandDecl;
}

def Shardc_ReshapeOp : Shardc_TensorOp<"reshape"> {
  let summary = "Reinterprets the row-major elements with a new shape.";
  let description = [{
    ```mlir
    %r = shardc.reshape %x : (tensor<8x4xf32>) -> tensor<32xf32>
    ```

    Constraints: element counts and element types are equal.
  }];
  let arguments = (ins Shardc_Tensor:$input);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = Shardc_LinearInOperandDecl;
}

def Shardc_BroadcastInDimOp : Shardc_TensorOp<"broadcast_in_dim"> {
  let summary = "Broadcasts to a larger shape; operand dim i becomes result dim dims[i].";
  let description = [{
    `result[r] = input[r[dims[0]], ..., r[dims[n-1]]]`, where an operand dim of
    size 1 is read at index 0 (it expands). Result dimensions not listed are
    new.

    ```mlir
    // add a bias of shape [128] to every row of a [16,128] tensor
    %b2 = shardc.broadcast_in_dim %b dims = [1] : (tensor<128xf32>) -> tensor<16x128xf32>
    ```

    Constraints: `dims` has one entry per operand dim, strictly increasing and
    in range of the result; each operand dim is 1 or equals its result dim;
    element types agree.
  }];
  let arguments = (ins Shardc_Tensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = "$input `dims` `=` $dims attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Shardc_ConstantOp : Shardc_TensorOp<"constant",
    [ConstantLike, AllTypesMatch<["value", "result"]>]> {
  let summary = "A tensor constant.";
  let description = [{
    ```mlir
    %c = shardc.constant dense<0.5> : tensor<16x64xf32>
    %d = shardc.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```

    Constraints: `value` is a dense elements attribute of the result type.
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  // Folding to its value is what lets MLIR's rewrite drivers tell two
  // constants apart (without it they all look like one unknown constant).
  let hasFolder = 1;
}

def Shardc_ShardingConstraintOp : Shardc_TensorOp<"sharding_constraint",
    [SameOperandsAndResultType]> {
  let summary = "Pins the sharding of a value (like jax.lax.with_sharding_constraint).";
  let description = [{
    Returns its operand unchanged, and states that the result must have the
    given sharding. Propagation never overrides it; the partitioner reshards
    into it.

    ```mlir
    %1 = shardc.sharding_constraint %0 <@mesh, [{"y"}, {} ]> : tensor<16x64xf32>
    ```

    Constraints: the sharding is valid for the operand type and its mesh (see
    `#shardc.sharding`).
  }];
  let arguments = (ins Shardc_Tensor:$input, Shardc_ShardingAttr:$sharding);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = "$input custom<ShardingBody>($sharding) attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Element-type ops: creating and converting integer and boolean tensors
// (lib/Dialect/ElementTypeOps.cpp, lib/Interpreter/ElementTypeKernels.cpp)
//===----------------------------------------------------------------------===//

def Shardc_IotaOp : Shardc_TensorOp<"iota"> {
  let summary = "Counts along one dimension: result[i] = i[dimension].";
  let description = [{
    A tensor of the result type whose element at index `i` is
    `i[dimension]` (0, 1, 2, ... along `dimension`, repeated along the
    others): positions, and with `compare` causal masks. The result type
    gives the shape and the element type (in JSON, the `shape` and `dtype`
    fields).

    ```mlir
    %pos = shardc.iota dimension = 1 : tensor<2x8xi32>
    ```

    Sharding: every dim is a parallel factor. A device holding a block of
    the counted `dimension` counts from its block's offset: its local
    computation is a local `iota` plus `axis_index * block size` (see
    `axis_index`), so masks built from iota stay sharded and nothing moves.

    Constraints: `dimension` is in `[0, rank)`; the element type is f32,
    i32 or i64.
  }];
  let arguments = (ins I64Attr:$dimension);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = "`dimension` `=` $dimension attr-dict `:` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::LogicalResult buildLocalComputation(::mlir::OpBuilder &builder,
        ::mlir::ValueRange localOperands, ::mlir::TypeRange localResultTypes,
        const ::shardc::FactorLayout &layout,
        ::llvm::SmallVectorImpl<::mlir::Value> &results);
  }];
}

def Shardc_CompareOp : Shardc_TensorOp<"compare", [InferTypeOpAdaptor]> {
  let summary = "Elementwise comparison, giving an i1 tensor.";
  let description = [{
    `result = lhs <direction> rhs` elementwise, with `direction` one of
    `"EQ"`, `"NE"`, `"LT"`, `"LE"`, `"GT"`, `"GE"`. Floats compare as IEEE
    (every comparison with NaN is false except `NE`); integers as signed.
    Not differentiable: a boolean has no cotangent.

    ```mlir
    %causal = shardc.compare %col, %row direction = "LE" : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
    ```

    Constraints: operands have the same type, f32, i32 or i64; the result
    is i1 of the same shape (inferred).
  }];
  let arguments = (ins Shardc_Tensor:$lhs, Shardc_Tensor:$rhs,
                       StrAttr:$direction);
  let results = (outs Shardc_BoolTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs `direction` `=` $direction attr-dict `:` functional-type(operands, results)";
}

def Shardc_SelectOp : Shardc_TensorOp<"select", [InferTypeOpAdaptor]> {
  let summary = "Elementwise choice: pred ? on_true : on_false.";
  let description = [{
    Takes `on_true` where `pred` is 1 and `on_false` where it is 0. The
    cotangent of the result flows to `on_true` where `pred` holds and to
    `on_false` elsewhere; `pred` gets none.

    ```mlir
    %masked = shardc.select %causal, %scores, %neg_inf : (tensor<8x8xi1>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    ```

    Constraints: `pred` is i1 of the shape of `on_true` and `on_false`,
    which have one type; the result has it too (inferred).
  }];
  let arguments = (ins Shardc_BoolTensor:$pred, Shardc_Tensor:$on_true,
                       Shardc_Tensor:$on_false);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = "$pred `,` $on_true `,` $on_false attr-dict `:` functional-type(operands, results)";
}

def Shardc_ConvertOp : Shardc_TensorOp<"convert", [InferTypeOpAdaptor]> {
  let summary = "Elementwise conversion to another element type.";
  let description = [{
    Converts every element to `dtype`: integers to f32 exactly up to 2^24;
    f32 to an integer rounds toward zero, NaN gives 0 and values out of
    range saturate; anything to i1 is `x != 0`; i1 to anything is 0 or 1.
    The cotangent passes through (converted back) when both types are
    f32; a conversion to or from an integer type is not differentiable (it
    gets no cotangent).

    ```mlir
    %ids_f = shardc.convert %ids dtype = f32 : (tensor<8xi32>) -> tensor<8xf32>
    ```

    Constraints: `dtype` is f32, i1, i32 or i64; the result is the operand's
    shape with element type `dtype` (inferred).
  }];
  let arguments = (ins Shardc_Tensor:$input, TypeAttr:$dtype);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = "$input `dtype` `=` $dtype attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Slicing: slice, concatenate, pad (lib/Dialect/SliceOps.cpp,
// lib/Interpreter/SliceKernels.cpp)
//===----------------------------------------------------------------------===//
// A sliced, padded or concatenated dim moves elements between the blocks a
// sharding would make, so its rule gives it a need_replication factor (one
// per tensor: the sizes differ); every other dim passes through.

def Shardc_SliceOp : Shardc_TensorOp<"slice", [InferTypeOpAdaptor]> {
  let summary = "A strided rectangular window: elements start, start + stride, ... below limit.";
  let description = [{
    As StableHLO's `slice`: result dim `d` holds the operand's elements
    `start[d], start[d] + stride[d], ...` below `limit[d]`, so it has
    `ceil((limit[d] - start[d]) / stride[d])` elements. `stride` may be
    left out (all 1). Splitting a fused QKV projection `[16, 3*64]`:

    ```mlir
    %k = shardc.slice %qkv start = [0, 64] limit = [16, 128] : (tensor<16x192xf32>) -> tensor<16x64xf32>
    %e = shardc.slice %x start = [0] limit = [8] stride = [2] : (tensor<8xf32>) -> tensor<4xf32>
    ```

    Constraints: `start` and `limit` have one entry per operand dim, and
    `stride` one too or none; `0 <= start <= limit <= size` and
    `stride >= 1` in every dim; the result type is inferred.
  }];
  let arguments = (ins Shardc_Tensor:$input, DenseI64ArrayAttr:$start,
                       DenseI64ArrayAttr:$limit,
                       Shardc_DimsDefaultEmpty:$stride);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = [{
    $input `start` `=` $start `limit` `=` $limit (`stride` `=` $stride^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// `stride`, with the default (all 1) spelled out.
    ::llvm::SmallVector<int64_t> getStrides();
    /// Sets `limit` of every whole dim to its (local) size.
    void localizeAttributes();
  }];
}

def Shardc_ConcatenateOp : Shardc_TensorOp<"concatenate", [InferTypeOpAdaptor]> {
  let summary = "Joins its operands along `dimension`, in operand order.";
  let description = [{
    As StableHLO's `concatenate`: the operands agree in every dim but
    `dimension`, and the result's `dimension` is the sum of theirs.

    ```mlir
    %qkv = shardc.concatenate %q, %k, %v dimension = 1 : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x192xf32>
    ```

    Constraints: at least one operand; all have the same rank, at least 1,
    and the same element type; `dimension` is in `[0, rank)`; the other dims
    are equal; the result type is inferred.
  }];
  let arguments = (ins Variadic<Shardc_Tensor>:$inputs, I64Attr:$dimension);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = [{
    $inputs `dimension` `=` $dimension attr-dict `:` functional-type(operands, results)
  }];
}

def Shardc_PadOp : Shardc_TensorOp<"pad", [InferTypeOpAdaptor]> {
  let summary = "Surrounds (and interleaves) the operand with a padding value.";
  let description = [{
    As StableHLO's `pad` with non-negative amounts: in dim `d`, `low[d]`
    copies of `padding_value` (a 0-d tensor) come before the operand's
    elements, `interior[d]` between each two of them, and `high[d]` after,
    so the result has `low + size + max(size - 1, 0) * interior + high`
    elements. `interior` may be left out (all 0).

    ```mlir
    %z = shardc.constant dense<0.0> : tensor<f32>
    %p = shardc.pad %x, %z low = [0, 1] high = [0, 2] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x11xf32>
    %s = shardc.pad %x, %z low = [0, 0] high = [0, 0] interior = [0, 1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x15xf32>
    ```

    Constraints: `padding_value` is a 0-d tensor of the operand's element
    type; `low` and `high` have one entry per operand dim, and `interior`
    one too or none; every amount is `>= 0`; the result type is inferred.
  }];
  let arguments = (ins Shardc_Tensor:$input, Shardc_Tensor:$padding_value,
                       DenseI64ArrayAttr:$low, DenseI64ArrayAttr:$high,
                       Shardc_DimsDefaultEmpty:$interior);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $padding_value `low` `=` $low `high` `=` $high
    (`interior` `=` $interior^)? attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// `interior`, with the default (all 0) spelled out.
    ::llvm::SmallVector<int64_t> getInteriors();
  }];
}

include "shardc/Dialect/CompositeOps.td"
include "shardc/Dialect/IndexingOps.td"

//===----------------------------------------------------------------------===//
// SPMD-only ops (lib/Dialect/CollectiveOps.cpp; run by the interpreter and
// the simulator, which know the device)
//===----------------------------------------------------------------------===//

def Shardc_AxisIndexOp : Shardc_Op<"axis_index", [Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "This device's index in its group along `axes` (an i64 scalar).";
  let description = [{
    The device's group index over `axes` of `mesh`: the row-major
    linearization of its coordinates along `axes`, in the order listed (the
    first is most major), as the collectives number the members of a
    group. Like `jax.lax.axis_index`. It exists only in partitioned
    (`shardc.spmd`) programs, where local computations offset what they
    compute by the device's position: a vocab-parallel `gather` subtracts
    `axis_index * rows per device` from its ids, a sharded `iota` adds it.

    ```mlir
    // on ["data"=2, "model"=2], device 3 = (1, 1) gets 1, device 2 gets 0
    %d = shardc.axis_index on @mesh axes = ["model"] : tensor<i64>
    ```

    Constraints: `axes` is non-empty, names axes of `mesh`, each once; the
    result is `tensor<i64>` (inferred).
  }];
  let arguments = (ins FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes);
  let results = (outs Shardc_IndexTensor:$result);
  let assemblyFormat = "`on` $mesh `axes` `=` $axes attr-dict `:` type($result)";
}

include "shardc/Dialect/PointToPointOps.td"

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//
// Common semantics: the devices that share every mesh coordinate except those
// of `axes` form a *group*. Within a group a device's *index* is the
// row-major linearization of its coordinates along `axes`, in the order
// listed (the first is most major). Each collective acts independently in
// every group; sizes below are per device (local).

// Every collective implements CollectiveOpInterface; `kind` names its
// CollectiveKind enumerator. The interface's defaults (no dim, no pairs,
// a sum) are overridden in extraClassDeclaration where an op has one.
class Shardc_CollectiveOp<string mnemonic, string kind,
                          list<Trait> traits = []>
    : Shardc_Op<mnemonic, !listconcat(traits,
        [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
         Shardc_CollectiveOpInterface])> {
  code extraCollectiveDecl = [{
    /// Product of the sizes of `axes` on `mesh` (the group size).
    int64_t getGroupSize(MeshOp mesh);
    ::shardc::CollectiveKind getCollectiveKind() {
      return ::shardc::CollectiveKind::}] # kind # [{;
    }
  }];
}

def Shardc_AllGatherOp : Shardc_CollectiveOp<"all_gather", "AllGather", [Pure]> {
  let summary = "Concatenates the group's blocks along `dim`, in group-index order.";
  let description = [{
    Every device of a group receives the concatenation, along `dim`, of the
    operands of all devices of the group ordered by group index. Result dim
    `dim` is the operand's times the group size, or any size whose padded
    blocks (ceil(size / group size), docs/sharding.md#uneven-dims) are the
    operand's: then what lies past it, the padding of the last blocks, is
    dropped.

    ```mlir
    %g = shardc.all_gather %x on @mesh axes = ["x"] dim = 1 : tensor<4x32xf32> -> tensor<4x64xf32>
    %h = shardc.all_gather %y on @mesh axes = ["x"] dim = 1 : tensor<4x2xf32> -> tensor<4x7xf32>
    ```

    Constraints: `axes` is non-empty, names axes of `mesh`, each once; `dim`
    is in range; the result type is as above.
  }];
  let arguments = (ins Shardc_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = "$input `on` $mesh `axes` `=` $axes `dim` `=` $dim attr-dict `:` type($input) `->` type($result)";
  let extraClassDeclaration = extraCollectiveDecl # [{
    int64_t getCollectiveDim() { return getDim(); }
  }];
}

def Shardc_ReduceScatterOp : Shardc_CollectiveOp<"reduce_scatter", "ReduceScatter", [Pure]> {
  let summary = "Reduces over the group, then keeps this device's block along `dim`.";
  let description = [{
    Reduces (`reduction`, default sum) the operands of all devices of a group
    element by element; the device with group index `g` keeps block `g` of
    the result split along `dim` into group-size equal blocks. Result dim
    `dim` is the operand's divided by the group size, rounded up: a dim the
    group does not divide is padded at the end (docs/sharding.md#uneven-dims).
    This is how a partial sum becomes a sharded value with the fewest bytes
    moved.

    ```mlir
    %r = shardc.reduce_scatter %z on @mesh axes = ["x"] dim = 1 : tensor<4x64xf32> -> tensor<4x32xf32>
    ```

    Constraints: as for `all_gather`; result dim `dim` is
    ceil(operand dim / group size).
  }];
  let arguments = (ins Shardc_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim,
                       DefaultValuedAttr<Shardc_ReductionKindAttr, "ReductionKind::Sum">:$reduction);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = "$input `on` $mesh `axes` `=` $axes `dim` `=` $dim attr-dict `:` type($input) `->` type($result)";
  let extraClassDeclaration = extraCollectiveDecl # [{
    int64_t getCollectiveDim() { return getDim(); }
    ::shardc::ReductionKind getCollectiveReduction() { return getReduction(); }
  }];
}

def Shardc_AllReduceOp : Shardc_CollectiveOp<"all_reduce", "AllReduce",
    [Pure, SameOperandsAndResultType]> {
  let summary = "Reduces over the group; every device gets the full result.";
  let description = [{
    Every device of a group receives the element-wise reduction (`reduction`,
    default sum) of the operands of all devices of the group.

    ```mlir
    %s = shardc.all_reduce %z on @mesh axes = ["model"] : tensor<16x64xf32>
    %m = shardc.all_reduce %z on @mesh axes = ["model"] {reduction = #shardc.reduction<max>} : tensor<16x64xf32>
    ```

    Syntax: `$input on $mesh axes = $axes attr-dict : type($result)`, with
    `reduction` in the attribute dictionary unless it is `sum`.

    Every element type reduces: f32 in group order (bit-identical on every
    backend), i32 and i64 exactly (a sum wraps around), i1 with `max`,
    which is `or`.

    Constraints: `axes` is non-empty, names axes of `mesh`, each once; an
    i1 operand is not summed.
  }];
  let arguments = (ins Shardc_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes,
                       DefaultValuedAttr<Shardc_ReductionKindAttr, "ReductionKind::Sum">:$reduction);
  let results = (outs Shardc_Tensor:$result);
  // Written by hand (AllReduceSyntax.cpp) for a cheaper printer; the syntax
  // is the declarative one above.
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = extraCollectiveDecl # [{
    ::shardc::ReductionKind getCollectiveReduction() { return getReduction(); }
  }];
}

def Shardc_AllToAllOp : Shardc_CollectiveOp<"all_to_all", "AllToAll", [Pure]> {
  let summary = "Moves a split from `concat_dim` to `split_dim` across the group.";
  let description = [{
    Each device splits its operand along `split_dim` into group-size blocks
    and sends block `j` to the device of group index `j`; each device then
    concatenates the blocks it received along `concat_dim`, in group-index
    order. Result `split_dim` is divided by the group size (rounded up, the
    last blocks padded) and `concat_dim` multiplied by it, or, as for
    `all_gather`, cut to a size whose padded blocks are the operand's.

    ```mlir
    // [8,16] split on dim 0 over "x" -> split on dim 1 over "x"
    %t = shardc.all_to_all %v on @mesh axes = ["x"] split_dim = 1 concat_dim = 0 : tensor<4x16xf32> -> tensor<8x8xf32>
    ```

    Constraints: as for `all_gather`; `split_dim != concat_dim`; the result
    type is as above.
  }];
  let arguments = (ins Shardc_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$split_dim, I64Attr:$concat_dim);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = "$input `on` $mesh `axes` `=` $axes `split_dim` `=` $split_dim `concat_dim` `=` $concat_dim attr-dict `:` type($input) `->` type($result)";
  let extraClassDeclaration = extraCollectiveDecl # [{
    int64_t getCollectiveDim() { return getSplitDim(); }
    int64_t getCollectiveConcatDim() { return getConcatDim(); }
  }];
}

def Shardc_AllSliceOp : Shardc_CollectiveOp<"all_slice", "AllSlice", [Pure]> {
  let summary = "Keeps this device's block along `dim` (no communication).";
  let description = [{
    The device with group index `g` keeps block `g` of its operand split
    along `dim` into group-size equal blocks (of ceil(size / group size),
    the last ones padded). The operand is expected to be
    the same on every device of the group (replicated), so nothing moves.

    ```mlir
    %s = shardc.all_slice %x on @mesh axes = ["y"] dim = 0 : tensor<16x64xf32> -> tensor<4x64xf32>
    ```

    Constraints: as for `reduce_scatter`.
  }];
  let arguments = (ins Shardc_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = "$input `on` $mesh `axes` `=` $axes `dim` `=` $dim attr-dict `:` type($input) `->` type($result)";
  let extraClassDeclaration = extraCollectiveDecl # [{
    int64_t getCollectiveDim() { return getDim(); }
  }];
}

def Shardc_CollectivePermuteOp : Shardc_CollectiveOp<"collective_permute",
    "CollectivePermute", [Pure, SameOperandsAndResultType]> {
  let summary = "Sends each device's operand to another device of its group.";
  let description = [{
    `pairs` lists `[source, target]` group indices. The device of group
    index `target` receives the operand of `source`; a device that is no
    pair's target gets zeros.

    ```mlir
    // swap the two halves of the "x" axis
    %p = shardc.collective_permute %v on @mesh axes = ["x"] pairs = [[0, 1], [1, 0]] : tensor<4x8xf32>
    ```

    Constraints: as for `all_reduce`; every pair has two indices in
    `[0, group size)`; no source and no target appears twice.
  }];
  let arguments = (ins Shardc_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, ArrayAttr:$pairs);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = "$input `on` $mesh `axes` `=` $axes `pairs` `=` $pairs attr-dict `:` type($result)";
  let extraClassDeclaration = extraCollectiveDecl # [{
    ::llvm::SmallVector<std::pair<int64_t, int64_t>> getCollectivePairs() {
      return getSourceTargetPairs();
    }
    /// The (source, target) group-index pairs.
    ::llvm::SmallVector<std::pair<int64_t, int64_t>> getSourceTargetPairs();
  }];
}

#endif // SHARDC_DIALECT_SHARDCOPS_TD

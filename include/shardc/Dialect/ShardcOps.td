//===- ShardcOps.td - shardc operations --------------------*- tablegen -*-===//

#ifndef SHARDC_DIALECT_SHARDCOPS_TD
#define SHARDC_DIALECT_SHARDCOPS_TD

include "shardc/Dialect/ShardcDialect.td"
include "shardc/Dialect/ShardcAttrs.td"
include "shardc/Dialect/ShardingRuleInterface.td"
include "shardc/Dialect/DifferentiableOpInterface.td"
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

class Shardc_UnaryElementwiseOp<string mnemonic, string formula>
    : Shardc_Op<mnemonic, [Pure, SameOperandsAndResultType,
        DeclareOpInterfaceMethods<Shardc_ShardingRuleOpInterface>,
        DeclareOpInterfaceMethods<Shardc_DifferentiableOpInterface>]> {
  let summary = "Elementwise " # mnemonic # ": " # formula # ".";
  let description = [{
    Applies `}] # formula # [{` to every element. The result has the operand's
    type.

    ```mlir
    %1 = shardc.}] # mnemonic # [{ %0 : tensor<16x64xf32>
    ```

    Constraints: operand and result types are identical.
  }];
  let arguments = (ins Shardc_Tensor:$input);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Shardc_ReluOp : Shardc_UnaryElementwiseOp<"relu", "max(x, 0)">;
def Shardc_GeluOp : Shardc_UnaryElementwiseOp<"gelu",
    "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (tanh approximation)">;
def Shardc_ExpOp : Shardc_UnaryElementwiseOp<"exp", "e^x">;
def Shardc_LogOp : Shardc_UnaryElementwiseOp<"log", "ln(x)">;
def Shardc_NegOp : Shardc_UnaryElementwiseOp<"neg", "-x">;
def Shardc_TanhOp : Shardc_UnaryElementwiseOp<"tanh", "tanh(x)">;
def Shardc_SqrtOp : Shardc_UnaryElementwiseOp<"sqrt", "sqrt(x)">;
def Shardc_RsqrtOp : Shardc_UnaryElementwiseOp<"rsqrt", "1/sqrt(x)">;
def Shardc_SigmoidOp : Shardc_UnaryElementwiseOp<"sigmoid", "1/(1+e^-x)">;
def Shardc_StepOp : Shardc_UnaryElementwiseOp<"step", "x > 0 ? 1 : 0"> {
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

class Shardc_BinaryElementwiseOp<string mnemonic, string formula>
    : Shardc_Op<mnemonic, [Pure, SameOperandsAndResultType,
        DeclareOpInterfaceMethods<Shardc_ShardingRuleOpInterface>,
        DeclareOpInterfaceMethods<Shardc_DifferentiableOpInterface>]> {
  let summary = "Elementwise " # mnemonic # ": " # formula # ".";
  let description = [{
    Computes `}] # formula # [{` element by element. Both operands and the
    result have the same type; there is no implicit broadcasting (use
    `shardc.broadcast_in_dim`).

    ```mlir
    %2 = shardc.}] # mnemonic # [{ %0, %1 : tensor<16x64xf32>
    ```

    Constraints: operand and result types are identical.
  }];
  let arguments = (ins Shardc_Tensor:$lhs, Shardc_Tensor:$rhs);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Shardc_AddOp : Shardc_BinaryElementwiseOp<"add", "lhs + rhs">;
def Shardc_SubOp : Shardc_BinaryElementwiseOp<"sub", "lhs - rhs">;
def Shardc_MulOp : Shardc_BinaryElementwiseOp<"mul", "lhs * rhs">;
def Shardc_DivOp : Shardc_BinaryElementwiseOp<"div", "lhs / rhs">;
def Shardc_MaxOp : Shardc_BinaryElementwiseOp<"max", "max(lhs, rhs)">;

def Shardc_MatmulOp : Shardc_Op<"matmul",
    [Pure, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Shardc_ShardingRuleOpInterface>,
        DeclareOpInterfaceMethods<Shardc_DifferentiableOpInterface>]> {
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
  let arguments = (ins Shardc_Tensor:$lhs, Shardc_Tensor:$rhs);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

// A list of dims that may be left out, meaning none (a dot_general without
// batch dims); serializations may omit it.
def Shardc_DimsDefaultEmpty : DefaultValuedAttr<DenseI64ArrayAttr, "{}">;

def Shardc_DotGeneralOp : Shardc_Op<"dot_general",
    [Pure, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Shardc_ShardingRuleOpInterface>,
        DeclareOpInterfaceMethods<Shardc_DifferentiableOpInterface>]> {
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
  let arguments = (ins Shardc_Tensor:$lhs, Shardc_Tensor:$rhs,
                       Shardc_DimsDefaultEmpty:$lhs_batch_dims,
                       Shardc_DimsDefaultEmpty:$rhs_batch_dims,
                       Shardc_DimsDefaultEmpty:$lhs_contracting_dims,
                       Shardc_DimsDefaultEmpty:$rhs_contracting_dims);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `batch` `=` $lhs_batch_dims `x` $rhs_batch_dims `,`
    `contract` `=` $lhs_contracting_dims `x` $rhs_contracting_dims
    attr-dict `:` functional-type(operands, results)
  }];
}

class Shardc_ReduceOp<string mnemonic, string kind>
    : Shardc_Op<mnemonic, [Pure, InferTypeOpAdaptor,
        DeclareOpInterfaceMethods<Shardc_ShardingRuleOpInterface>,
        DeclareOpInterfaceMethods<Shardc_DifferentiableOpInterface>]> {
  let summary = "Reduces (" # kind # ") over the listed dimensions, dropping them.";
  let description = [{
    Combines the elements along each dimension in `dims` with `}] # kind # [{`;
    the result has those dimensions removed (like `jnp.}] # kind # [{(x, axis=dims)`).

    ```mlir
    %s = shardc.}] # mnemonic # [{ %x dims = [1] : (tensor<16x64xf32>) -> tensor<16xf32>
    ```

    Constraints: dims are in range, unique; the result type is inferred.
  }];
  let arguments = (ins Shardc_Tensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = "$input `dims` `=` $dims attr-dict `:` functional-type(operands, results)";
}

def Shardc_ReduceSumOp : Shardc_ReduceOp<"reduce_sum", "sum">;
def Shardc_ReduceMaxOp : Shardc_ReduceOp<"reduce_max", "max">;

def Shardc_TransposeOp : Shardc_Op<"transpose",
    [Pure, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Shardc_ShardingRuleOpInterface>,
        DeclareOpInterfaceMethods<Shardc_DifferentiableOpInterface>]> {
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
}

def Shardc_ReshapeOp : Shardc_Op<"reshape",
    [Pure, DeclareOpInterfaceMethods<Shardc_ShardingRuleOpInterface>,
        DeclareOpInterfaceMethods<Shardc_DifferentiableOpInterface>]> {
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
}

def Shardc_BroadcastInDimOp : Shardc_Op<"broadcast_in_dim",
    [Pure, DeclareOpInterfaceMethods<Shardc_ShardingRuleOpInterface>,
        DeclareOpInterfaceMethods<Shardc_DifferentiableOpInterface>]> {
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

def Shardc_ConstantOp : Shardc_Op<"constant",
    [ConstantLike, Pure, AllTypesMatch<["value", "result"]>,
     DeclareOpInterfaceMethods<Shardc_ShardingRuleOpInterface>,
        DeclareOpInterfaceMethods<Shardc_DifferentiableOpInterface>]> {
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

def Shardc_ShardingConstraintOp : Shardc_Op<"sharding_constraint",
    [Pure, SameOperandsAndResultType, DeclareOpInterfaceMethods<Shardc_ShardingRuleOpInterface>,
        DeclareOpInterfaceMethods<Shardc_DifferentiableOpInterface>]> {
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
// Collectives
//===----------------------------------------------------------------------===//
// Common semantics: the devices that share every mesh coordinate except those
// of `axes` form a *group*. Within a group a device's *index* is the
// row-major linearization of its coordinates along `axes`, in the order
// listed (the first is most major). Each collective acts independently in
// every group; sizes below are per device (local).

class Shardc_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Shardc_Op<mnemonic, !listconcat(traits,
        [DeclareOpInterfaceMethods<SymbolUserOpInterface>])> {
  code extraCollectiveDecl = [{
    /// Product of the sizes of `axes` on `mesh` (the group size).
    int64_t getGroupSize(MeshOp mesh);
  }];
}

def Shardc_AllGatherOp : Shardc_CollectiveOp<"all_gather", [Pure]> {
  let summary = "Concatenates the group's blocks along `dim`, in group-index order.";
  let description = [{
    Every device of a group receives the concatenation, along `dim`, of the
    operands of all devices of the group ordered by group index. Result dim
    `dim` is the operand's times the group size.

    ```mlir
    %g = shardc.all_gather %x on @mesh axes = ["x"] dim = 1 : tensor<4x32xf32> -> tensor<4x64xf32>
    ```

    Constraints: `axes` is non-empty, names axes of `mesh`, each once; `dim`
    is in range; the result type is as above.
  }];
  let arguments = (ins Shardc_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = "$input `on` $mesh `axes` `=` $axes `dim` `=` $dim attr-dict `:` type($input) `->` type($result)";
  let extraClassDeclaration = extraCollectiveDecl;
}

def Shardc_ReduceScatterOp : Shardc_CollectiveOp<"reduce_scatter", [Pure]> {
  let summary = "Reduces over the group, then keeps this device's block along `dim`.";
  let description = [{
    Reduces (`reduction`, default sum) the operands of all devices of a group
    element by element; the device with group index `g` keeps block `g` of
    the result split along `dim` into group-size equal blocks. Result dim
    `dim` is the operand's divided by the group size. This is how a partial
    sum becomes a sharded value with the fewest bytes moved.

    ```mlir
    %r = shardc.reduce_scatter %z on @mesh axes = ["x"] dim = 1 : tensor<4x64xf32> -> tensor<4x32xf32>
    ```

    Constraints: as for `all_gather`; operand dim `dim` is divisible by the
    group size.
  }];
  let arguments = (ins Shardc_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim,
                       DefaultValuedAttr<Shardc_ReductionKindAttr, "ReductionKind::Sum">:$reduction);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = "$input `on` $mesh `axes` `=` $axes `dim` `=` $dim attr-dict `:` type($input) `->` type($result)";
  let extraClassDeclaration = extraCollectiveDecl;
}

def Shardc_AllReduceOp : Shardc_CollectiveOp<"all_reduce", [Pure, SameOperandsAndResultType]> {
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

    Constraints: `axes` is non-empty, names axes of `mesh`, each once.
  }];
  let arguments = (ins Shardc_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes,
                       DefaultValuedAttr<Shardc_ReductionKindAttr, "ReductionKind::Sum">:$reduction);
  let results = (outs Shardc_Tensor:$result);
  // Written by hand (AllReduceSyntax.cpp) for a cheaper printer; the syntax
  // is the declarative one above.
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = extraCollectiveDecl;
}

def Shardc_AllToAllOp : Shardc_CollectiveOp<"all_to_all", [Pure]> {
  let summary = "Moves a split from `concat_dim` to `split_dim` across the group.";
  let description = [{
    Each device splits its operand along `split_dim` into group-size blocks
    and sends block `j` to the device of group index `j`; each device then
    concatenates the blocks it received along `concat_dim`, in group-index
    order. Result `split_dim` is divided by the group size and `concat_dim`
    multiplied by it.

    ```mlir
    // [8,16] split on dim 0 over "x" -> split on dim 1 over "x"
    %t = shardc.all_to_all %v on @mesh axes = ["x"] split_dim = 1 concat_dim = 0 : tensor<4x16xf32> -> tensor<8x8xf32>
    ```

    Constraints: as for `all_gather`; `split_dim != concat_dim`; operand
    `split_dim` is divisible by the group size.
  }];
  let arguments = (ins Shardc_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$split_dim, I64Attr:$concat_dim);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = "$input `on` $mesh `axes` `=` $axes `split_dim` `=` $split_dim `concat_dim` `=` $concat_dim attr-dict `:` type($input) `->` type($result)";
  let extraClassDeclaration = extraCollectiveDecl;
}

def Shardc_AllSliceOp : Shardc_CollectiveOp<"all_slice", [Pure]> {
  let summary = "Keeps this device's block along `dim` (no communication).";
  let description = [{
    The device with group index `g` keeps block `g` of its operand split
    along `dim` into group-size equal blocks. The operand is expected to be
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
  let extraClassDeclaration = extraCollectiveDecl;
}

def Shardc_CollectivePermuteOp : Shardc_CollectiveOp<"collective_permute",
    [Pure, SameOperandsAndResultType]> {
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
    /// The (source, target) group-index pairs.
    ::llvm::SmallVector<std::pair<int64_t, int64_t>> getSourceTargetPairs();
  }];
}

#endif // SHARDC_DIALECT_SHARDCOPS_TD

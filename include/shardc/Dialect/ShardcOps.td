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
include "shardc/Dialect/ValueDomainOpInterface.td"
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
def Shardc_ReductionTrait : NativeOpTrait<"Reduction"> {
  let cppNamespace = "::shardc::OpTrait";
}
def Shardc_MovesElementsTrait : NativeOpTrait<"MovesElements"> {
  let cppNamespace = "::shardc::OpTrait";
}

/// A tensor op whose rule, gradient and cost are defined in its family file
/// (lib/Dialect/<Family>Ops.cpp).
class Shardc_TensorOp<string mnemonic, list<Trait> traits = []>
    : Shardc_Op<mnemonic, !listconcat(traits, [Pure, Shardc_TensorOpTrait,
        DeclareOpInterfaceMethods<Shardc_ShardingRuleOpInterface>,
        DeclareOpInterfaceMethods<Shardc_DifferentiableOpInterface>,
        DeclareOpInterfaceMethods<Shardc_CostOpInterface>])>;

include "shardc/Dialect/ElementwiseOps.td"

/// getLinearOperands of a contraction: linear in each operand on its own.
defvar Shardc_ContractionLinearDecl = [{
    void getLinearOperands(::llvm::SmallVectorImpl<unsigned> &operands) {
      operands.append({0, 1});
    }
}];

def Shardc_MatmulOp : Shardc_TensorOp<"matmul", [InferTypeOpAdaptor,
    Shardc_KernelClass<"Gemm">]> {
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
  let extraClassDeclaration = Shardc_ContractionLinearDecl;
}

// A list of dims that may be left out, meaning none (a dot_general without
// batch dims); serializations may omit it.
def Shardc_DimsDefaultEmpty : DefaultValuedAttr<DenseI64ArrayAttr, "{}">;

def Shardc_DotGeneralOp : Shardc_TensorOp<"dot_general", [InferTypeOpAdaptor,
    Shardc_KernelClass<"Gemm">]> {
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
  let extraClassDeclaration = Shardc_ContractionLinearDecl;
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
    : Shardc_TensorOp<mnemonic, [InferTypeOpAdaptor, Shardc_ReductionTrait,
        Shardc_KernelClass<"Fusible">, Shardc_ValueDomainOpInterface]> {
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
def Shardc_ReduceMaxOp : Shardc_ReduceOp<"reduce_max", "max"> {
  // The max of exact values is one of them; its gradient goes to the
  // maximal elements, a mask a rounding difference flips.
  let extraClassDeclaration = [{
    static bool isCorrectlyRounded() { return true; }
    static ::shardc::Continuity getContinuity() {
      return ::shardc::Continuity::DerivativeJumps;
    }
  }];
}

def Shardc_TransposeOp : Shardc_TensorOp<"transpose", [InferTypeOpAdaptor,
    Shardc_MovesElementsTrait]> {
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

def Shardc_ReshapeOp : Shardc_TensorOp<"reshape", [Shardc_KernelClass<"View">,
    Shardc_MovesElementsTrait]> {
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

def Shardc_BroadcastInDimOp : Shardc_TensorOp<"broadcast_in_dim",
    [Shardc_KernelClass<"View">, Shardc_MovesElementsTrait]> {
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
    [ConstantLike, AllTypesMatch<["value", "result"]>,
     Shardc_KernelClass<"None">]> {
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
    [SameOperandsAndResultType, Shardc_KernelClass<"None">,
     Shardc_MovesElementsTrait]> {
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

def Shardc_IotaOp : Shardc_TensorOp<"iota", [Shardc_KernelClass<"Generated">]> {
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

def Shardc_CompareOp : Shardc_TensorOp<"compare", [InferTypeOpAdaptor,
    Shardc_KernelClass<"Fusible">]> {
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

def Shardc_SelectOp : Shardc_TensorOp<"select", [InferTypeOpAdaptor,
    Shardc_KernelClass<"Fusible">]> {
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

def Shardc_ConvertOp : Shardc_TensorOp<"convert", [InferTypeOpAdaptor,
    Shardc_KernelClass<"Fusible">, Shardc_MovesElementsTrait]> {
  let summary = "Elementwise conversion to another element type.";
  let description = [{
    Converts every element to `dtype`: integers to f32 exactly up to 2^24;
    f32 to bf16 or f16 rounds to nearest even (f16 is infinite from 65520);
    a float to an integer rounds toward zero, NaN gives 0, out of range
    saturates; anything to i1 is `x != 0`; i1 to anything is 0 or 1. The
    cotangent passes through, converted back, between float types; to or
    from an integer type there is no cotangent.

    ```mlir
    %ids_f = shardc.convert %ids dtype = f32 : (tensor<8xi32>) -> tensor<8xf32>
    ```

    Constraints: `dtype` is f32, bf16, f16, i1, i32 or i64; the result is
    the operand's shape with `dtype` (inferred).
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
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    DeclareOpInterfaceMethods<Shardc_CostOpInterface>,
    Shardc_KernelClass<"Generated">]> {
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

include "shardc/Dialect/CollectiveOps.td"

#endif // SHARDC_DIALECT_SHARDCOPS_TD

//===- CollectiveOps.td - the collectives ------------------*- tablegen -*-===//
//
// Included by ShardcOps.td after the point-to-point ops: the collectives
// the partitioner inserts and users may write (lib/Dialect/CollectiveOps.cpp
// holds their verifiers, rules and costs).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_COLLECTIVEOPS_TD
#define SHARDC_DIALECT_COLLECTIVEOPS_TD

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

#endif // SHARDC_DIALECT_COLLECTIVEOPS_TD

//===- IndexingOps.td - gather and scatter_add -------------*- tablegen -*-===//
//
// Included by ShardcOps.td at the place these definitions had there: it
// uses the classes and constraints defined before it.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_INDEXINGOPS_TD
#define SHARDC_DIALECT_INDEXINGOPS_TD

//===----------------------------------------------------------------------===//
// Indexing: gather, scatter_add (lib/Dialect/IndexingOps.cpp,
// lib/Interpreter/IndexingKernels.cpp)
//===----------------------------------------------------------------------===//
// Integer ids pick rows (or, with `axis`, slices) of a table. The ids' dims
// and the table's other dims pass through; the table's gathered `axis`
// sharded makes each device look up only the ids in its block of rows
// (Megatron's VocabParallelEmbedding), which the ops' local computation
// (ShardingRuleOpInterface::buildLocalComputation) spells out with
// `axis_index` and `mode = "skip"`.

// How an op treats an id outside [0, table size along axis).
def Shardc_IndexModeAttr : DefaultValuedStrAttr<StrAttr, "error">;

def Shardc_GatherOp : Shardc_TensorOp<"gather", [InferTypeOpAdaptor]> {
  let summary = "Takes the table's slices at integer ids along `axis` (NumPy's take).";
  let description = [{
    `numpy.take(table, ids, axis)`: the result's shape is the table's with
    dim `axis` replaced by the ids' dims, and
    `result[a..., i..., b...] = table[a..., ids[i...], b...]`. An embedding
    lookup is `gather(table[V, D], ids[B, S], axis = 0) -> [B, S, D]`:

    ```mlir
    %emb = shardc.gather %table, %tokens axis = 0 : (tensor<256x64xf32>, tensor<8x16xi32>) -> tensor<8x16x64xf32>
    ```

    `mode` says what an id outside `[0, table.shape[axis])` does: `"error"`
    (the default) makes running the op a diagnostic naming the id;
    `"skip"` gives zeros for it. The partitioner writes `"skip"` when the
    table's `axis` is sharded: device `d` holds rows `[d * n, (d + 1) * n)`,
    looks up `ids - d * n` in its block and gets zeros for the ids other
    devices hold, so the result is a partial sum over the table's axes (one
    all-reduce completes it). Where the ids' dims are split unevenly, their
    padding is set to 0 before a lookup in mode `"error"`, so that it
    cannot name a row that does not exist
    (docs/partitioning.md#uneven-dims).

    The gradient of the table is `scatter_add` of the cotangent at the ids;
    the ids (integers) get none.

    Constraints: `ids` is i32 or i64; `axis` is in `[0, table rank)`; `mode`
    is `"error"` or `"skip"`; the result type is inferred.
  }];
  let arguments = (ins Shardc_Tensor:$table, Shardc_IndexTensor:$ids,
                       I64Attr:$axis, Shardc_IndexModeAttr:$mode);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = [{
    $table `,` $ids `axis` `=` $axis (`mode` `=` $mode^)? attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    ::mlir::LogicalResult buildLocalComputation(::mlir::OpBuilder &builder,
        ::mlir::ValueRange localOperands, ::mlir::TypeRange localResultTypes,
        const ::shardc::FactorLayout &layout,
        ::llvm::SmallVectorImpl<::mlir::Value> &results);
    ::shardc::PaddingFill getPaddingFill(unsigned operand,
        const ::shardc::ShardingRule &rule, int64_t factor);
  }];
}

def Shardc_ScatterAddOp : Shardc_TensorOp<"scatter_add", [InferTypeOpAdaptor]> {
  let summary = "Adds updates into a table at integer ids along `axis` (gather's transpose).";
  let description = [{
    Starts from `table` and, for every index `i...` of `ids`, adds the
    update slice `updates[a..., i..., b...]` to `table[a..., ids[i...],
    b...]`; repeated ids accumulate. `updates` has the shape of
    `gather(table, ids, axis)`. It is gather's gradient: the embedding
    table's gradient is `scatter_add(zeros, tokens, g)`.

    ```mlir
    %dtable = shardc.scatter_add %zeros, %tokens, %g axis = 0 : (tensor<256x64xf32>, tensor<8x16xi32>, tensor<8x16x64xf32>) -> tensor<256x64xf32>
    ```

    `mode`: `"error"` (the default) makes an id outside `[0,
    table.shape[axis])` a diagnostic; `"skip"` drops its update. With the
    table's `axis` sharded, each device adds only the updates whose ids
    fall in its rows (`"skip"` after subtracting its offset): no
    collective. With the ids' dims sharded, each device's sum is partial.

    Gradients: the table's cotangent passes through, the updates' is
    `gather` of it at the ids, the ids get none.

    Constraints: `table` and `updates` are floating point of one element
    type; `ids` is i32 or i64; `axis` is in `[0, table rank)`; `updates`
    has the shape of `gather(table, ids, axis)`; `mode` is `"error"` or
    `"skip"`; the result has the table's type (inferred).
  }];
  let arguments = (ins Shardc_FloatTensor:$table, Shardc_IndexTensor:$ids,
                       Shardc_FloatTensor:$updates, I64Attr:$axis,
                       Shardc_IndexModeAttr:$mode);
  let results = (outs Shardc_FloatTensor:$result);
  let assemblyFormat = [{
    $table `,` $ids `,` $updates `axis` `=` $axis (`mode` `=` $mode^)? attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    ::mlir::LogicalResult buildLocalComputation(::mlir::OpBuilder &builder,
        ::mlir::ValueRange localOperands, ::mlir::TypeRange localResultTypes,
        const ::shardc::FactorLayout &layout,
        ::llvm::SmallVectorImpl<::mlir::Value> &results);
  }];
}


#endif // SHARDC_DIALECT_INDEXINGOPS_TD

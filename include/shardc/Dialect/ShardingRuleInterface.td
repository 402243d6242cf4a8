//===- ShardingRuleInterface.td - per-op sharding rules ----*- tablegen -*-===//

#ifndef SHARDC_DIALECT_SHARDINGRULEINTERFACE_TD
#define SHARDC_DIALECT_SHARDINGRULEINTERFACE_TD

include "mlir/IR/OpBase.td"

def Shardc_ShardingRuleOpInterface : OpInterface<"ShardingRuleOpInterface"> {
  let cppNamespace = "::shardc";
  let description = [{
    A tensor op whose operand and result shardings are related by a
    *sharding rule* in factor form (see `shardc/Dialect/ShardingRule.h` and
    docs/propagation.md). Propagation and the partitioner only see an op
    through its rule. An elementwise op gets the identity rule from its ODS
    class; any other op implements it in its family's file
    (lib/Dialect/*Ops.cpp), next to its verifier, gradient and cost.
    `--shardc-print-sharding-rules` shows each op's rule as a
    `#shardc.sharding_rule` attribute.

    `shardc.matmul %x, %w : (tensor<16x64xf32>, tensor<64x128xf32>) -> ...`
    has the rule `([f1, f0], [f0, f2]) -> ([f1, f2])`, with `f0` (the
    contracting dimension, size 64) a reduction factor.
  }];
  let methods = [
    InterfaceMethod<[{
        The op's factors and, for each operand then each result, the factors
        every dimension is made of. Built from the op's types and attributes,
        which the op's verifier has checked.
      }],
      "::shardc::ShardingRule", "getShardingRule", (ins)>,
    InterfaceMethod<[{
        Called by the partitioner once the op has its local operand and
        result types: rewrites the attributes that spell out the size of a
        dim the rule passes through (a slice's `limit` of a whole dim),
        which must follow the local size. Most ops have none (the default
        does nothing); an op that has some defines `localizeAttributes()`.
      }],
      "void", "localizeAttributes", (ins), [{}], [{ return; }]>,
    InterfaceMethod<[{
        Builds, at `builder`'s insertion point, what one device computes for
        this op in `layout` (the mesh axes sharding each factor of the
        op's rule), from its local operands, and appends the local results
        (of types `localResultTypes`). The default clones the op with the
        local operands and types and calls `localizeAttributes()`: right
        for every op whose local result is the op applied to the local
        blocks. An op whose sharded factor changes what a block means
        defines its own: `gather` with its table's axis sharded subtracts
        the device's row offset (`axis_index`) from its ids and skips the
        ids other devices hold; a sharded `iota` adds its offset.
      }],
      "::mlir::LogicalResult", "buildLocalComputation",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::ValueRange":$localOperands,
           "::mlir::TypeRange":$localResultTypes,
           "const ::shardc::FactorLayout &":$layout,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$results), [{}], [{
        return ::shardc::buildClonedLocalComputation(
            $_op.getOperation(), builder, localOperands, localResultTypes,
            results);
      }]>,
    InterfaceMethod<[{
        What the padding of operand `operand` must hold along a dim made of
        factor `factor` of `rule` (the op's rule) when the partitioner splits
        that factor over mesh axes that do not divide it
        (docs/partitioning.md#uneven-dims). Each device's block then ends in
        padding of unspecified contents; the partitioner overwrites it with
        this fill before the op's local computation reads it. The default
        follows the factor's kind: a parallel factor carries padding into
        the result's padding (`Any`), a reduction factor sums it (`Zero`,
        on both sides of a contraction), a max_reduction factor maxes it
        (`Lowest`). An op reading padding otherwise says so here: `gather`
        in mode "error" wants its ids' padding `Zero`, an id in range.
      }],
      "::shardc::PaddingFill", "getPaddingFill",
      (ins "unsigned":$operand, "const ::shardc::ShardingRule &":$rule,
           "int64_t":$factor), [{}], [{
        return ::shardc::getDefaultPaddingFill(rule.getFactor(factor).kind);
      }]>,
    InterfaceMethod<[{
        The sets of operands through which a pending partial sum may pass:
        each entry is a bit mask of operands such that, when exactly those
        operands are pending sums over the same mesh axes and every other
        operand is replicated over those axes, computing the op on the
        local summands gives the summands of the result (the op is linear
        in those operands jointly). `add` and `sub` give `0b11` (both
        summed: `Σa + Σb = Σ(a + b)`; one alone would add the other once
        per device), `neg` gives `0b1`, `mul` gives `0b01` and `0b10` (one
        factor summed, the other replicated), `div` gives `0b01`. The
        partitioner then keeps the result pending instead of reducing the
        operands, so that gradients summed from several partial
        contributions are reduced once. Default: none.
      }],
      "void", "getPartialSumOperandSets",
      (ins "::llvm::SmallVectorImpl<unsigned> &":$sets), [{}],
      [{ return; }]>,
    InterfaceMethod<[{
        The operands the op is linear in, each on its own: when operand `i`
        alone is a pending sum over mesh axes no factor of the layout uses
        (the other operands then replicated over them), the op computed on
        the local summands gives the summands of its result. A contraction
        gives both operands (`(Σa)·b = Σ(a·b)`, `a·(Σb) = Σ(a·b)`).
        Unlike getPartialSumOperandSets, a value read by several such ops
        (a gathered weight read by the forward product and by its input
        gradient) may stay pending through all of them: the partitioner
        keeps the sum a lookup in a split table leaves (an op summing a dim
        of one operand alone) pending through readers that all declare it
        here, and prices its reduction at their results rather than at the
        value (docs/partitioning.md, "Through contractions"). The
        auto-sharder does not read it. Default: none.
      }],
      "void", "getLinearOperands",
      (ins "::llvm::SmallVectorImpl<unsigned> &":$operands), [{}],
      [{ return; }]>
  ];
}

#endif // SHARDC_DIALECT_SHARDINGRULEINTERFACE_TD

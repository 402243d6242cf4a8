//===- ShardcAttrs.td - shardc attributes ------------------*- tablegen -*-===//

#ifndef SHARDC_DIALECT_SHARDCATTRS_TD
#define SHARDC_DIALECT_SHARDCATTRS_TD

include "shardc/Dialect/ShardcDialect.td"
include "mlir/IR/EnumAttr.td"

def Shardc_ShardingAttr : Shardc_Attr<"Sharding", "sharding"> {
  let summary = "How a tensor is laid out over a device mesh (PartitionSpec form).";
  let description = [{
    A sharding names a mesh and, for each tensor dimension, the list of mesh
    axes that dimension is split over, major to minor. An empty list means the
    dimension is replicated. The optional `partial` set names the mesh axes
    over which the value is a *pending partial sum*: the true value is the sum
    of the per-device values over each such axis.

    ```mlir
    // dim 0 split over "y", dim 1 split over "x": a [16,64] tensor on the
    // mesh ["y"=4, "x"=2] is a [4,32] block on every device.
    #shardc.sharding<@mesh, [{"y"}, {"x"} ]>
    // dim 0 split over "y" then "x" (8 blocks), dim 1 replicated.
    #shardc.sharding<@mesh, [{"y", "x"}, {} ]>
    // replicated data, but a pending sum over "x".
    #shardc.sharding<@mesh, [{}, {} ], partial = {"x"}>
    ```

    The spelling in JSON is JAX's PartitionSpec: `["y", "x"]`,
    `[["y", "x"], null]`.

    Constraints (checked where the attribute is attached, since they need the
    mesh and the value's type):
    * the mesh symbol names a `shardc.mesh`;
    * the number of dimension entries equals the tensor rank;
    * every axis exists in the mesh and is used at most once, across the
      dimensions and the partial set together;
    * a dimension its axes do not divide is padded: a block of
      ceil(size / product of the axes' sizes) on every device, the last
      ones holding padding (docs/sharding.md#uneven-dims).
  }];
  let parameters = (ins
    "::mlir::FlatSymbolRefAttr":$mesh,
    ArrayRefParameter<"::mlir::ArrayAttr", "axes of each tensor dim">:$dims,
    "::mlir::ArrayAttr":$partial
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "::mlir::FlatSymbolRefAttr":$mesh,
                     "::llvm::ArrayRef<::llvm::SmallVector<::llvm::StringRef>>":$dimAxes,
                     "::llvm::ArrayRef<::llvm::StringRef>":$partialAxes)>
  ];
  let extraClassDeclaration = [{
    /// Number of tensor dimensions this sharding describes.
    size_t getRank() const { return getDims().size(); }
    /// Axes splitting dimension `dim`, major to minor.
    ::llvm::SmallVector<::llvm::StringRef> getDimAxes(size_t dim) const;
    /// Axes over which the value is a pending partial sum.
    ::llvm::SmallVector<::llvm::StringRef> getPartialAxes() const;
    bool isPartial() const { return !getPartial().empty(); }
    /// True if no dimension is split and nothing is partial.
    bool isFullyReplicated() const;
    /// A fully replicated sharding of the given rank on `mesh`.
    static ShardingAttr getReplicated(::mlir::MLIRContext *ctx,
                                      ::mlir::FlatSymbolRefAttr mesh,
                                      size_t rank);
  }];
}

def Shardc_ReductionKind : I32EnumAttr<"ReductionKind",
    "how a collective combines the values of a device group", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Max", 1, "max">
    ]> {
  let cppNamespace = "::shardc";
  let genSpecializedAttr = 0;
}

def Shardc_ReductionKindAttr : EnumAttr<Shardc_Dialect, Shardc_ReductionKind, "reduction"> {
  let summary = "Reduction applied by all_reduce / reduce_scatter.";
  let description = [{
    `sum` (the default) or `max`. Written `#shardc.reduction<sum>`.
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Shardc_ShardingRuleAttr : Shardc_Attr<"ShardingRule", "sharding_rule"> {
  let summary = "An op's sharding rule in factor form, printable and parsable.";
  let description = [{
    The `shardc::ShardingRule` of an op (see `shardc/Dialect/ShardingRule.h`
    and docs/propagation.md) as an attribute, so that rules can be printed,
    pinned by FileCheck tests and read back. `--shardc-print-sharding-rules`
    attaches every op's rule as `sharding_rule = #shardc.sharding_rule<...>`.

    ```mlir
    // matmul [16,64] x [64,128]: k=f0 (summed away), i=f1, j=f2.
    #shardc.sharding_rule<([f1, f0], [f0, f2]) -> ([f1, f2]) {f0=64 reduction, f1=16, f2=128}>
    // reshape [8,4] -> [32]: the merged dim is the compound (f0 f1).
    #shardc.sharding_rule<([f0, f1]) -> ([(f0 f1)]) {f0=8, f1=4}>
    // broadcast_in_dim [1,4] -> [8,4]: the expanded size-1 dim has no factor.
    #shardc.sharding_rule<([(), f1]) -> ([f0, f1]) {f0=8, f1=4}>
    // a constant: no operands; reduce_max to a scalar: a rank-0 result.
    #shardc.sharding_rule<() -> ([f0]) {f0=4}>
    #shardc.sharding_rule<([f0]) -> ([]) {f0=4 max_reduction}>
    // a slice of dim 0: that dim cannot be sharded.
    #shardc.sharding_rule<([f0]) -> ([f1]) {f0=8 need_replication, f1=4 need_replication}>
    ```

    The body is exactly what `ShardingRule::print` writes (the attribute
    prints through it, and diagnostics quote rules in the same form): the
    operands' and then the results' dimensions, one `[...]` per tensor and
    one entry per dimension: a factor `fN`, a compound `(fA fB ...)` (major
    to minor) or `()`; then every factor in order with its size and, unless
    it is parallel, its kind (`reduction`, `max_reduction` or
    `need_replication`).

    It carries the information of Shardy's `#sdy.op_sharding_rule<([i, k],
    [k, j])->([i, j]) {i=8, j=8, k=16} reduction={k}>` in shardc's own
    spelling: factors are numbered (`f0`, `f1`, ... in the order the rule
    creates them) rather than lettered, a factor's kind is written next to
    its size instead of in `reduction={...}`/`need_replication={...}`
    lists, and compound dims are written `(f0 f1)` where Shardy concatenates
    letters (`ij`). `max_reduction` (a reduction by max: sharding it leaves
    each device the max of its block, combined by an all_reduce of kind max)
    has no Shardy counterpart.

    Constraints (the verifier checks them, so a parsed rule is a valid
    `ShardingRule`):
    * the factors are listed once each, in order `f0, f1, ...`;
    * every factor size is non-negative;
    * every dimension names existing factors, and a factor appears at most
      once within one tensor.
    Whether the rule fits an op's operand and result shapes is checked where
    it is used (`ShardingRule::matchesOp`).
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "size of each factor">:$factorSizes,
    ArrayRefParameter<"::shardc::FactorKind", "kind of each factor">:$factorKinds,
    "unsigned":$numOperands,
    ArrayRefParameter<"int64_t", "dims of each tensor (operands, results)">:$tensorRanks,
    ArrayRefParameter<"int64_t", "factor count of each dim, all tensors">:$dimLengths,
    ArrayRefParameter<"int64_t", "factors of each dim, all dims flattened">:$dimFactors
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "const ::shardc::ShardingRule &":$rule)>
  ];
  let extraClassDeclaration = [{
    /// The rule this attribute holds.
    ::shardc::ShardingRule getRule() const;
  }];
}

#endif // SHARDC_DIALECT_SHARDCATTRS_TD

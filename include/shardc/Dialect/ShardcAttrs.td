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
    * every dimension size is divisible by the product of its axes' sizes
      (uneven dimensions are rejected; the error names the value, the
      dimension, its size and the axes).
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

#endif // SHARDC_DIALECT_SHARDCATTRS_TD

//===- CollectiveOpInterface.td - what a collective is -----*- tablegen -*-===//

#ifndef SHARDC_DIALECT_COLLECTIVEOPINTERFACE_TD
#define SHARDC_DIALECT_COLLECTIVEOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def Shardc_CollectiveOpInterface : OpInterface<"CollectiveOpInterface"> {
  let cppNamespace = "::shardc";
  let description = [{
    An op that exchanges blocks of its single operand between the devices of
    a *group*: the devices sharing every mesh coordinate except those of
    `axes`. Everything that executes, prices, explains or differentiates an
    SPMD program asks this interface what a collective is and what it moves,
    so only the ops' definitions and the code creating a particular
    collective name the op classes.

    ```mlir
    %g = shardc.all_gather %x on @mesh axes = ["x"] dim = 1 : tensor<4x32xf32> -> tensor<4x64xf32>
    ```

    reads back as kind `AllGather`, mesh `@mesh`, axes `["x"]`, dim 1, no
    reduction; over a group of 2 each device sends its 512 bytes once
    (`getBytesSentPerDevice(2, 512) == 512`, in one ring message).

    Constraints: the op has one operand and one result; `mesh` names a
    `shardc.mesh`; `axes` names its axes (the ops' verifiers check both).
  }];
  let methods = [
    InterfaceMethod<"The mesh whose axes form the groups.",
      "::mlir::FlatSymbolRefAttr", "getMeshAttr">,
    InterfaceMethod<"The mesh axes of the groups, major to minor (strings).",
      "::mlir::ArrayAttr", "getAxes">,
    InterfaceMethod<"Which collective this is.",
      "::shardc::CollectiveKind", "getCollectiveKind">,
    InterfaceMethod<[{
        The tensor dim the collective gathers, scatters or slices along
        (all_to_all: its split_dim); -1 for collectives without one.
      }],
      "int64_t", "getCollectiveDim", (ins), [{}], [{ return -1; }]>,
    InterfaceMethod<"all_to_all: the dim blocks are concatenated along; -1 otherwise.",
      "int64_t", "getCollectiveConcatDim", (ins), [{}], [{ return -1; }]>,
    InterfaceMethod<[{
        The element-wise reduction the collective applies; sum for those
        that reduce nothing (the value a reduction-less step is priced as).
      }],
      "::shardc::ReductionKind", "getCollectiveReduction", (ins), [{}],
      [{ return ::shardc::ReductionKind::Sum; }]>,
    InterfaceMethod<[{
        collective_permute: its (source, target) group-index pairs (entries
        that are not pairs of integers are left out); empty otherwise.
      }],
      "::llvm::SmallVector<std::pair<int64_t, int64_t>>", "getCollectivePairs",
      (ins), [{}], [{ return {}; }]>,
    InterfaceMethod<[{
        Bytes each device sends when its operand block has `localBytes`
        bytes and its group `groupSize` devices, with ring algorithms (see
        docs/cost-model.md). A permutation whose every pair keeps its block
        in place sends nothing.
      }],
      "int64_t", "getBytesSentPerDevice",
      (ins "int64_t":$groupSize, "int64_t":$localBytes), [{}], [{
        ::shardc::CollectiveKind kind = $_op.getCollectiveKind();
        if (kind == ::shardc::CollectiveKind::CollectivePermute &&
            ::shardc::isIdentityPermutation($_op.getCollectivePairs()))
          return 0;
        return ::shardc::collectiveBytesPerDevice(kind, groupSize, localBytes);
      }]>,
  ];
}

#endif // SHARDC_DIALECT_COLLECTIVEOPINTERFACE_TD

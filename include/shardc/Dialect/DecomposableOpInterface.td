//===- DecomposableOpInterface.td - composites expand ------*- tablegen -*-===//

#ifndef SHARDC_DIALECT_DECOMPOSABLEOPINTERFACE_TD
#define SHARDC_DIALECT_DECOMPOSABLEOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def Shardc_DecomposableOpInterface : OpInterface<"DecomposableOpInterface"> {
  let cppNamespace = "::shardc";
  let description = [{
    A *composite* op (softmax, layer_norm, cross_entropy, ...): a name for a
    fixed expression over primitive tensor ops, which it builds on request.
    `--shardc-decompose` replaces every composite by its expression before
    anything else sees the program, so composites need no sharding rule,
    kernel, cost or gradient rule: the primitives they expand to have them.
    The expansion lives with the op (lib/Dialect/CompositeOps.cpp); the pass
    names no op.

    `%p = shardc.softmax %x axis = 1` builds
    `exp(x - stop_gradient(max(x))) / sum(exp(...))` over dim 1.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds the op's expression at `builder`'s insertion point, at the
        op's location, out of primitive (non-composite) ops, and returns the
        value that replaces the op's result (of the result's type).
      }],
      "::mlir::Value", "decompose", (ins "::mlir::OpBuilder &":$builder)>
  ];
}

#endif // SHARDC_DIALECT_DECOMPOSABLEOPINTERFACE_TD

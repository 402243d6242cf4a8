//===- DifferentiableOpInterface.td - gradient rules -------*- tablegen -*-===//

#ifndef SHARDC_DIALECT_DIFFERENTIABLEOPINTERFACE_TD
#define SHARDC_DIALECT_DIFFERENTIABLEOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def Shardc_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::shardc";
  let description = [{
    A tensor op with a *gradient rule*: given the cotangent of its result
    (`dL/dresult`), it builds the cotangents of its operands (`dL/doperand`,
    the vector-Jacobian product). `--shardc-autodiff` sees an op only through
    this rule. An elementwise op writes its rule in its ODS line (over a
    `GradientBuilder`); any other op implements it in its family's file
    (lib/Dialect/*Ops.cpp).

    `%h = shardc.matmul %x, %w` with result cotangent `%g` builds
    `dot_general %g, %w contract = [1] x [1]` for `%x` (`g w^T`) and
    `dot_general %x, %g contract = [0] x [0]` for `%w` (`x^T g`).
  }];
  let methods = [
    InterfaceMethod<[{
        Builds, at `builder`'s insertion point and at `loc`, the cotangent of
        every operand `i` for which `wanted[i]` is true, given
        `resultCotangent` (of the result's type). `operandCotangents` gets
        one entry per operand: the cotangent (of the operand's type), or null
        where it was not wanted or is zero everywhere (e.g. a step's). Ops
        the rule builds are new; it may also return `resultCotangent` itself
        (add's operands). Fails with a diagnostic at the op for element
        types the rule cannot handle.
      }],
      "::mlir::LogicalResult", "buildOperandCotangents",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
           "::mlir::Value":$resultCotangent,
           "::llvm::ArrayRef<bool>":$wanted,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandCotangents)>
  ];
}

#endif // SHARDC_DIALECT_DIFFERENTIABLEOPINTERFACE_TD

//===- KernelOpInterface.td - per-op interpreter kernels ---*- tablegen -*-===//

#ifndef SHARDC_DIALECT_KERNELOPINTERFACE_TD
#define SHARDC_DIALECT_KERNELOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def Shardc_KernelOpInterface : OpInterface<"KernelOpInterface"> {
  let cppNamespace = "::shardc";
  let description = [{
    A tensor op the interpreter can run on one device: its *kernel* computes
    the op's single result from runtime tensors (`shardc::Tensor`).

    The dialect only declares the interface (and promises it for every op
    with the `TensorOp` trait); the kernels are external models attached by
    lib/Interpreter, which owns Eigen and BLAS, so the dialect does not
    depend on them. One kernel file per op family attaches its models
    (`ElementwiseKernels.cpp` attaches one to every op with an elementwise
    trait, generically from the ODS formula). A context that executes
    programs must call `shardc::registerKernelModels(registry)` (declared in
    `shardc/Interpreter/Kernels.h`); where it was not called, running an op
    is a diagnostic ("kernels are not registered"), not a crash.

    `shardc.exp %x : tensor<4xf32>` run on `[0, 1, 2, 3]` gives
    `[1, e, e^2, e^3]`; `evaluateTensorOp` does the checks every op shares
    (f32, static shapes, operands matching the types, the result's byte
    budget) and then calls `evaluateKernel`.

    Constraints: `evaluateKernel` gets one tensor per operand, each
    matching its operand's type, and a result already allocated with the
    result type; it still checks what is specific to its op, so unverified
    IR cannot make it read out of bounds.
  }];
  let methods = [
    InterfaceMethod<[{
        Computes the op's result into `result` (allocated with the result
        type; zero-filled when `accumulatesIntoZeros()`). Errors are
        reported at the op and fail. `maxTensorBytes` bounds any
        temporary the kernel allocates.
      }],
      "::mlir::LogicalResult", "evaluateKernel",
      (ins "::llvm::ArrayRef<const ::shardc::Tensor *>":$operands,
           "::shardc::Tensor &":$result, "uint64_t":$maxTensorBytes)>,
    InterfaceMethod<[{
        True when the kernel accumulates into its result (reductions), which
        must then start as zeros; every other kernel writes each element,
        so its result is allocated uninitialized.
      }],
      "bool", "accumulatesIntoZeros", (ins)>,
    InterfaceMethod<[{
        True when the result is `input`'s data relabelled (reshape,
        sharding_constraint): the interpreter may then hand the operand's
        buffer over when the operand dies at this op, instead of running the
        kernel (which copies).
      }],
      "bool", "canRelabelOperand", (ins "const ::shardc::Tensor &":$input)>,
    InterfaceMethod<[{
        The operand whose values the result starts from and the kernel
        updates (scatter_add's table), or -1. When that operand dies at
        this op, the interpreter may hand its buffer over as the result
        (`evaluateKernel` then gets the same tensor as that operand and as
        its result) instead of a fresh one the kernel copies the operand
        into.
      }],
      "int64_t", "updatesOperandInPlace", (ins)>
  ];
}

#endif // SHARDC_DIALECT_KERNELOPINTERFACE_TD

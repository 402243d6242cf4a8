//===- CostOpInterface.td - per-op compute cost ------------*- tablegen -*-===//

#ifndef SHARDC_DIALECT_COSTOPINTERFACE_TD
#define SHARDC_DIALECT_COSTOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def Shardc_CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::shardc";
  let description = [{
    A tensor op's compute cost in floating-point operations, as a function
    of the sizes of the factors of its sharding rule (see
    `ShardingRuleOpInterface`). It is the one cost model of shardc (see
    docs/cost-model.md): the partitioner prices a candidate layout with the
    *local* factor sizes (global size / number of shards) and the simulator
    reports the FLOPs of a device's op with the factors of its local op.

    `shardc.matmul %x, %w : (tensor<16x64xf32>, tensor<64x128xf32>) -> ...`
    has factors `{16, 64, 128}` and costs `2 * 16 * 64 * 128` FLOPs; with
    its rows sharded 4 ways, `2 * 4 * 64 * 128` per device. Layout ops,
    constants and sharding constraints do no arithmetic and cost 0.

    Its kernel class says how a machine runs it (see `KernelClass` in
    CostOpInterface.h): the step estimate prices a GEMM at the compute
    peak, fuses elementwise ops and views with their neighbours, and makes
    constants and sharding constraints no kernel at all. An elementwise op
    is `Fusible` by its trait; any other op declares its class with a
    `Shardc_KernelClass<"...">` trait where it is not `MemoryBound`.

    Constraints: `factorSizes` has one entry per factor of the op's rule, in
    the rule's order; the result is finite and non-negative.
  }];
  let methods = [
    InterfaceMethod<[{
        FLOPs of the op when its rule's factors have `factorSizes` (which
        may be fractional: a global size divided by a shard count).
      }],
      "double", "getFlops", (ins "::llvm::ArrayRef<double>":$factorSizes)>,
    StaticInterfaceMethod<[{
        How a machine runs the op: the class its `Shardc_KernelClass` trait
        declares, else `Fusible` for an elementwise op, else `MemoryBound`.
      }],
      "::shardc::KernelClass", "getKernelClass", (ins), [{}],
      [{ return ::shardc::declaredKernelClass<ConcreteOp>(); }]>,
  ];
}

/// Declares the kernel class (`::shardc::KernelClass::<name>`) of an op
/// that is not `MemoryBound`: `[Shardc_KernelClass<"Gemm">]`.
class Shardc_KernelClass<string name>
    : ParamNativeOpTrait<"KernelClassIs", "::shardc::KernelClass::" # name> {
  let cppNamespace = "::shardc::OpTrait";
}

#endif // SHARDC_DIALECT_COSTOPINTERFACE_TD

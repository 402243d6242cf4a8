//===- CostOpInterface.h - per-op compute cost ------------------*- C++ -*-===//
//
// The FLOPs of an op from its sharding-rule factor sizes: one model for the
// partitioner and the simulator (docs/cost-model.md).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_COSTOPINTERFACE_H
#define SHARDC_DIALECT_COSTOPINTERFACE_H

#include "shardc/Dialect/TensorOpTraits.h"

#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <type_traits>

namespace shardc {

/// How a machine runs an op (docs/estimate.md): what the step estimate
/// prices it by, and whether it joins its neighbours' kernel.
enum class KernelClass : uint8_t {
  /// No kernel on any machine: a value known when compiling (`constant`)
  /// or an annotation (`sharding_constraint`).
  None,
  /// A view of its operand's elements (`reshape`, `broadcast_in_dim`):
  /// where the machine fuses, its readers index the operand and it costs
  /// nothing; elsewhere a copy kernel.
  View,
  /// Values made from the element's index (`iota`, `axis_index`): where the
  /// machine fuses, its readers compute them and it costs nothing;
  /// elsewhere a kernel writing them.
  Generated,
  /// Element by element, or a reduction as a kernel's last step
  /// (elementwise ops, `select`, `compare`, `convert`, `reduce_sum`): fused
  /// with its neighbours where the machine fuses; memory-bound.
  Fusible,
  /// A kernel of its own whose time is the bytes it moves (`transpose`,
  /// `gather`, `slice`, ...): every op that declares no other class.
  MemoryBound,
  /// A matrix product: the compute peak times the machine's efficiency.
  Gemm,
};

namespace OpTrait {
/// Base of every `KernelClassIs<...>::Impl`, to find the declaration.
struct DeclaresKernelClass {};
/// The op's kernel class, set by `Shardc_KernelClass<"...">` in ODS.
template <KernelClass kind> struct KernelClassIs {
  template <typename ConcreteType>
  class Impl : public mlir::OpTrait::TraitBase<ConcreteType, Impl>,
               public DeclaresKernelClass {
  public:
    static constexpr KernelClass kDeclaredKernelClass = kind;
  };
};
} // namespace OpTrait

/// The default of CostOpInterface::getKernelClass for `ConcreteOp`.
template <typename ConcreteOp> constexpr KernelClass declaredKernelClass() {
  if constexpr (std::is_base_of_v<OpTrait::DeclaresKernelClass, ConcreteOp>)
    return ConcreteOp::kDeclaredKernelClass;
  else if constexpr (ConcreteOp::template hasTrait<
                         OpTrait::UnaryElementwise>() ||
                     ConcreteOp::template hasTrait<
                         OpTrait::BinaryElementwise>())
    return KernelClass::Fusible;
  else
    return KernelClass::MemoryBound;
}

} // namespace shardc

#include "shardc/Dialect/CostOpInterface.h.inc"

namespace shardc {
class ShardingRule;
/// `scale` times the product of `factorSizes`, multiplied in order (the
/// cost of an op doing `scale` FLOPs per point of its iteration space).
double getIterationSpaceFlops(double scale, llvm::ArrayRef<double> factorSizes);
/// The FLOPs of `op` on its own (local) shapes: its rule's factor sizes fed
/// to its CostOpInterface; 0 for an op without either.
double getOpFlops(mlir::Operation *op);
/// The kernel class `op` declares on its CostOpInterface; `MemoryBound` for
/// an op without one (collectives and point-to-point transfers, which the
/// estimate prices on the links by CollectiveOpInterface instead).
KernelClass getKernelClass(mlir::Operation *op);
/// Whether `op` computes nothing on a machine that fuses: no kernel, a
/// view or generated values (its FLOPs do not count).
inline bool isFreeKernel(KernelClass k) {
  return k == KernelClass::None || k == KernelClass::View ||
         k == KernelClass::Generated;
}
} // namespace shardc

#endif // SHARDC_DIALECT_COSTOPINTERFACE_H

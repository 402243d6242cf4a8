//===- Interpreter.h - the reference interpreter ----------------*- C++ -*-===//
//
// Runs a shardc function on concrete tensors, one op at a time, with the
// kernels of Kernels.h. A global (unpartitioned) function needs nothing
// else; a per-device (SPMD) function also needs a Communicator, through
// which its collectives reach the other devices of the mesh.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_INTERPRETER_INTERPRETER_H
#define SHARDC_INTERPRETER_INTERPRETER_H

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Interpreter/Communicator.h"
#include "shardc/Support/MeshTopology.h"
#include "shardc/Support/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <utility>

namespace shardc {

struct InterpreterOptions {
  /// Needed by every collective (all_slice only asks it for the device id);
  /// without one, a collective is an error.
  Communicator *communicator = nullptr;
  /// No value of the function may need more bytes than this; checked for
  /// every value before anything is computed.
  uint64_t maxTensorBytes = defaultMaxTensorBytes();
  /// When set, receives one value per function result: where its NaN or
  /// infinite elements first appeared, following the data back in program
  /// order. That is an argument that holds some, or the first op that
  /// computed some from finite operands; null for a finite result. Costs a
  /// scan of every value, so the tools ask only after a result came out
  /// non-finite.
  llvm::SmallVectorImpl<mlir::Value> *nonFiniteSources = nullptr;
  /// When nonzero, every result of an op that sums (a reduction factor in
  /// its sharding rule: reduce_sum, a contraction) moves by one ulp in a
  /// direction hashed from this probe, the op and the element: a run whose
  /// sums round otherwise, as a sharded program's do when it adds its
  /// partial sums in another order (shardc/Interpreter/RoundingSensitivity.h).
  unsigned sumRoundingProbe = 0;
};

/// Runs `func` on `args`; returns its results. Fails with diagnostics at op
/// locations.
mlir::FailureOr<llvm::SmallVector<Tensor>>
interpretFunction(mlir::func::FuncOp func, llvm::ArrayRef<Tensor> args,
                  const InterpreterOptions &options = {});

/// The device arithmetic of `mesh`; fails (with a diagnostic at the mesh)
/// only for a mesh its verifier would reject.
mlir::FailureOr<MeshTopology> getMeshTopology(MeshOp mesh);

/// Whether `op`'s result depends on the device that runs it and on nothing
/// else (`shardc.axis_index`). Such an op is no local kernel: every runtime
/// (the interpreter, the simulated mesh, the pipeline simulator) asks this
/// and runs it with evaluateOnDevice, so a new device-dependent op is added
/// here and nowhere in the runtimes.
bool isDeviceDependent(mlir::Operation *op);

/// The result of device-dependent `op` on device `deviceId`: for
/// `shardc.axis_index`, the device's group index along the op's axes, as an
/// i64 scalar. Fails with a diagnostic at the op for an op that is not
/// device-dependent, a mesh or axes it cannot resolve, or a device outside
/// the mesh.
mlir::FailureOr<Tensor> evaluateOnDevice(mlir::Operation *op, int64_t deviceId);

/// Argument `i` of a training step at its initial value if it is optimizer
/// state (`shardc.optimizer_state = v`: v in every element, in the
/// argument's shape, which for a partitioned step is the local one);
/// std::nullopt if it is not state; an error if it cannot be allocated.
llvm::Expected<std::optional<Tensor>>
initialOptimizerState(mlir::func::FuncOp func, unsigned i);

/// The transport's reduction for a collective op's: the one place the
/// dialect's ReductionKind meets the Communicator's Reduction.
Reduction toCommunicatorReduction(ReductionKind kind);

/// The runtime dtype of an element type the interpreter executes (f32, i1,
/// i32, i64), or nullopt (f16, bf16, f64 and anything else).
std::optional<DType> executableDType(mlir::Type elementType);

} // namespace shardc

#endif // SHARDC_INTERPRETER_INTERPRETER_H

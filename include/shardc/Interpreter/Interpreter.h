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
#include "shardc/Support/MeshTopology.h"
#include "shardc/Support/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <utility>

namespace shardc {

/// What a device's collectives go through. `group` lists device ids in
/// group-index order and contains this device. Implementations return a
/// tensor of the collective's local result shape, or fail after emitting a
/// diagnostic.
class Communicator {
public:
  virtual ~Communicator();
  virtual int64_t deviceId() const = 0;
  virtual mlir::FailureOr<Tensor> allGather(const Tensor &local,
                                            llvm::ArrayRef<int64_t> group,
                                            int64_t dim) = 0;
  virtual mlir::FailureOr<Tensor> allReduce(const Tensor &local,
                                            llvm::ArrayRef<int64_t> group,
                                            ReductionKind kind) = 0;
  virtual mlir::FailureOr<Tensor> reduceScatter(const Tensor &local,
                                                llvm::ArrayRef<int64_t> group,
                                                int64_t dim,
                                                ReductionKind kind) = 0;
  virtual mlir::FailureOr<Tensor> allToAll(const Tensor &local,
                                           llvm::ArrayRef<int64_t> group,
                                           int64_t splitDim,
                                           int64_t concatDim) = 0;
  virtual mlir::FailureOr<Tensor>
  collectivePermute(const Tensor &local, llvm::ArrayRef<int64_t> group,
                    llvm::ArrayRef<std::pair<int64_t, int64_t>> pairs) = 0;
};

struct InterpreterOptions {
  /// Needed by every collective (all_slice only asks it for the device id);
  /// without one, a collective is an error.
  Communicator *communicator = nullptr;
  /// No value of the function may need more bytes than this; checked for
  /// every value before anything is computed.
  uint64_t maxTensorBytes = defaultMaxTensorBytes();
};

/// Runs `func` on `args`; returns its results. Fails with diagnostics at op
/// locations.
mlir::FailureOr<llvm::SmallVector<Tensor>>
interpretFunction(mlir::func::FuncOp func, llvm::ArrayRef<Tensor> args,
                  const InterpreterOptions &options = {});

/// The device arithmetic of `mesh`; fails (with a diagnostic at the mesh)
/// only for a mesh its verifier would reject.
mlir::FailureOr<MeshTopology> getMeshTopology(MeshOp mesh);

} // namespace shardc

#endif // SHARDC_INTERPRETER_INTERPRETER_H

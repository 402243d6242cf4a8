//===- DeviceLayout.h - global tensors to device blocks ---------*- C++ -*-===//
//
// What running a partitioned program on any MeshBackend needs around run():
// cut the global inputs into every device's blocks by the SPMD function's
// argument shardings, and reassemble the global outputs from the devices'
// result blocks by its result shardings (checking that replicas agree).
// Kept apart from run() so that a caller timing or looping over run() lays
// its inputs out once.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_DEVICELAYOUT_H
#define SHARDC_RUNTIME_DEVICELAYOUT_H

#include "shardc/Runtime/MeshBackend.h"

namespace shardc {

/// Every device's arguments of `spmd` (indexed by mesh device id) from the
/// global `inputs`. Fails with a diagnostic at the function.
mlir::FailureOr<DeviceTensors> layOutArguments(mlir::func::FuncOp spmd,
                                               MeshOp mesh,
                                               llvm::ArrayRef<Tensor> inputs);

/// The global results of `spmd` from every device's results (indexed by
/// mesh device id). Fails with a diagnostic at the function.
mlir::FailureOr<std::vector<Tensor>>
assembleResults(mlir::func::FuncOp spmd, MeshOp mesh,
                const DeviceTensors &results);

/// layOutArguments, backend.run (every device must be local), and
/// assembleResults.
mlir::FailureOr<std::vector<Tensor>>
runGlobalOnBackend(MeshBackend &backend, mlir::func::FuncOp spmd, MeshOp mesh,
                   llvm::ArrayRef<Tensor> inputs);

} // namespace shardc

#endif // SHARDC_RUNTIME_DEVICELAYOUT_H

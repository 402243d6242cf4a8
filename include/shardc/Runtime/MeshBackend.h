//===- MeshBackend.h - where a per-device program runs ----------*- C++ -*-===//
//
// One interface over the three ways shardc runs a partitioned (SPMD)
// program: `sim` (every device in this process, in lockstep, instrumented),
// `threads` (one worker thread per device, shared-memory collectives) and
// `mpi` (one process per device over Open MPI; this process drives only its
// own rank). The engine keeps each local device's tensors (parameters,
// saved activations) between calls and hands them to run() by reference.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_MESHBACKEND_H
#define SHARDC_RUNTIME_MESHBACKEND_H

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Runtime/ChromeTrace.h"
#include "shardc/Support/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <memory>
#include <vector>

namespace shardc {

enum class BackendKind { Sim, Threads, Mpi };

/// "sim", "threads" or "mpi".
llvm::StringRef stringifyBackendKind(BackendKind kind);
std::optional<BackendKind> parseBackendKind(llvm::StringRef name);

/// Per-device tensors: [local device index][argument or result index].
using DeviceTensors = std::vector<std::vector<Tensor>>;

class MeshBackend {
public:
  virtual ~MeshBackend();
  virtual BackendKind kind() const = 0;
  /// Devices of the mesh in total.
  virtual int64_t numDevices() const = 0;
  /// The mesh devices whose tensors live in this process, ascending: every
  /// device for sim and threads, this rank's for mpi.
  virtual llvm::ArrayRef<int64_t> localDevices() const = 0;

  /// Runs `spmd` on every local device, device localDevices()[i] reading
  /// args[i] (not consumed). Returns the results per local device, or fails
  /// after emitting diagnostics that name the failing device; a failure on
  /// one device never leaves the others waiting.
  virtual mlir::FailureOr<DeviceTensors> run(mlir::func::FuncOp spmd,
                                             const DeviceTensors &args) = 0;

  /// Every device's block of one value, indexed by mesh device id, on every
  /// process: the local ones are moved in, the others fetched (mpi).
  virtual mlir::FailureOr<std::vector<Tensor>>
  gatherBlocks(std::vector<Tensor> localBlocks) = 0;

  /// Record the timeline of the next runs (ChromeTrace.h): the local
  /// devices' compute and communication spans, simulated time on sim,
  /// wall-clock time from the run's start on threads and mpi.
  void setTracing(bool on) { tracing = on; }
  /// The last run's spans, if it was traced (else empty).
  virtual std::vector<TraceSpan> lastTrace() const { return {}; }

protected:
  bool tracing = false;
};

} // namespace shardc

#endif // SHARDC_RUNTIME_MESHBACKEND_H

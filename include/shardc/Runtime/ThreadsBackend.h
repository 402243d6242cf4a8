//===- ThreadsBackend.h - one worker thread per mesh device -----*- C++ -*-===//
//
// The `threads` backend: every device of the mesh is a worker thread of this
// process (a persistent pool, reused by every run()), running the SPMD
// program with the reference interpreter; collectives, barrier and
// send/receive go through shared memory. Collectives combine the group's
// buffers in group-index order, as the simulator does, so both give the
// same bits.
//
// A failure on one device (a kernel error, a bad shape, a communicator call
// that fails) aborts the run: every device waiting in a communicator call
// fails promptly, run() waits for all of them and returns failure. Devices
// that wait for one another in a cycle, or for a device that has finished,
// are detected and fail too; an optional timeout bounds every wait besides.
// Diagnostics emitted on the workers are collected per device and re-emitted
// on the calling thread, prefixed "device N: ", the first failing device
// first and then in device order, so the output does not depend on
// scheduling.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_THREADSBACKEND_H
#define SHARDC_RUNTIME_THREADSBACKEND_H

#include "shardc/Interpreter/Communicator.h"
#include "shardc/Runtime/MeshBackend.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace shardc {

struct ThreadsOptions {
  /// BLAS threads each device's GEMMs may use; 0 picks kDeviceBlasThreads
  /// (1), the count of every other backend, so that results are the same
  /// bits as theirs. More threads can speed up a mesh of fewer devices than
  /// cores, at the price of results that differ in their last bits
  /// (shardc/Interpreter/BlasThreads.h). OpenBLAS has one process-wide
  /// setting: it is applied at the start of every run.
  int blasThreadsPerDevice = 0;
  /// Bound on every wait in a communicator call (seconds); 0 waits as long
  /// as the other devices are still running. Tests set it so that a bug
  /// fails instead of hanging.
  double timeoutSeconds = 0;
  /// Keep freed tensor buffers in the process heap for reuse instead of
  /// returning them to the system (glibc mallopt: no buffer mapped on its
  /// own, however large; trim threshold 1 GiB; one arena). A training step
  /// frees and reallocates the same 16-32 MiB activations every step; fresh
  /// pages cost a page fault each (about half the page faults of a step).
  /// Process-wide, applied once by the first backend or runOnThreads that
  /// asks for it.
  bool retainFreedMemory = true;
  /// Start a gradient's all_reduce / reduce_scatter where the backward pass
  /// computes it and complete it where its result is first used (or
  /// between ops, once every member has started it), as the mpi backend's
  /// --mpi-overlap does: devices do not wait for one another in the middle
  /// of the backward pass. The same bits either way.
  bool overlapReductions = true;
  /// Byte budget of every tensor a device computes.
  uint64_t maxTensorBytes = defaultMaxTensorBytes();
};

/// The BLAS threads per device `options` give for `numDevices` devices.
int resolveBlasThreads(const ThreadsOptions &options, int64_t numDevices);

/// A threads backend for every device of `mesh`. Returns null after a
/// diagnostic at the mesh if the mesh is invalid.
std::unique_ptr<MeshBackend>
createThreadsBackend(MeshOp mesh, const ThreadsOptions &options);

/// Runs `body` once per device 0 .. numDevices-1, each on its own thread
/// with a shared-memory Communicator, for hand-written SPMD code. Fails if
/// any body fails (or a communicator call does), after re-emitting the
/// devices' diagnostics on `context` as run() does; the communicator's own
/// errors are reported at an unknown location of `context`.
mlir::LogicalResult
runOnThreads(mlir::MLIRContext &context, int64_t numDevices,
             llvm::function_ref<mlir::LogicalResult(Communicator &)> body,
             const ThreadsOptions &options = {});

} // namespace shardc

#endif // SHARDC_RUNTIME_THREADSBACKEND_H

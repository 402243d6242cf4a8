//===- RetainFreedMemory.h - freed tensor buffers for reuse -----*- C++ -*-===//
//
// A training step frees and reallocates the same tensors every step. By
// default glibc maps each buffer above its mmap threshold (32 MiB at most)
// afresh and returns freed heap tops to the system, so every step pays a
// page fault and a zeroed page for each 4 KiB of those tensors. With the
// heap kept, a step's buffers come from the previous step's: glibc's free
// lists act as the per-process tensor pool (one process per device on the
// mpi backend, one arena shared by the device threads on the threads one).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_RETAINFREEDMEMORY_H
#define SHARDC_RUNTIME_RETAINFREEDMEMORY_H

namespace shardc {

/// Process-wide and applied once (later calls do nothing): no buffer mapped
/// on its own however large, freed memory trimmed only above 1 GiB, and one
/// malloc arena (buffers freed by one device thread are reusable by all).
/// Call it before starting threads that allocate tensors. The backends
/// call it; a program running the interpreter itself (a benchmark) calls
/// it to measure what a backend's step costs.
void retainFreedMemory();

} // namespace shardc

#endif // SHARDC_RUNTIME_RETAINFREEDMEMORY_H

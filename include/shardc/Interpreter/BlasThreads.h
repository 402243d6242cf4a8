//===- BlasThreads.h - how many threads each GEMM may use -------*- C++ -*-===//
//
// The interpreter's matrix products run on OpenBLAS (Debian's pthreads
// build). Its thread count is one process-wide setting: a backend that runs
// several devices as threads lowers it so that device threads x BLAS threads
// stays within the machine's cores. With a count of 1 OpenBLAS computes in
// the calling thread, and concurrent calls from several threads are safe
// (the pthreads build locks its shared buffer pool; tested in
// unittests/Interpreter/BlasThreadsTest.cpp). With a count above 1,
// concurrent callers share one OpenBLAS thread pool and are serialized.
//
// The count changes results: with more threads OpenBLAS cuts a GEMM's
// contraction into blocks differently, so the same product differs in its
// last bits between 1 and 2 threads, and a training run drifts apart over
// its steps. Every mesh backend therefore runs its devices' kernels at
// kDeviceBlasThreads, and the same partitioned program gives the same bits
// on sim, threads and mpi (unittests/Runtime/BackendsAgreeTest.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_INTERPRETER_BLASTHREADS_H
#define SHARDC_INTERPRETER_BLASTHREADS_H

#include <string>

namespace shardc {

/// Sets the threads every later GEMM of this process may use (values below
/// 1 count as 1). Process-wide: the last caller wins.
void setBlasThreads(int threads);

/// The current process-wide BLAS thread count.
int getBlasThreads();

/// The BLAS threads of every device's kernels on every backend unless the
/// threads backend is told otherwise (--blas-threads): one, so that the
/// devices, not the GEMMs, share the cores, and results do not depend on
/// the backend or the machine.
inline constexpr int kDeviceBlasThreads = 1;

/// Sets the BLAS thread count for its lifetime and restores the previous
/// one after.
class ScopedBlasThreads {
public:
  explicit ScopedBlasThreads(int threads) : previous(getBlasThreads()) {
    setBlasThreads(threads);
  }
  ~ScopedBlasThreads() { setBlasThreads(previous); }
  ScopedBlasThreads(const ScopedBlasThreads &) = delete;
  ScopedBlasThreads &operator=(const ScopedBlasThreads &) = delete;

private:
  int previous;
};

/// OpenBLAS's own description of its build ("OpenBLAS 0.3.21 DYNAMIC_ARCH
/// ... MAX_THREADS=64"), for benchmark reports.
std::string getBlasConfig();

} // namespace shardc

#endif // SHARDC_INTERPRETER_BLASTHREADS_H

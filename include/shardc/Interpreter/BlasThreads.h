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

/// OpenBLAS's own description of its build ("OpenBLAS 0.3.21 DYNAMIC_ARCH
/// ... MAX_THREADS=64"), for benchmark reports.
std::string getBlasConfig();

} // namespace shardc

#endif // SHARDC_INTERPRETER_BLASTHREADS_H

//===- GemmCount.cpp - count the GEMMs a process runs -------------------===//
//
// A preloaded library (not a test) that counts the single-precision GEMMs a
// process asks BLAS for, by call shape: the work of a training step, as
// opposed to its time. It wraps CBLAS's cblas_sgemm (what shardc's
// dot_general calls) and the Fortran sgemm_ (what PyTorch's CPU matmuls
// call), forwards each call to the real BLAS and adds up, per (interface,
// transposes, m, n, k, beta): calls, FLOPs (2 m n k) and thread CPU time.
// At exit it writes one line per shape to $SHARDC_GEMM_COUNT.<pid>:
//
//   LD_PRELOAD=build/bench/libshardc-gemm-count.so SHARDC_GEMM_COUNT=/tmp/g \
//     shardc train model.json --backend threads --steps 1
//
// Two runs of N and N+1 steps, subtracted, give one step's GEMMs
// (bench/kernel-speed.md). Without $SHARDC_GEMM_COUNT nothing is written.
//
//===----------------------------------------------------------------------===//

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace {
struct Shape {
  std::string api;
  char transA, transB;
  int m, n, k;
  float beta;
  bool operator<(const Shape &o) const {
    return std::tie(api, transA, transB, m, n, k, beta) <
           std::tie(o.api, o.transA, o.transB, o.m, o.n, o.k, o.beta);
  }
};
struct Totals {
  long calls = 0;
  double flops = 0, seconds = 0;
};

double threadSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/// The counts, written out when the process exits.
class Counter {
public:
  void add(const Shape &shape, double seconds) {
    std::lock_guard<std::mutex> lock(mutex);
    Totals &t = totals[shape];
    ++t.calls;
    t.flops += 2.0 * shape.m * shape.n * shape.k;
    t.seconds += seconds;
  }
  ~Counter() {
    const char *prefix = std::getenv("SHARDC_GEMM_COUNT");
    if (!prefix)
      return;
    std::string path = std::string(prefix) + "." + std::to_string(getpid());
    FILE *f = std::fopen(path.c_str(), "w");
    if (!f)
      return;
    for (const auto &[s, t] : totals)
      std::fprintf(f,
                   "%s %c%c m=%d n=%d k=%d beta=%g calls=%ld gflop=%.4f "
                   "ms=%.2f\n",
                   s.api.c_str(), s.transA, s.transB, s.m, s.n, s.k, s.beta,
                   t.calls, t.flops / 1e9, t.seconds * 1e3);
    std::fclose(f);
  }

private:
  std::mutex mutex;
  std::map<Shape, Totals> totals;
};
Counter counter;

/// The real `name`: the next definition after this library's, or, for a
/// BLAS a library loaded with RTLD_LOCAL (PyTorch's) pulled in, libblas's.
void *realSymbol(const char *name) {
  if (void *p = dlsym(RTLD_NEXT, name))
    return p;
  if (void *blas = dlopen("libblas.so.3", RTLD_NOW))
    return dlsym(blas, name);
  return nullptr;
}
} // namespace

extern "C" {
using CblasSgemm = void (*)(int, int, int, int, int, int, float, const float *,
                            int, const float *, int, float, float *, int);
void cblas_sgemm(int order, int transA, int transB, int m, int n, int k,
                 float alpha, const float *a, int lda, const float *b, int ldb,
                 float beta, float *c, int ldc) {
  static auto real = reinterpret_cast<CblasSgemm>(realSymbol("cblas_sgemm"));
  double start = threadSeconds();
  real(order, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  // CBLAS's CblasTrans is 112; row-major (101) is what shardc passes.
  counter.add({order == 101 ? "cblas_row" : "cblas_col",
               transA == 112 ? 'T' : 'N', transB == 112 ? 'T' : 'N', m, n, k,
               beta},
              threadSeconds() - start);
}

using FortranSgemm = void (*)(const char *, const char *, const int *,
                              const int *, const int *, const float *,
                              const float *, const int *, const float *,
                              const int *, const float *, float *, const int *);
void sgemm_(const char *transA, const char *transB, const int *m, const int *n,
            const int *k, const float *alpha, const float *a, const int *lda,
            const float *b, const int *ldb, const float *beta, float *c,
            const int *ldc) {
  static auto real = reinterpret_cast<FortranSgemm>(realSymbol("sgemm_"));
  double start = threadSeconds();
  real(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  counter.add({"sgemm_col", *transA, *transB, *m, *n, *k, *beta},
              threadSeconds() - start);
}
}

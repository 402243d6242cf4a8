//===- RetainFreedMemory.cpp - keep freed tensor buffers for reuse --------===//

#include "shardc/Runtime/RetainFreedMemory.h"

#include <malloc.h>
#include <mutex>

void shardc::retainFreedMemory() {
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    // Not even above that: glibc maps a buffer of more than 32 MiB afresh
    // each time (the [batch, seq, vocab] logits of a language model are
    // 32 MiB at batch 4, seq 256, vocab 8192, a data-parallel gradient
    // all-reduce's buffers over 100 MiB), and page-faulting and zeroing
    // them every step cost more than the kernels writing them. From the
    // heap they are reused like the smaller ones.
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    // Buffers freed by one device thread are then reusable by all, and
    // never sit in a per-thread arena that returns them to the system.
    mallopt(M_ARENA_MAX, 1);
  });
}

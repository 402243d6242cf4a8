//===- BlasThreads.cpp - how many threads each GEMM may use ---------------===//

#include "shardc/Interpreter/BlasThreads.h"

#include <algorithm>
#include <cblas.h>

void shardc::setBlasThreads(int threads) {
  openblas_set_num_threads(std::max(1, threads));
}

int shardc::getBlasThreads() { return openblas_get_num_threads(); }

std::string shardc::getBlasConfig() {
  const char *config = openblas_get_config();
  return config ? config : "";
}

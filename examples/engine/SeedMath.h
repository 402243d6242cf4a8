//===- SeedMath.h - the NumPy the seed's examples use, on Eigen -*- C++ -*-===//
//
// Just enough of np.einsum / relu / slicing for the ported examples, over
// shardc::Tensor storage (row-major f32) mapped as Eigen matrices.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_EXAMPLES_ENGINE_SEEDMATH_H
#define SHARDC_EXAMPLES_ENGINE_SEEDMATH_H

#include "shardc/Support/Tensor.h"

#include <Eigen/Core>

namespace seed {

using RowMatrix =
    Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

inline Eigen::Map<RowMatrix> view(shardc::Tensor &t) {
  return {t.data(), t.dim(0), t.dim(1)};
}
inline Eigen::Map<const RowMatrix> view(const shardc::Tensor &t) {
  return {t.data(), t.dim(0), t.dim(1)};
}

inline shardc::Tensor zeros(int64_t rows, int64_t cols) {
  return llvm::cantFail(shardc::Tensor::allocate({rows, cols}));
}

inline shardc::Tensor fromMatrix(const RowMatrix &m) {
  shardc::Tensor t = zeros(m.rows(), m.cols());
  view(t) = m;
  return t;
}

/// relu(x) = x * (x > 0)
inline RowMatrix relu(const RowMatrix &x) { return x.cwiseMax(0.0f); }
/// (x > 0) as 0/1
inline RowMatrix positive(const RowMatrix &x) {
  return (x.array() > 0.0f).cast<float>().matrix();
}

/// Columns [begin, begin + count) of a full matrix, as a tensor.
inline shardc::Tensor columns(const shardc::Tensor &t, int64_t begin,
                              int64_t count) {
  return fromMatrix(view(t).middleCols(begin, count));
}
inline shardc::Tensor rows(const shardc::Tensor &t, int64_t begin,
                           int64_t count) {
  return fromMatrix(view(t).middleRows(begin, count));
}

} // namespace seed

#endif // SHARDC_EXAMPLES_ENGINE_SEEDMATH_H

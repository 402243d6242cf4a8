//===- MatmulKernels.cpp - matmul and dot_general -------------------------===//
//
// Both ops reduce to a batch of GEMMs run by OpenBLAS's cblas_sgemm on
// row-major storage (about 1.4x Eigen's speed on one core here). dot_general
// first brings each operand to [batch, free, contract] (lhs) / [batch,
// contract, free] (rhs); when an operand already has the transposed layout of
// that (e.g. the 'bkd' key of 'bqd,bkd->bqk') it is passed with the BLAS
// transpose flag instead of being copied. More generally, an operand whose
// free dims and contracting dims each step through memory as one stride is
// read in place as a batch of strided matrices (BLAS's leading dimension:
// the attention's [B,S,H,Dh] q, k and v per (B,H)); only other layouts are
// copied. Dims past CBLAS's 32-bit integers fall back to Eigen on mapped
// storage.
//
//===----------------------------------------------------------------------===//

#include "KernelImpl.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"

#include <Eigen/Core>
#include <cblas.h>

#include <climits>
#include <optional>

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;
using llvm::ArrayRef;
using llvm::SmallVector;

namespace {
template <int Order>
using MatrixMap = Eigen::Map<
    const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Order>>;
using OutMap = Eigen::Map<
    Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

/// A row-major k x m block read as m x k is a column-major m x k matrix, so
/// operand layouts become storage-order template arguments.
template <int LhsOrder, int RhsOrder>
void gemmBatch(const float *lhs, const float *rhs, float *out, int64_t batch,
               int64_t m, int64_t k, int64_t n) {
  for (int64_t b = 0; b < batch; ++b) {
    MatrixMap<LhsOrder> a(lhs + b * m * k, m, k);
    MatrixMap<RhsOrder> w(rhs + b * k * n, k, n);
    OutMap c(out + b * m * n, m, n);
    c.noalias() = a * w;
  }
}
/// True if every leading dimension CBLAS sees fits its `int` arguments.
bool fitsBlasInt(int64_t m, int64_t k, int64_t n) {
  return m <= INT_MAX && k <= INT_MAX && n <= INT_MAX;
}

/// The GEMMs through CBLAS: a row-major k x m (n x k) operand is the
/// transpose of an m x k (k x n) one, which the transpose flags express
/// without a copy.
void blasGemmBatch(const float *lhs, const float *rhs, float *out,
                   int64_t batch, int64_t m, int64_t k, int64_t n,
                   bool lhsKMajor, bool rhsNMajor) {
  CBLAS_TRANSPOSE ta = lhsKMajor ? CblasTrans : CblasNoTrans;
  CBLAS_TRANSPOSE tb = rhsNMajor ? CblasTrans : CblasNoTrans;
  int lda = static_cast<int>(lhsKMajor ? m : k);
  int ldb = static_cast<int>(rhsNMajor ? k : n);
  for (int64_t b = 0; b < batch; ++b)
    cblas_sgemm(CblasRowMajor, ta, tb, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0f, lhs + b * m * k, lda,
                rhs + b * k * n, ldb, 0.0f, out + b * m * n,
                static_cast<int>(n));
}
} // namespace

void shardc::detail::batchedMatmulKernel(const float *lhs, const float *rhs,
                                         float *out, int64_t batch, int64_t m,
                                         int64_t k, int64_t n, bool lhsKMajor,
                                         bool rhsNMajor) {
  if (batch == 0 || m == 0 || n == 0)
    return;
  if (k == 0) {
    std::fill_n(out, batch * m * n, 0.0f);
    return;
  }
  if (fitsBlasInt(m, k, n)) {
    blasGemmBatch(lhs, rhs, out, batch, m, k, n, lhsKMajor, rhsNMajor);
    return;
  }
  constexpr int R = Eigen::RowMajor, C = Eigen::ColMajor;
  if (!lhsKMajor && !rhsNMajor)
    gemmBatch<R, R>(lhs, rhs, out, batch, m, k, n);
  else if (!lhsKMajor && rhsNMajor)
    gemmBatch<R, C>(lhs, rhs, out, batch, m, k, n);
  else if (lhsKMajor && !rhsNMajor)
    gemmBatch<C, R>(lhs, rhs, out, batch, m, k, n);
  else
    gemmBatch<C, C>(lhs, rhs, out, batch, m, k, n);
}

static LogicalResult evalMatmul(MatmulOp op, const Tensor &lhs,
                                const Tensor &rhs, Tensor &result) {
  int64_t rank = lhs.rank();
  if (rank < 2 || rhs.rank() != rank)
    return op.emitError() << "matmul needs operands of equal rank >= 2, got "
                          << formatShape(lhs.shape()) << " and "
                          << formatShape(rhs.shape());
  ArrayRef<int64_t> batchDims = lhs.shape().drop_back(2);
  if (rhs.shape().drop_back(2) != batchDims ||
      lhs.dim(rank - 1) != rhs.dim(rank - 2))
    return op.emitError() << "matmul operand shapes "
                          << formatShape(lhs.shape()) << " and "
                          << formatShape(rhs.shape()) << " are incompatible";
  SmallVector<int64_t> expected(batchDims);
  expected.push_back(lhs.dim(rank - 2));
  expected.push_back(rhs.dim(rank - 1));
  if (result.shape() != ArrayRef<int64_t>(expected))
    return op.emitError() << "matmul result shape "
                          << formatShape(result.shape()) << " should be "
                          << formatShape(expected);
  batchedMatmulKernel(lhs.data(), rhs.data(), result.data(),
                      productOf(batchDims), lhs.dim(rank - 2),
                      lhs.dim(rank - 1), rhs.dim(rank - 1),
                      /*lhsKMajor=*/false, /*rhsNMajor=*/false);
  return success();
}

/// Checks one operand's dimension lists: in range, each dim used once.
static LogicalResult checkDimLists(DotGeneralOp op, StringRef which,
                                   int64_t rank, ArrayRef<int64_t> batch,
                                   ArrayRef<int64_t> contract) {
  llvm::SmallBitVector used(rank);
  for (int64_t d : llvm::concat<const int64_t>(batch, contract)) {
    if (d < 0 || d >= rank)
      return op.emitError() << "dot_general " << which << " dim " << d
                            << " is out of range for rank " << rank;
    if (used.test(d))
      return op.emitError()
             << "dot_general " << which << " dim " << d << " is listed twice";
    used.set(d);
  }
  return success();
}

/// Dims of a `rank`-d operand that are neither batch nor contracting.
static SmallVector<int64_t> freeDims(int64_t rank, ArrayRef<int64_t> batch,
                                     ArrayRef<int64_t> contract) {
  SmallVector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(batch, d) && !llvm::is_contained(contract, d))
      out.push_back(d);
  return out;
}

static bool isIdentity(ArrayRef<int64_t> perm) {
  for (auto [i, p] : llvm::enumerate(perm))
    if (static_cast<int64_t>(i) != p)
      return false;
  return true;
}

namespace {
/// One dot_general operand brought into a GEMM-ready layout.
struct GemmOperand {
  const float *data = nullptr;
  bool transposed = false;
  Tensor scratch; // owns the data when a transposing copy was needed
};
} // namespace

/// Lays `t` out as [batch, a, b] where `a`, `b` are dim lists; reads it as
/// is when it already is, as a transposed view when it is [batch, b, a],
/// and copies otherwise.
static LogicalResult prepareOperand(DotGeneralOp op, const Tensor &t,
                                    ArrayRef<int64_t> batch,
                                    ArrayRef<int64_t> a, ArrayRef<int64_t> b,
                                    uint64_t maxTensorBytes, GemmOperand &out) {
  SmallVector<int64_t> direct(batch), swapped(batch);
  direct.append(a.begin(), a.end());
  direct.append(b.begin(), b.end());
  swapped.append(b.begin(), b.end());
  swapped.append(a.begin(), a.end());
  if (isIdentity(direct)) {
    out.data = t.data();
    return success();
  }
  if (isIdentity(swapped)) {
    out.data = t.data();
    out.transposed = true;
    return success();
  }
  SmallVector<int64_t> shape;
  for (int64_t d : direct)
    shape.push_back(t.dim(d));
  llvm::Expected<Tensor> scratch =
      Tensor::allocate(shape, DType::F32, maxTensorBytes);
  if (!scratch)
    return op.emitError() << "dot_general scratch space: "
                          << llvm::toString(scratch.takeError());
  out.scratch = std::move(*scratch);
  shardc::detail::transposeKernel(t.data(), t.shape(), direct,
                                  out.scratch.data());
  out.data = out.scratch.data();
  return success();
}

namespace {
/// A dot_general operand read in place as a batch of BLAS matrices: batch
/// index i starts `batchStrides . i` elements into `data`; each matrix has
/// the rows and columns the GEMM wants, stored row-major with `ld`
/// elements between rows, or (`transposed`) stored as its transpose.
struct StridedOperand {
  const float *data = nullptr;
  bool transposed = false;
  int64_t ld = 0;
  SmallVector<int64_t> batchStrides;
};

/// Dims `dims` of a tensor with `shape` and `strides`, merged into one dim
/// walked in the order given: its size, and its stride when the dims step
/// through memory as one (0 when the size is 1: any stride will do).
struct MergedDim {
  int64_t size = 1;
  std::optional<int64_t> stride;
};
MergedDim mergeDims(ArrayRef<int64_t> shape, ArrayRef<int64_t> strides,
                    ArrayRef<int64_t> dims) {
  MergedDim merged;
  std::optional<int64_t> inner; // stride of the last dim of size > 1
  bool merges = true;
  for (int64_t d : llvm::reverse(dims)) {
    if (shape[d] == 1)
      continue;
    if (!inner)
      inner = strides[d];
    else if (strides[d] != merged.size * *inner)
      merges = false;
    merged.size *= shape[d];
  }
  if (merges)
    merged.stride = inner.value_or(0);
  return merged;
}

/// `t` read as a batch (dims `batch`) of matrices with rows `rows` and
/// columns `cols` without copying, when each of the two merges into one
/// dim and one of them is contiguous; otherwise nullopt. A layer's
/// attention operands are such views: q as [B,S,H,Dh] with batch (B,H) is
/// S x Dh matrices with H*Dh elements between rows.
std::optional<StridedOperand> stridedOperand(const Tensor &t,
                                             ArrayRef<int64_t> batch,
                                             ArrayRef<int64_t> rows,
                                             ArrayRef<int64_t> cols) {
  SmallVector<int64_t> strides = rowMajorStrides(t.shape());
  MergedDim r = mergeDims(t.shape(), strides, rows);
  MergedDim c = mergeDims(t.shape(), strides, cols);
  if (!r.stride || !c.stride)
    return std::nullopt;
  StridedOperand out;
  out.data = t.data();
  for (int64_t d : batch)
    out.batchStrides.push_back(strides[d]);
  // Row-major: columns contiguous; rows `ld` apart, at least a row long.
  if (c.size == 1 || *c.stride == 1) {
    out.ld = r.size == 1 ? std::max<int64_t>(c.size, 1) : *r.stride;
    if (out.ld >= std::max<int64_t>(c.size, 1) && out.ld <= INT_MAX)
      return out;
  }
  if (r.size == 1 || *r.stride == 1) {
    out.transposed = true;
    out.ld = c.size == 1 ? std::max<int64_t>(r.size, 1) : *c.stride;
    if (out.ld >= std::max<int64_t>(r.size, 1) && out.ld <= INT_MAX)
      return out;
  }
  return std::nullopt;
}

/// The GEMMs of a dot_general on operands read in place: one per batch
/// index, walked in row-major order as the result's batch dims are.
void stridedGemmBatch(const StridedOperand &a, const StridedOperand &w,
                      ArrayRef<int64_t> batchSizes, float *out, int64_t m,
                      int64_t k, int64_t n) {
  StridedWalk walk(batchSizes, a.batchStrides, w.batchStrides);
  float *c = out;
  do {
    cblas_sgemm(CblasRowMajor, a.transposed ? CblasTrans : CblasNoTrans,
                w.transposed ? CblasTrans : CblasNoTrans, static_cast<int>(m),
                static_cast<int>(n), static_cast<int>(k), 1.0f,
                a.data + walk.offsetA(), static_cast<int>(a.ld),
                w.data + walk.offsetB(), static_cast<int>(w.ld), 0.0f, c,
                static_cast<int>(n));
    c += m * n;
  } while (walk.next());
}
} // namespace

static LogicalResult evalDotGeneral(DotGeneralOp op, const Tensor &lhs,
                                    const Tensor &rhs, Tensor &result,
                                    uint64_t maxTensorBytes) {
  ArrayRef<int64_t> lb = op.getLhsBatchDims(), rb = op.getRhsBatchDims();
  ArrayRef<int64_t> lc = op.getLhsContractingDims(),
                    rc = op.getRhsContractingDims();
  if (lb.size() != rb.size() || lc.size() != rc.size())
    return op.emitError("dot_general batch and contracting lists must pair "
                        "up (equal lengths)");
  if (failed(checkDimLists(op, "lhs", lhs.rank(), lb, lc)) ||
      failed(checkDimLists(op, "rhs", rhs.rank(), rb, rc)))
    return failure();
  int64_t batch = 1, k = 1;
  SmallVector<int64_t> expected;
  for (auto [l, r] : llvm::zip(lb, rb)) {
    if (lhs.dim(l) != rhs.dim(r))
      return op.emitError() << "dot_general batch dims " << l << " and " << r
                            << " differ in size";
    batch *= lhs.dim(l);
    expected.push_back(lhs.dim(l));
  }
  for (auto [l, r] : llvm::zip(lc, rc)) {
    if (lhs.dim(l) != rhs.dim(r))
      return op.emitError() << "dot_general contracting dims " << l << " and "
                            << r << " differ in size";
    k *= lhs.dim(l);
  }
  SmallVector<int64_t> lf = freeDims(lhs.rank(), lb, lc);
  SmallVector<int64_t> rf = freeDims(rhs.rank(), rb, rc);
  int64_t m = 1, n = 1;
  for (int64_t d : lf) {
    m *= lhs.dim(d);
    expected.push_back(lhs.dim(d));
  }
  for (int64_t d : rf) {
    n *= rhs.dim(d);
    expected.push_back(rhs.dim(d));
  }
  if (result.shape() != ArrayRef<int64_t>(expected))
    return op.emitError() << "dot_general result shape "
                          << formatShape(result.shape()) << " should be "
                          << formatShape(expected);
  if (result.numElements() == 0)
    return success();

  // k == 0 leaves the result zero (batchedMatmulKernel), which BLAS with
  // beta 0 would too, but not every BLAS reads no operand then.
  if (k != 0 && fitsBlasInt(m, k, n)) {
    std::optional<StridedOperand> a = stridedOperand(lhs, lb, lf, lc);
    std::optional<StridedOperand> w = stridedOperand(rhs, rb, rc, rf);
    if (a && w) {
      SmallVector<int64_t> batchSizes;
      for (int64_t d : lb)
        batchSizes.push_back(lhs.dim(d));
      stridedGemmBatch(*a, *w, batchSizes, result.data(), m, k, n);
      return success();
    }
  }
  GemmOperand a, w;
  if (failed(prepareOperand(op, lhs, lb, lf, lc, maxTensorBytes, a)) ||
      failed(prepareOperand(op, rhs, rb, rc, rf, maxTensorBytes, w)))
    return failure();
  batchedMatmulKernel(a.data, w.data, result.data(), batch, m, k, n,
                      a.transposed, w.transposed);
  return success();
}

namespace {
struct MatmulKernel : shardc::detail::KernelModel<MatmulKernel, MatmulOp> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *> in,
                               Tensor &result, uint64_t) const {
    return evalMatmul(cast<MatmulOp>(op), *in[0], *in[1], result);
  }
};
struct DotGeneralKernel
    : shardc::detail::KernelModel<DotGeneralKernel, DotGeneralOp> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *> in,
                               Tensor &result, uint64_t maxTensorBytes) const {
    return evalDotGeneral(cast<DotGeneralOp>(op), *in[0], *in[1], result,
                          maxTensorBytes);
  }
};
} // namespace

void shardc::detail::attachContractionKernels(MLIRContext *ctx) {
  MatmulOp::attachInterface<MatmulKernel>(*ctx);
  DotGeneralOp::attachInterface<DotGeneralKernel>(*ctx);
}

//===- KernelImpl.h - kernels shared between the kernel files ---*- C++ -*-===//
//
// Private to lib/Interpreter. Two layers: raw kernels on pointers and shapes
// (no MLIR, no checks: callers validate) and, in each family's kernel file,
// per-op evaluators that validate an op's shapes against its operands (so
// unverified IR cannot make a raw kernel read out of bounds), attached to
// the ops as KernelOpInterface models.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_INTERPRETER_KERNELIMPL_H
#define SHARDC_LIB_INTERPRETER_KERNELIMPL_H

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Support/MeshTopology.h"
#include "shardc/Support/Tensor.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace shardc::detail {

//===----------------------------------------------------------------------===//
// Strided iteration
//===----------------------------------------------------------------------===//

/// Walks a multi-index over `sizes` in row-major order while keeping the
/// matching offsets into two strided buffers up to date incrementally (no
/// per-element multiplications).
class StridedWalk {
public:
  StridedWalk(llvm::ArrayRef<int64_t> sizes, llvm::ArrayRef<int64_t> stridesA,
              llvm::ArrayRef<int64_t> stridesB)
      : sizes(sizes), stridesA(stridesA), stridesB(stridesB),
        index(sizes.size(), 0) {}

  int64_t offsetA() const { return offA; }
  int64_t offsetB() const { return offB; }

  /// Moves to the next multi-index; false once every one was visited.
  bool next() {
    for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
      if (++index[d] < sizes[d]) {
        offA += stridesA[d];
        offB += stridesB[d];
        return true;
      }
      offA -= (sizes[d] - 1) * stridesA[d];
      offB -= (sizes[d] - 1) * stridesB[d];
      index[d] = 0;
    }
    return false;
  }

private:
  llvm::SmallVector<int64_t, 6> sizes, stridesA, stridesB, index;
  int64_t offA = 0, offB = 0;
};

/// Row-major strides of `shape`.
llvm::SmallVector<int64_t> rowMajorStrides(llvm::ArrayRef<int64_t> shape);

/// Product of `shape` (the caller knows it does not overflow).
int64_t productOf(llvm::ArrayRef<int64_t> shape);

//===----------------------------------------------------------------------===//
// Raw kernels
//===----------------------------------------------------------------------===//

/// out = transpose(in), where out dim i is in dim perm[i].
void transposeKernel(const float *in, llvm::ArrayRef<int64_t> inShape,
                     llvm::ArrayRef<int64_t> perm, float *out);

/// out[b] = lhs[b] * rhs[b] for `batch` matrices of m x k and k x n stored
/// row-major, or, when `lhsKMajor`/`rhsNMajor`, stored as k x m / n x k
/// row-major (i.e. transposed).
void batchedMatmulKernel(const float *lhs, const float *rhs, float *out,
                         int64_t batch, int64_t m, int64_t k, int64_t n,
                         bool lhsKMajor, bool rhsNMajor);

//===----------------------------------------------------------------------===//
// Kernel models (KernelOpInterface), one attach function per op family
//===----------------------------------------------------------------------===//

/// The defaults of a kernel model: the result is allocated uninitialized,
/// never relabels the operand and updates none in place. `Model` hides what it
/// changes.
template <typename Model, typename OpT>
struct KernelModel : KernelOpInterface::ExternalModel<Model, OpT> {
  bool accumulatesIntoZeros(mlir::Operation *) const { return false; }
  bool canRelabelOperand(mlir::Operation *, const Tensor &) const {
    return false;
  }
  int64_t updatesOperandInPlace(mlir::Operation *) const { return -1; }
};

/// The dtype a kernel computes `value`'s elements in (a verified, executable
/// tensor type): its own, or f32 for bf16 and f16, which evaluateTensorOp
/// widens before and rounds after the kernel.
DType dtypeOf(mlir::Value value);

void attachElementwiseKernels(mlir::MLIRContext *ctx);
void attachContractionKernels(mlir::MLIRContext *ctx);
void attachReductionKernels(mlir::MLIRContext *ctx);
void attachLayoutKernels(mlir::MLIRContext *ctx);
void attachSliceKernels(mlir::MLIRContext *ctx);
void attachConstantKernel(mlir::MLIRContext *ctx);
void attachElementTypeKernels(mlir::MLIRContext *ctx);
void attachIndexingKernels(mlir::MLIRContext *ctx);

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// Topologies of the meshes a run has used, built once per mesh op.
using MeshTopologyCache = llvm::DenseMap<mlir::Operation *, MeshTopology>;

/// Runs collective `op` on this device's `input` through `communicator`
/// (which may be null: that is reported as an error). Checks the op's
/// attributes against the mesh and the communicator's answer against the
/// result type.
mlir::FailureOr<Tensor> evaluateCollective(mlir::Operation *op,
                                           const Tensor &input,
                                           Communicator *communicator,
                                           MeshTopologyCache &meshes);

/// all_reduce and reduce_scatter can be started now and waited for later
/// (Communicator::startAllReduce).
bool canStartCollective(mlir::Operation *op);
/// Starts such a collective on this device's `input` (handed over), after
/// evaluateCollective's checks.
mlir::FailureOr<std::unique_ptr<PendingCollective>>
startCollective(mlir::Operation *op, Tensor input, Communicator *communicator,
                MeshTopologyCache &meshes);
/// Waits for a collective startCollective started on `device`, and checks
/// its result as evaluateCollective does.
mlir::FailureOr<Tensor> finishCollective(mlir::Operation *op, int64_t device,
                                         PendingCollective &pending);

} // namespace shardc::detail

#endif // SHARDC_LIB_INTERPRETER_KERNELIMPL_H
